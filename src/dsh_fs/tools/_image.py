"""Images `read` returns (SPEC §10): PNG, JPEG, GIF and WebP, known by their content.

A file is an image when its signature *and* its header parse: the fixed header from the
first `HEAD_BYTES` bytes (`sniff`, enough to refuse a huge file without reading it), then,
for a file within the size cap, the whole header on the bytes themselves (`parses`: a JPEG's
segments up to its frame header). Anything else is binary, as before. Pure: no I/O.
"""

from __future__ import annotations

import struct
import zlib
from typing import Final

__all__ = ["HEAD_BYTES", "IMAGE_FORMATS", "MAX_IMAGE_BYTES", "parses", "sniff"]

HEAD_BYTES: Final = 64
"""Bytes read from the start of a file to recognise an image."""

MAX_IMAGE_BYTES: Final = 5 * 1024 * 1024
"""The largest image `read` returns by default (5 MiB)."""

IMAGE_FORMATS: Final = ("image/png", "image/jpeg", "image/gif", "image/webp")
"""The media types `read` recognises."""

_PNG: Final = b"\x89PNG\r\n\x1a\n"
_PNG_DEPTHS: Final = {0: {1, 2, 4, 8, 16}, 2: {8, 16}, 3: {1, 2, 4, 8}, 4: {8, 16}, 6: {8, 16}}
"""Bit depths allowed per PNG colour type."""
_JPEG_FRAMES: Final = frozenset({*range(0xC0, 0xC4), *range(0xC5, 0xC8), *range(0xC9, 0xCC)}) | {
    0xCD,
    0xCE,
    0xCF,
}
"""SOFn markers (a frame header: the image's size)."""
_JPEG_STANDALONE: Final = frozenset({0x01, *range(0xD0, 0xD8)})
"""Markers without a length (TEM, RSTn)."""


def sniff(head: bytes) -> str | None:
    """The media type of the image whose first bytes are `head` (at least `HEAD_BYTES` of
    them, or the whole file), when its signature and its fixed header parse; else None."""
    if head.startswith(_PNG):
        return "image/png" if _png_header(head) else None
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif" if _gif_header(head) else None
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp" if _webp_header(head) else None
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg" if _jpeg_first_segment(head) else None
    return None


def parses(mime_type: str, data: bytes) -> bool:
    """Whether the whole file `data`, `sniff`ed as `mime_type`, has a header that parses
    (a JPEG: its segments up to a frame header with a non-zero size)."""
    if mime_type == "image/jpeg":
        return _jpeg_frame(data)
    return sniff(data[:HEAD_BYTES]) == mime_type


def _png_header(head: bytes) -> bool:
    """The IHDR chunk: first, 13 bytes, a non-zero size, valid depth and type, its CRC."""
    if len(head) < 33 or head[8:16] != b"\x00\x00\x00\x0dIHDR":
        return False
    width, height, depth, colour, compression, filtering, interlace = struct.unpack(
        ">IIBBBBB", head[16:29]
    )
    (crc,) = struct.unpack(">I", head[29:33])
    return (
        0 < width < 2**31
        and 0 < height < 2**31
        and depth in _PNG_DEPTHS.get(colour, ())
        and compression == 0
        and filtering == 0
        and interlace in (0, 1)
        and zlib.crc32(head[12:29]) == crc
    )


def _gif_header(head: bytes) -> bool:
    """The logical screen descriptor: a non-zero width and height."""
    if len(head) < 13:
        return False
    width, height = struct.unpack("<HH", head[6:10])
    return bool(width > 0 and height > 0)


def _webp_header(head: bytes) -> bool:
    """The first chunk (VP8, VP8L or VP8X) and the size it states."""
    if len(head) < 30:
        return False
    (riff_size,) = struct.unpack("<I", head[4:8])
    kind = head[12:16]
    if riff_size < 22:
        return False
    if kind == b"VP8 ":
        width, height = struct.unpack("<HH", head[26:30])
        return head[23:26] == b"\x9d\x01\x2a" and width & 0x3FFF > 0 and height & 0x3FFF > 0
    if kind == b"VP8L":
        return head[20] == 0x2F
    if kind == b"VP8X":
        return head[21:24] == b"\x00\x00\x00"
    return False


def _jpeg_first_segment(head: bytes) -> bool:
    """After SOI, a marker with a length (an APPn, a table, a frame header …)."""
    if len(head) < 6:
        return False
    marker = head[3]
    (length,) = struct.unpack(">H", head[4:6])
    return marker not in _JPEG_STANDALONE and marker not in (0x00, 0xD8, 0xD9, 0xFF) and length >= 2


def _jpeg_frame(data: bytes) -> bool:
    """The segments from SOI on, each marker and length in place, up to a frame header
    (SOFn) that gives a non-zero width and height."""
    position = 2
    while position + 4 <= len(data):
        if data[position] != 0xFF:
            return False
        marker = data[position + 1]
        if marker == 0xFF:  # fill bytes before a marker
            position += 1
            continue
        if marker in _JPEG_STANDALONE:
            position += 2
            continue
        if marker in (0xD8, 0xD9, 0xDA, 0x00):
            return False  # image data or the end before any frame header
        (length,) = struct.unpack(">H", data[position + 2 : position + 4])
        if length < 2:
            return False
        if marker in _JPEG_FRAMES:
            if length < 8 or position + 9 > len(data):
                return False
            height, width = struct.unpack(">HH", data[position + 5 : position + 9])
            return bool(height > 0 and width > 0)
        position += 2 + length
    return False
