"""The literal edit (SPEC §3) done on the UTF-8 bytes, for the cases where that is the same
edit byte for byte; everything else goes to `apply_edit` on the text.

Why bytes: a provider holds the file's bytes anyway. Matching them directly skips decoding
the file into a `str` (up to 4 bytes a character) and encoding the result back, and the
result is mostly views of the bytes read. UTF-8 makes it exact: the encoding of a valid
needle can only match a valid haystack at character boundaries, so byte matches are the
text matches, in the same order.
"""

from __future__ import annotations

from ._encoded import Buffer, EncodedText
from ._types import FsEditRequest

__all__ = ["apply_edit_encoded"]

_BOM = b"\xef\xbb\xbf"


def apply_edit_encoded(
    data: bytes | bytearray, edit: FsEditRequest
) -> tuple[EncodedText, int] | None:
    """`apply_edit` on the encoding of a text: the new content and the number of
    replacements, or None when the text path must decide.

    None for: no match or an ambiguous one (so the error, and whatever it explains, is the
    text path's), an `old_string` spanning a line break in a file with CRLF endings (the
    text path's line-ending-tolerant match), an empty or unencodable string. `data` must be
    valid UTF-8 (the caller checked it as text). The result's pieces are views of `data`
    and the encoded replacement.
    """
    start = 3 if data.startswith(_BOM) else 0
    old = edit.old_string.replace("\r\n", "\n")
    new = edit.new_string.replace("\r\n", "\n")
    # One-byte search first: a CR is rare, and finding it is a memchr.
    if data.find(b"\r", start) != -1 and data.find(b"\r\n", start) != -1:
        if "\n" in old or "\r" in old:
            return None
        crlf = data.count(b"\r\n", start)
        if crlf > data.count(b"\n", start) - crlf:
            new = new.replace("\n", "\r\n")
    try:
        needle, replacement = old.encode("utf-8"), new.encode("utf-8")
    except UnicodeEncodeError:
        return None
    if not needle:
        return None
    first = data.find(needle, start)
    if first == -1:
        return None
    matches = [first]
    following = data.find(needle, first + len(needle))
    if following != -1:
        if not edit.replace_all:
            return None
        while following != -1:
            matches.append(following)
            following = data.find(needle, following + len(needle))
    view = memoryview(data)
    parts: list[Buffer] = []
    kept = 0
    for match in matches:
        parts += (view[kept:match], replacement)
        kept = match + len(needle)
    parts.append(view[kept:])
    return EncodedText(parts), len(matches)
