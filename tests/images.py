"""Small images made byte by byte (no imaging library): a real PNG (zlib-compressed pixels,
CRCs), GIF, JPEG header and lossless WebP, for the image reads (SPEC §10)."""

from __future__ import annotations

import struct
import zlib


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(width: int = 2, height: int = 2, padding: int = 0) -> bytes:
    """An RGB PNG of `width` x `height` red pixels; `padding` bytes of a private ancillary
    chunk make it as large as a test needs."""
    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    extra = _chunk(b"ruBy", b"\x00" * padding) if padding else b""
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", ihdr)
        + extra
        + _chunk(b"IDAT", zlib.compress(rows))
        + _chunk(b"IEND", b"")
    )


GIF = (
    b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\x00\x00\x00\x00\x00!\xf9\x04\x01\x00\x00\x00\x00"
    b",\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;"
)
"""A 1x1 red GIF."""

WEBP = (
    b"RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f\x00\x00\x00\x10\x07\x10\x11\x11\x88"
    b"\x88\xfe\x07\x00"
)
"""A 1x1 lossless WebP."""


def jpeg(exif: int = 0) -> bytes:
    """A baseline JPEG's segments (JFIF, an `exif`-byte APP1, a quantization table, a 3x2
    frame header, a Huffman table, a scan) and its end."""
    jfif = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    app1 = b"\xff\xe1" + struct.pack(">H", 2 + exif) + b"\x00" * exif if exif else b""
    dqt = b"\xff\xdb" + struct.pack(">H", 67) + b"\x00" + bytes(range(1, 65))
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, 2, 3, 1) + b"\x01\x11\x00"
    dht = b"\xff\xc4" + struct.pack(">H", 20) + b"\x00" + b"\x01" + b"\x00" * 15 + b"\x00"
    sos = b"\xff\xda" + struct.pack(">HB", 8, 1) + b"\x01\x00\x00\x3f\x00" + b"\x00\x00"
    return b"\xff\xd8" + jfif + app1 + dqt + sof + dht + sos + b"\xff\xd9"
