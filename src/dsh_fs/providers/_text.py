"""Strict text for every provider: one definition of "text", with the exact messages.

A file is text when it has no NUL byte and decodes as UTF-8 (a BOM is kept as U+FEFF), or
(SPEC §12) when a UTF-16 BOM, a rule or a fallback names a codec that decodes the whole
file into text without U+0000 whose encoding reproduces the file's bytes exactly.
"""

from __future__ import annotations

import codecs
import functools
import sys
import threading
from collections import OrderedDict
from typing import Literal

from dsh_fs.errors import FsError
from dsh_fs.fs import UTF8, EncodedText, FsEncoding, FsVersion, bom_encoding, messages, proven_text

__all__ = [
    "CHECK_SLICE",
    "ChunkDecoder",
    "CodecContest",
    "FallbackBook",
    "ascii_safe",
    "check_text",
    "check_usable_path",
    "decode_file",
    "decode_or_none",
    "decode_text",
    "decodes",
    "encode_as",
    "encode_text",
    "encode_text_parts",
    "round_trip",
    "splice",
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


def decode_text(data: bytes | bytearray, verb: messages.Verb, display: str) -> str:
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


CHECK_SLICE = 256 * 1024
"""Bytes `check_text` decodes at a time (each slice's text is dropped at once). 256 KiB
slices checked the 1 MB bench file in ~0.44 ms of CPU, 1 MiB ones in ~1.29 ms: a slice's
text then no longer fits the CPU's caches (issue 44)."""


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

    @property
    def held(self) -> bytes:
        """The bytes of an unfinished character the decoder holds."""
        held: bytes = self._decoder.getstate()[0]
        return held

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


def round_trip(data: bytes | bytearray, codec: str) -> str | None:
    """The text of `data` in `codec` if that is the proof of SPEC §12 (it decodes strictly,
    has no U+0000, and encodes back to exactly `data`), else None. `codec` is not UTF-8."""
    return proven_text(data, codec)


_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
"""What a UTF-16 file's byte order mark begins with (`bom_encoding` names it)."""


def decode_file(
    data: bytes | bytearray,
    codec: str | None,
    fallback: tuple[str, ...],
    verb: messages.Verb,
    display: str,
) -> tuple[str, FsEncoding]:
    """The text of a whole file and its encoding: a UTF-16 BOM with valid content first,
    then the rule's `codec`, then UTF-8 (a UTF-8 BOM kept as U+FEFF), then each `fallback`
    codec (only for a file no rule covers) that passes the round-trip proof.

    Raises:
        FsError: `FS_NOT_TEXT` as `decode_text` words it (binary, invalid UTF-8) when no
            candidate passes.
    """
    # Only a UTF-16 BOM is tried first (a UTF-8 one is UTF-8's business below): most files
    # start with neither mark, and are not looked at twice for it.
    bom = bom_encoding(data) if data.startswith(_UTF16_BOMS) else None
    if bom is not None and not bom.utf8:
        text = round_trip(data, bom.codec)
        if text is not None:
            return text, bom
    if codec is not None and codec not in ("utf-8", "utf-8-sig"):
        text = round_trip(data, codec)
        if text is None:
            raise _refusal(data, verb, display)
        return text, FsEncoding(codec=codec)
    try:
        text = decode_text(data, verb, display)
    except FsError:
        for candidate in fallback if codec is None else ():
            text_or_none = round_trip(data, candidate)
            if text_or_none is not None:
                return text_or_none, FsEncoding(codec=candidate)
        raise
    return text, (FsEncoding(bom=True) if text.startswith("\ufeff") else UTF8)


def _refusal(data: bytes | bytearray, verb: messages.Verb, display: str) -> FsError:
    """`FS_NOT_TEXT` in today's words for content no codec proved."""
    if b"\0" in data:
        return messages.binary_file(verb, display)
    return messages.invalid_utf8(verb, display)


ENCODE_PIECE_CHARS = 32 * 1024
"""Characters `encode_text_parts` encodes at a time (at most 128 KiB of UTF-8)."""


def encode_text_parts(text: str, verb: messages.Verb, display: str) -> EncodedText:
    """`text` as UTF-8, in pieces when it is large and not ASCII (the same bytes as
    `encode_text`'s, a character is never split: a `str` slices at code points).

    Why: CPython encodes non-ASCII text into a buffer sized for its widest character (3 MB
    for 1 M characters of a BMP text), freshly mapped and faulted in, then shrunk; the
    pieces come from the allocator's reused memory and are written with one `writev`. A
    1 MB write of the bench's UCS-2 source: 2.34 → 1.92 ms in a worker thread (mkstemp,
    write, fsync, rename; ``/tmp`` probe, 200 alternating rounds); ASCII text is encoded
    whole (a copy into a buffer of the exact size: pieces cost 3-4 % more).

    Raises:
        FsError: `FS_NOT_TEXT` for text that has no UTF-8 form (a lone surrogate).
    """
    if text.isascii() or len(text) <= 2 * ENCODE_PIECE_CHARS:
        return EncodedText((encode_text(text, verb, display),), text=text)
    step = ENCODE_PIECE_CHARS
    try:
        parts = [text[at : at + step].encode("utf-8") for at in range(0, len(text), step)]
    except UnicodeEncodeError as exc:
        raise messages.invalid_utf8(verb, display) from exc
    return EncodedText(parts, text=text)


def encode_as(
    text: str,
    encoding: FsEncoding,
    verb: Literal["edit", "write"],
    display: str,
    where: str,
) -> bytes:
    """`text` in `encoding`'s codec (a BOM only if `text` starts with U+FEFF).

    Raises:
        FsError: `FS_NOT_ENCODABLE` naming the first character the codec cannot encode
            (`where`: ``new_string`` or ``content``); `FS_NOT_TEXT` for a lone surrogate
            in UTF-8 (as `encode_text`).
    """
    if encoding.utf8:
        return encode_text(text, verb, display)
    try:
        return text.encode(encoding.codec)
    except UnicodeEncodeError as exc:
        char = exc.object[exc.start]
        raise messages.not_encodable(verb, display, encoding.codec, char, where) from None


def splice(
    data: bytes | bytearray,
    encoding: FsEncoding,
    before: str,
    after: str,
    verb: Literal["edit", "write"],
    display: str,
    where: str,
) -> bytes:
    """The bytes of `after`, for a file whose bytes `data` are `before` in `encoding`: the
    bytes of the common prefix and suffix of the two texts are `data`'s own, and only the
    span between them is encoded. (`data` passed the round-trip proof, so the encoding of
    the prefix tells where the span starts in `data`.)

    Raises:
        FsError: `FS_NOT_ENCODABLE` when the span has a character the codec cannot encode.
    """
    limit = min(len(before), len(after))
    head = _common(before, after, limit, 0, 0)
    tail = _common(before, after, limit - head, len(before), len(after), -1)
    middle = encode_as(after[head : len(after) - tail], encoding, verb, display, where)
    start = len(before[:head].encode(encoding.codec))
    end = len(data) - len(before[len(before) - tail :].encode(encoding.codec))
    return bytes(data[:start]) + middle + bytes(data[end:])


_STEP = 64 * 1024


def _common(a: str, b: str, limit: int, a_at: int, b_at: int, direction: int = 1) -> int:
    """How many characters `a` and `b` share from `a_at`/`b_at` on (`direction` 1: forward
    from those offsets; -1: backward from those ends), at most `limit`: compared a slice at
    a time, then character by character inside the first slice that differs."""
    done = 0
    while done < limit:
        step = min(_STEP, limit - done)
        if direction == 1:
            x = a[a_at + done : a_at + done + step]
            y = b[b_at + done : b_at + done + step]
        else:
            x = a[a_at - done - step : a_at - done][::-1]
            y = b[b_at - done - step : b_at - done][::-1]
        if x == y:
            done += step
            continue
        index = 0
        while x[index] == y[index]:
            index += 1
        return done + index
    return done


@functools.lru_cache(maxsize=64)
def ascii_safe(codec: str) -> bool:
    """Whether `codec` maps every ASCII byte to itself both ways (`_ascii_safe`), cached:
    ASCII text a stream returned as UTF-8 is that codec's text of the same bytes too."""
    return _ascii_safe(codec)


def _ascii_safe(codec: str) -> bool:
    """Whether `codec` maps every ASCII byte to itself both ways (so an ASCII chunk is its
    own text and proof)."""
    ascii_bytes = bytes(range(128))
    try:
        return ascii_bytes.decode(codec) == ascii_bytes.decode("ascii") and (
            ascii_bytes.decode("ascii").encode(codec) == ascii_bytes
        )
    except (UnicodeDecodeError, UnicodeEncodeError):
        return False


def _bijective_table(codec: str) -> str | None:
    """The decoding table of a single-byte (charmap) `codec` in which every defined byte
    decodes to its own character and encodes back to itself, else None.

    For such a codec a strict decode is already the round-trip proof: each byte decodes on
    its own, to a character no other byte has, whose encoding is that byte. Then the
    encoding back, the costliest step of the proof (a third of the time of reading a
    cp1252 file went to it), is not needed.
    """
    info = codecs.lookup(codec)
    module = sys.modules.get(type(getattr(info.decode, "__self__", None)).__module__)
    table = getattr(module, "decoding_table", None)
    if not isinstance(table, str) or len(table) != 256:
        return None
    defined = [(byte, char) for byte, char in enumerate(table) if char != "\ufffe"]
    if len({char for _, char in defined}) != len(defined):
        return None
    try:
        if any(char.encode(codec) != bytes([byte]) for byte, char in defined):
            return None
    except UnicodeEncodeError:
        return None
    return table


class CodecDecoder:
    """Decodes a stream in a codec other than UTF-8 chunk by chunk, proving the round trip
    as it goes (SPEC §12): each chunk's text, encoded again, must be exactly the next bytes
    of the stream; at the end no byte may be left over. A U+0000 is a binary file.

    `consumed` counts the bytes whose text was returned, so a chunk's text starts at
    the stream's first offset plus the `consumed` before it.
    """

    __slots__ = (
        "_ascii",
        "_codec",
        "_decoder",
        "_display",
        "_pending",
        "_table",
        "_trusted",
        "consumed",
    )

    def __init__(self, codec: str, display: str) -> None:
        self._codec = codec
        self._decoder = codecs.getincrementaldecoder(codec)("strict")
        self._display = display
        self._ascii = _ascii_safe(codec)
        # Latin-1 maps every byte to one character and back: there is nothing to prove.
        self._trusted = codec == "iso8859-1"
        self._table = None if self._trusted else _bijective_table(codec)
        self._pending = b""  # bytes read whose text the decoder still holds
        self.consumed = 0

    def decode(self, data: bytes | bytearray | memoryview, final: bool = False) -> str:
        """The text of `data` (plus any character completed by it); `final` at EOF.

        Raises:
            FsError: `FS_NOT_TEXT` (U+0000, or bytes that do not round-trip).
        """
        if self._table is not None:
            # A single-byte codec whose table is a bijection: decoding is the proof.
            if memoryview(data).tobytes().find(b"\0") != -1:
                raise messages.binary_file("read", self._display)
            try:
                text, used = codecs.charmap_decode(data, "strict", self._table)
            except UnicodeDecodeError as exc:
                raise messages.invalid_utf8("read", self._display) from exc
            self.consumed += used
            return text
        if not self._pending and self._ascii and (chunk := bytes(data)).isascii():
            if b"\0" in chunk:
                raise messages.binary_file("read", self._display)
            self.consumed += len(chunk)
            return chunk.decode("ascii")  # the decoder holds nothing: no state to carry
        try:
            text = self._decoder.decode(data, final)
        except UnicodeDecodeError as exc:
            raise messages.invalid_utf8("read", self._display) from exc
        if "\0" in text:
            raise messages.binary_file("read", self._display)
        if self._trusted:
            self.consumed += len(text)
            return text
        try:
            encoded = text.encode(self._codec)
        except UnicodeEncodeError as exc:
            raise messages.invalid_utf8("read", self._display) from exc
        have = self._pending + bytes(data) if self._pending else bytes(data)
        if not have.startswith(encoded) or (final and len(have) != len(encoded)):
            raise messages.invalid_utf8("read", self._display)
        self._pending = have[len(encoded) :]
        self.consumed += len(encoded)
        return text


def decodes(codec: str, data: bytes | bytearray | memoryview, final: bool) -> bool:
    """Whether `data`, the bytes from a point where the codec holds no state, decodes in
    `codec` as far as it goes."""
    try:
        CodecDecoder(codec, "").decode(data, final)
    except FsError:
        return False
    return True


class CodecContest:
    """The codecs still in the running for a streamed file (SPEC §12: UTF-8 if the whole
    file is UTF-8, else the first fallback that proves it whole), fed the same bytes in
    order; each that fails drops out. The text is dropped: only the verdict is kept, so a
    look ahead over the rest of a file runs in one chunk's memory."""

    __slots__ = ("_decoders",)

    def __init__(self, utf8: bool, candidates: list[str], display: str) -> None:
        self._decoders: dict[str, ChunkDecoder | CodecDecoder] = {}
        if utf8:
            self._decoders["utf-8"] = ChunkDecoder("read", display)
        for codec in candidates:
            self._decoders[codec] = CodecDecoder(codec, display)

    def feed(self, data: bytes, final: bool) -> None:
        """`data`, the next bytes of the file (`final` at its end), to every codec left."""
        for codec, decoder in list(self._decoders.items()):
            try:
                decoder.decode(data, final)
            except FsError:
                del self._decoders[codec]

    @property
    def open(self) -> bool:
        """Whether reading on could still change the verdict (two codecs or more left)."""
        return len(self._decoders) > 1

    def winner(self) -> str | None:
        """The first codec left, in the order given (UTF-8 first); None: every one failed."""
        return next(iter(self._decoders), None)


class FallbackBook:
    """The fallback codec a scan settled on per version (bounded), so a stream resumed
    past the file's start decodes in the codec the scan proved."""

    def __init__(self, size: int = 256) -> None:
        self._size = size
        self._codecs: OrderedDict[FsVersion, str] = OrderedDict()
        self._lock = threading.Lock()

    def remember(self, version: FsVersion, codec: str) -> None:
        with self._lock:
            self._codecs[version] = codec
            self._codecs.move_to_end(version)
            while len(self._codecs) > self._size:
                self._codecs.popitem(last=False)

    def known(self, version: FsVersion) -> str | None:
        with self._lock:
            return self._codecs.get(version)
