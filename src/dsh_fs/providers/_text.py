"""Strict UTF-8 for every provider: one definition of "text", with the exact messages.

A file is text when it has no NUL byte and decodes as UTF-8 (a BOM is kept as U+FEFF).
"""

from __future__ import annotations

import codecs

from dsh_fs.fs import messages

__all__ = [
    "CHECK_SLICE",
    "ChunkDecoder",
    "check_text",
    "check_usable_path",
    "decode_or_none",
    "decode_text",
    "encode_text",
]


def check_usable_path(path: str) -> None:
    """Refuse a path no file can have: empty, with a NUL byte, or with a lone surrogate.

    Raises:
        FsError: `FS_NOT_FOUND` (``cannot resolve …``).
    """
    if not path or "\0" in path or (not path.isascii() and _has_lone_surrogate(path)):
        raise messages.invalid_path(path)


def _has_lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def decode_text(data: bytes, verb: messages.Verb, display: str) -> str:
    """`data` as text.

    Raises:
        FsError: `FS_NOT_TEXT` (``binary file`` or ``invalid UTF-8 text``).
    """
    if b"\0" in data:
        raise messages.binary_file(verb, display)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise messages.invalid_utf8(verb, display) from exc


CHECK_SLICE = 1024 * 1024
"""Bytes `check_text` decodes at a time (each slice's text is dropped at once)."""


def check_text(data: bytes | bytearray, verb: messages.Verb, display: str) -> None:
    """Check that `data` is text, as `decode_text` would, without holding its `str`.

    Raises:
        FsError: `FS_NOT_TEXT` (``binary file`` or ``invalid UTF-8 text``).
    """
    if b"\0" in data:
        raise messages.binary_file(verb, display)
    if data.isascii():
        return
    view = memoryview(data)
    pos, size = 0, len(data)
    try:
        while pos < size:
            end = pos + CHECK_SLICE
            _, used = codecs.utf_8_decode(view[pos:end], "strict", end >= size)
            pos += used
    except UnicodeDecodeError as exc:
        raise messages.invalid_utf8(verb, display) from exc


def decode_or_none(data: bytes | bytearray) -> str | None:
    """`data` as text, or None when it is not text (a write's `before` of a binary file)."""
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def encode_text(text: str, verb: messages.Verb, display: str) -> bytes:
    """`text` as UTF-8 bytes.

    Raises:
        FsError: `FS_NOT_TEXT` for text that has no UTF-8 form (a lone surrogate).
    """
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise messages.invalid_utf8(verb, display) from exc


class ChunkDecoder:
    """Decodes a byte stream chunk by chunk with the semantics of `decode_text`.

    A multi-byte character split across chunks decodes correctly; a NUL or an invalid
    sequence raises as soon as its chunk arrives.
    """

    __slots__ = ("_decoder", "_display", "_verb")

    def __init__(self, verb: messages.Verb, display: str) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")("strict")
        self._verb: messages.Verb = verb
        self._display = display

    @property
    def pending(self) -> int:
        """How many bytes of an unfinished character the decoder holds."""
        return len(self._decoder.getstate()[0])

    def decode(self, data: bytes, final: bool = False) -> str:
        """The text of `data` (plus any character completed by it); `final` at EOF.

        Raises:
            FsError: `FS_NOT_TEXT`.
        """
        if b"\0" in data:
            raise messages.binary_file(self._verb, self._display)
        try:
            return self._decoder.decode(data, final)
        except UnicodeDecodeError as exc:
            raise messages.invalid_utf8(self._verb, self._display) from exc
