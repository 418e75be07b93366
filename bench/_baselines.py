"""The minimal raw-Python code doing each workload's job: what dsh-fs is measured against."""

from __future__ import annotations

import codecs
import os
from pathlib import Path

__all__ = ["count_matches", "edit_line", "read_small", "read_window", "replace_file"]

_sync_directory = False
"""Set by ``impl: baseline+dirsync``: also fsync the directory after `os.replace` (what
SPEC §3 requires of dsh-fs, so the rename itself survives a power loss)."""

_CHUNK = 1 << 20


def read_window(path: Path, offset: int, limit: int = 2000) -> tuple[list[str], int]:
    """Read the bytes, count newlines, validate UTF-8 strictly, decode only the window.

    Returns the formatted window lines and the exact total line count.
    """
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    first, last = offset, offset + limit - 1
    line_no = 1  # the line the next byte belongs to
    pending = b""  # the unfinished current line, kept only while it is inside the window
    window: list[bytes] = []
    ends_with_newline = True
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            decoder.decode(chunk)
            newlines = chunk.count(b"\n")
            if line_no + newlines >= first and line_no <= last:
                parts = (pending + chunk).split(b"\n")
                pending = parts.pop()
                window.extend(part for i, part in enumerate(parts) if first <= line_no + i <= last)
            else:
                pending = b""
            line_no += newlines
            ends_with_newline = chunk.endswith(b"\n")
        decoder.decode(b"", final=True)
    total = line_no - 1 if ends_with_newline else line_no
    if pending and first <= line_no <= last:
        window.append(pending)
    lines = [f"{first + i}: {b.decode('utf-8').rstrip(chr(13))}" for i, b in enumerate(window)]
    return lines, total


def edit_line(path: Path, old: str, new: str) -> None:
    """Read, one `str.replace`, write a temp file in the same directory, fsync, `os.replace`."""
    text = path.read_text(encoding="utf-8")
    if text.count(old) != 1:
        raise ValueError("old must occur exactly once")
    _publish(path, text.replace(old, new, 1))


def count_matches(path: Path, old: str) -> int:
    """Read and count: what a raw edit does before it can say "not found"."""
    return path.read_text(encoding="utf-8").count(old)


def replace_file(path: Path, content: str) -> None:
    """Write a temp file, fsync, `os.replace`."""
    _publish(path, content)


def read_small(path: Path) -> str:
    """Open, read, split, format with line numbers."""
    with path.open(encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return "\n".join(f"{i}: {line}" for i, line in enumerate(lines, 1))


def _publish(path: Path, content: str) -> None:
    tmp = path.with_name(f".{path.name}.bench-tmp")
    with tmp.open("w", encoding="utf-8", newline="") as f:
        f.write(content)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    if _sync_directory:
        fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
