"""Finding the lines a regex matches in a byte stream, in bounded memory.

The pure engine's matcher: one RE2 search per matching line over whole blocks of lines (not
one call per line), a line kept only as its first `line_bytes` bytes, and a line longer than
`LONG_LINE` searched in overlapping windows instead of held whole (a match longer than
`OVERLAP` that straddles two windows of such a line can be missed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["LONG_LINE", "OVERLAP", "LineHit", "LineScanner"]

LONG_LINE = 8 << 20
"""A line longer than this is searched window by window."""

OVERLAP = 64 << 10
"""Bytes each window of a long line shares with the previous one."""


@dataclass(frozen=True, slots=True)
class LineHit:
    """One matching line."""

    number: int
    """1-based."""
    line: bytes
    """Its first bytes (terminator and a ``\\r`` before it removed)."""
    truncated: bool
    """Whether the line had more bytes than were kept."""


class LineScanner:
    """Feed a file's bytes in order; `hits` holds the first `keep` matching lines and
    `count` how many there are."""

    __slots__ = (
        "_carry",
        "_deferred",
        "_head",
        "_keep",
        "_line_bytes",
        "_long",
        "_matched",
        "_number",
        "_regex",
        "_tail",
        "count",
        "hits",
    )

    def __init__(self, regex: Any, line_bytes: int, keep: int) -> None:
        self._regex = regex
        self._line_bytes = line_bytes
        self._keep = keep
        self._carry = b""
        self._deferred: tuple[bytes, int] | None = None
        self._number = 0
        self._long = False
        self._head = b""
        self._tail = b""
        self._matched = False
        self.hits: list[LineHit] = []
        self.count = 0

    def feed(self, data: bytes) -> None:
        """The next bytes of the file."""
        if self._long:
            end = data.find(b"\n")
            if end < 0:
                self._window(data, final=False)
                return
            self._window(data[:end], final=True)
            data = data[end + 1 :]
        buffer = self._carry + data if self._carry else data
        last = buffer.rfind(b"\n")
        if last >= 0:
            self._block(buffer, last + 1)
            rest = buffer[last + 1 :]
        else:
            rest = buffer
        if len(rest) > LONG_LINE:
            self._carry = b""
            self._enter_long(rest)
        else:
            self._carry = rest

    def finish(self) -> None:
        """The file ended: its last line needs no terminator."""
        if self._long:
            self._window(b"", final=True)
        elif self._carry:
            carry, self._carry = self._carry, b""
            self._block(carry, len(carry))

    def _record(self, number: int, line: bytes) -> None:
        self.count += 1
        if len(self.hits) >= self._keep:
            return
        if line.endswith(b"\r"):
            line = line[:-1]
        truncated = len(line) > self._line_bytes
        self.hits.append(LineHit(number, line[: self._line_bytes], truncated))

    def _block(self, buffer: bytes, end: int) -> None:
        """Search the whole lines in ``buffer[:end]`` (the last may lack its ``\\n``)."""
        self._settle()
        regex, pos, counted, before = self._regex, 0, 0, self._number
        while pos < end:
            match = regex.search(buffer, pos, end)
            if match is None:
                break
            start = match.start()
            line_start = buffer.rfind(b"\n", 0, start) + 1
            if line_start >= end:
                break  # an empty match after the final newline: no line is there
            line_end = buffer.find(b"\n", start, end)
            if line_end < 0:
                line_end = end
            if match.end() > line_end and regex.search(buffer, line_start, line_end) is None:
                pos = line_end + 1  # it spanned lines; this line alone does not match
                continue
            before += buffer.count(b"\n", counted, line_start)
            counted = line_start
            self._record(before + 1, buffer[line_start:line_end])
            pos = line_end + 1
        # Counted only if another block follows: most files end here without a match.
        self._deferred = (buffer, end)

    def _settle(self) -> None:
        """Add the lines of the last searched block to the count."""
        if self._deferred is not None:
            buffer, end = self._deferred
            self._deferred = None
            self._number += buffer.count(b"\n", 0, end)
            if end and buffer[end - 1 : end] != b"\n":
                self._number += 1

    def _enter_long(self, start: bytes) -> None:
        self._settle()
        self._long = True
        self._head = start[: self._line_bytes + 1]
        self._matched = self._regex.search(start, 0, len(start) - 1) is not None
        self._tail = start[-(OVERLAP + 1) :]

    def _window(self, data: bytes, *, final: bool) -> None:
        if not self._matched:
            buffer = self._tail + data
            end = len(buffer) if final else len(buffer) - 1
            # From 1: the first byte was searched already and stays as context for `\b`.
            self._matched = self._regex.search(buffer, 1, end) is not None
            self._tail = buffer[-(OVERLAP + 1) :]
        if final:
            self._number += 1
            if self._matched:
                self._record(self._number, self._head)
            self._long, self._head, self._tail, self._matched = False, b"", b"", False
