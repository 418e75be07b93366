"""The minimal raw-Python code doing each workload's job: what dsh-fs is measured against.

The job is the contract's, so a ratio measures overhead and not a weaker job: a read
rejects binary (NUL) and invalid UTF-8 anywhere in the file, so its baseline checks the
whole file; a write or an edit must survive a power loss (SPEC §3), so its baseline fsyncs
the file and then the directory that the rename changed.

The write and edit baselines are issue 44's, the leanest a careful script does: `mkstemp`
in the same directory, write, `fsync`, `chmod` to the old mode, `os.replace`, `fsync` of
the directory; the edit reads the bytes, checks the match is unique, replaces it in the
bytes (no decode, no encode) and publishes the same way. `edit_line_text` and
`replace_file_fixed` are the bench's baselines before issue 44 (a decode and an encode of
the whole file, a fixed temporary name, no chmod), kept for the row that compares the two.
"""

from __future__ import annotations

import codecs
import os
import tempfile
from pathlib import Path

__all__ = [
    "count_matches",
    "edit_line",
    "edit_line_text",
    "read_small",
    "read_window",
    "replace_file",
    "replace_file_fixed",
]

_CHUNK = 1 << 20
MAX_BYTES = 51200
"""The read output cap (SPEC §6): lines past it are not formatted."""


def read_window(path: Path, offset: int, limit: int = 2000) -> tuple[list[str], int]:
    """Read the bytes, refuse a NUL, validate UTF-8 strictly, count newlines, decode and
    format only the window, up to the output cap.

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
            if b"\0" in chunk:
                raise ValueError("binary file")
            decoder.decode(chunk)
            newlines = chunk.count(b"\n")
            if line_no + newlines >= first and line_no <= last:
                parts = (pending + chunk).split(b"\n")
                pending = parts.pop()
                window.extend(parts[max(0, first - line_no) : max(0, last - line_no + 1)])
            else:
                pending = b""
            line_no += newlines
            ends_with_newline = chunk.endswith(b"\n")
        decoder.decode(b"", final=True)
    total = line_no - 1 if ends_with_newline else line_no
    if pending and first <= line_no <= last:
        window.append(pending)
    lines: list[str] = []
    used = 0
    for i, raw in enumerate(window):
        used += len(raw) + (1 if lines else 0)
        if used > MAX_BYTES:  # the output cap (bench lines are never long enough to cut)
            break
        lines.append(f"{first + i}: {raw.decode('utf-8').rstrip(chr(13))}")
    return lines, total


def edit_line(path: Path, old: str, new: str) -> None:
    """Read the bytes, check that `old` occurs exactly once, replace it in the bytes, publish
    durably (issue 44's edit baseline)."""
    with path.open("rb") as f:
        data = f.read()
    needle = old.encode("utf-8")
    if data.count(needle) != 1:
        raise ValueError("old must occur exactly once")
    _publish(path, data.replace(needle, new.encode("utf-8"), 1))


def edit_line_text(path: Path, old: str, new: str) -> None:
    """The bench's edit baseline before issue 44: decode strictly (no newline translation),
    one `str.replace`, encode, publish through a fixed temporary name."""
    text = path.read_bytes().decode("utf-8")
    if text.count(old) != 1:
        raise ValueError("old must occur exactly once")
    _publish_fixed(path, text.replace(old, new, 1).encode("utf-8"))


def count_matches(path: Path, old: str) -> int:
    """Read and count: what a raw edit does before it can say "not found"."""
    return path.read_text(encoding="utf-8").count(old)


def replace_file(path: Path, content: str) -> None:
    """Encode, publish durably (issue 44's write baseline)."""
    _publish(path, content.encode("utf-8"))


def replace_file_fixed(path: Path, content: str) -> None:
    """The bench's write baseline before issue 44: encode, publish through a fixed name."""
    _publish_fixed(path, content.encode("utf-8"))


def read_small(path: Path) -> str:
    """Open, read, split, format with line numbers."""
    with path.open(encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return "\n".join(f"{i}: {line}" for i, line in enumerate(lines, 1))


def _publish(path: Path, data: bytes) -> None:
    """`mkstemp` in the same directory, write, fsync, chmod to the old mode, `os.replace`,
    fsync the directory."""
    mode = os.stat(path).st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
        os.fchmod(fd, mode)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    _sync_directory(path.parent)


def _publish_fixed(path: Path, data: bytes) -> None:
    """Write a temp file of a fixed name in the same directory, fsync it, `os.replace`,
    fsync the directory."""
    tmp = path.with_name(f".{path.name}.bench-tmp")
    with tmp.open("wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    _sync_directory(path.parent)


def _sync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
