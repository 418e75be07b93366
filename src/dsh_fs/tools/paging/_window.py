"""Read windowing (SPEC §6): pick lines `offset..` out of a stream of text chunks, exactly.

Pure and incremental: `LineWindow.feed` takes decoded chunks in order, `finish` returns the
`Window`. Lines split on ``\\n`` with one trailing ``\\r`` stripped; a final line without a
newline counts; an empty file has 0 lines. The caps (lines, characters per line, UTF-8 bytes
of selected output) stop *keeping* lines, never counting them, so `total_lines` is exact.

Speed and memory are what make a gigabyte readable: a chunk that touches no line of the
window is only counted with `str.count`, and only chunks overlapping the window are split.
A line being kept holds at most ``max_line_chars + 1`` characters however long it is, so a
64 MiB line costs 2 KB. A leading U+FEFF (byte order mark) is not shown: it is not part of
line 1's text as the model would type it, and the edit tool keeps it untouched anyway.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "MAX_BYTES",
    "MAX_LINES",
    "MAX_LINE_CHARS",
    "TRUNCATION_SUFFIX",
    "LineWindow",
    "Window",
    "window_text",
    "window_whole",
]

MAX_LINES = 2000
"""Most lines one read returns (the default and maximum `limit`)."""
MAX_LINE_CHARS = 2000
"""Longest line text shown before it is truncated, in UTF-16 code units (upstream's
JavaScript string length: a character outside the BMP counts 2)."""
MAX_BYTES = 51200
"""Most UTF-8 bytes of selected line texts (plus one separator per line after the first)."""
TRUNCATION_SUFFIX = "... (line truncated to 2000 chars)"
"""Appended to a line cut at `MAX_LINE_CHARS`."""

_BOM = "\ufeff"


@dataclass(frozen=True, slots=True, kw_only=True)
class Window:
    """The lines a read selected, and what stopped it."""

    offset: int
    """Number of the first line asked for (1-based)."""
    lines: tuple[str, ...]
    """The selected lines' display texts, numbered from `offset`."""
    total_lines: int
    """How many lines the whole text has."""
    output_capped: bool
    """The byte cap stopped the window before `limit` lines or the end were reached."""

    @property
    def out_of_range(self) -> bool:
        """`offset` lies past the last line (offset 1 of an empty text is in range)."""
        return self.offset > self.total_lines and not (self.offset == 1 and self.total_lines == 0)


class LineWindow:
    """Incremental windowing over text chunks; feed chunks in order, then `finish` once."""

    __slots__ = (
        "_bytes",
        "_capped",
        "_count_past_window",
        "_done",
        "_limit",
        "_line",
        "_lines",
        "_max_bytes",
        "_max_line_chars",
        "_offset",
        "_overflow",
        "_piece",
        "_piece_len",
        "_started",
        "_suffix",
        "_tail_open",
    )

    def __init__(
        self,
        offset: int = 1,
        limit: int = MAX_LINES,
        *,
        max_line_chars: int = MAX_LINE_CHARS,
        max_bytes: int = MAX_BYTES,
    ) -> None:
        """Select up to `limit` lines starting at line `offset` (both at least 1).

        `max_line_chars` and `max_bytes` exist for tests; the tools use the SPEC values.
        """
        if offset < 1 or limit < 1:
            raise ValueError("offset and limit must be at least 1")
        self._offset = offset
        self._limit = limit
        self._max_line_chars = max_line_chars
        self._max_bytes = max_bytes
        self._suffix = f"... (line truncated to {max_line_chars} chars)"
        self._line = 1  # number of the line the next character belongs to
        self._tail_open = False  # the current line has characters (the text does not end in \n)
        self._started = False
        self._done = False  # no further line will be kept
        self._capped = False
        self._lines: list[str] = []
        self._bytes = 0
        # The current line, while it is inside the window: its first characters only.
        self._piece: list[str] = []
        self._piece_len = 0
        self._overflow = False
        self._count_past_window = True

    @classmethod
    def resumed(
        cls,
        offset: int,
        limit: int,
        line: int,
        *,
        max_line_chars: int = MAX_LINE_CHARS,
        max_bytes: int = MAX_BYTES,
    ) -> LineWindow:
        """A window fed text from inside a file: its first character belongs to line `line`.

        `line` is at most `offset`; when equal, the text must start at that line's first
        character. No byte order mark is looked for (only a file's first byte can be one).
        Once `done`, it stops counting lines: `finish` it with the total from an index.
        """
        if line > offset:
            raise ValueError("a resumed window starts at or before its first line")
        window = cls(offset, limit, max_line_chars=max_line_chars, max_bytes=max_bytes)
        window._line = line
        window._started = True
        # Its total comes from an index: counting the rest of the chunk would be wasted.
        window._count_past_window = False
        return window

    @property
    def line(self) -> int:
        """Number of the line the next character fed belongs to (not kept up to date past
        the window by a resumed window)."""
        return self._line

    @property
    def at_line_start(self) -> bool:
        """Whether the next character fed starts its line."""
        return not self._tail_open

    @property
    def done(self) -> bool:
        """No further line will be kept: only the total line count could still change."""
        return self._done

    def feed(self, chunk: str) -> None:
        """Take the next chunk of text."""
        if not chunk:
            return
        if not self._started:
            self._started = True
            if chunk[0] == _BOM:
                chunk = chunk[1:]
                if not chunk:
                    return
        self._tail_open = chunk[-1] != "\n"
        if self._done:
            self._line += chunk.count("\n")
            return
        newlines = None
        if self._line < self._offset:
            newlines = chunk.count("\n")
            if self._line + newlines < self._offset:
                self._line += newlines
                return
        self._feed_window(chunk, newlines)

    def finish(self, total_lines: int | None = None) -> Window:
        """The window over everything fed so far: the text is complete, or `total_lines`
        (known from an earlier full scan) is given and the window is `done`."""
        if total_lines is None:
            if self._tail_open and not self._done and self._line >= self._offset:
                self._complete_line()
            total_lines = self._line - 1 + self._tail_open
        elif not self._done:
            raise ValueError("a window cut short must be done")
        return Window(
            offset=self._offset,
            lines=tuple(self._lines),
            total_lines=total_lines,
            output_capped=self._capped,
        )

    def _feed_window(self, chunk: str, newlines: int | None) -> None:
        """Keep the window's lines from `chunk` (`newlines`: its count of ``\n``, when the
        caller had to count them)."""
        pos = 0
        first = line = self._line
        if line < self._offset:
            assert newlines is not None
            pos = _skip_lines(chunk, self._offset - line, len(chunk) // newlines)
            line = self._offset
        if self._piece or self._overflow:
            # The line begun in an earlier chunk ends in this one, or continues past it.
            end = chunk.find("\n", pos)
            if end == -1:
                self._keep(chunk, pos, len(chunk))
                self._line = line
                return
            self._keep(chunk, pos, end)
            self._complete_line()
            line += 1
            pos = end + 1
        if not self._done:
            pos, whole = self._keep_whole_lines(chunk, pos)
            line += whole
        if not self._done:
            self._keep(chunk, pos, len(chunk))
        elif newlines is not None:
            line = first + newlines
        elif self._count_past_window:
            line += chunk.count("\n", pos)
        self._line = line

    def _keep_whole_lines(self, chunk: str, pos: int) -> tuple[int, int]:
        """Keep the lines that end inside `chunk` from `pos` on, until a cap; returns where
        it stopped and how many newlines it passed.

        Runs of short lines without a CR (the usual text) are split and sized in C, a run
        at a time; any other line goes through `_keep_lines`, one by one.
        """
        passed = 0
        short = self._max_line_chars // 2  # can't exceed the limit even in UTF-16 units
        while not self._done:
            # Kept lines cost at least a byte a character, plus a separator each: the last
            # line that can fit ends with a newline before this (unless it is truncated).
            stop = chunk.rfind("\n", pos, pos + self._max_bytes - self._bytes + 1)
            if stop == -1:
                moved, count = self._keep_lines(chunk, pos, 1)
                if count == 0:
                    break
                pos, passed = moved, passed + count
                continue
            run = chunk[pos:stop]
            parts = run.split("\n", self._limit - len(self._lines))
            if len(parts) > self._limit - len(self._lines):
                parts.pop()
            if "\r" in run or max(map(len, parts)) > short:
                moved, count = self._keep_lines(chunk, pos, len(parts))
                pos, passed = moved, passed + count
                continue
            kept = self._keep_run(run, parts)
            pos += sum(map(len, parts[:kept])) + kept
            passed += kept
        return pos, passed

    def _keep_run(self, run: str, parts: list[str]) -> int:
        """Keep the first of `parts` (short lines without a CR, split from `run`) that fit
        the byte cap; returns how many."""
        if run.isascii():
            sizes = list(map(len, parts))
        else:
            sizes = list(map(len, run.encode("utf-8").split(b"\n", len(parts))[: len(parts)]))
        ends = list(itertools.accumulate(size + 1 for size in sizes))  # each with a separator
        first = 1 if self._lines else 0  # the first line kept pays no separator
        kept = bisect.bisect_right(ends, self._max_bytes - self._bytes + 1 - first)
        if kept:
            self._lines.extend(parts[:kept])
            self._bytes += ends[kept - 1] - 1 + first
        if kept < len(parts):
            self._capped = self._done = True
        elif len(self._lines) == self._limit:
            self._done = True
        return kept

    def _keep_lines(self, chunk: str, pos: int, most: int) -> tuple[int, int]:
        """Keep up to `most` lines that end inside `chunk` from `pos` on, one by one, until
        a cap; returns where it stopped and how many newlines it passed."""
        lines = self._lines
        limit = self._limit
        room = self._max_bytes - self._bytes
        passed = 0
        find = chunk.find
        while passed < most:
            end = find("\n", pos)
            if end == -1:
                break
            text = chunk[pos:end]
            if text.endswith("\r"):
                text = text[:-1]
            if len(text) > self._max_line_chars // 2:
                text = self._truncated(text, False)
            size = len(text) if text.isascii() else len(text.encode("utf-8"))
            if lines:
                size += 1
            if size > room:
                self._capped = self._done = True
                break
            room -= size
            lines.append(text)
            passed += 1
            pos = end + 1
            if len(lines) == limit:
                self._done = True
                break
        self._bytes = self._max_bytes - room
        return pos, passed

    def _keep(self, chunk: str, start: int, end: int) -> None:
        if self._overflow or start == end:
            return
        room = self._max_line_chars + 1 - self._piece_len
        if end - start > room:
            end = start + room
            self._overflow = True
        self._piece.append(chunk[start:end])
        self._piece_len += end - start

    def _complete_line(self) -> None:
        text = "".join(self._piece)
        overflow = self._overflow
        self._piece.clear()
        self._piece_len = 0
        self._overflow = False
        if text.endswith("\r") and not overflow:
            text = text[:-1]
        text = self._truncated(text, overflow)
        size = (len(text) if text.isascii() else len(text.encode("utf-8"))) + (
            1 if self._lines else 0
        )
        if self._bytes + size > self._max_bytes:
            self._capped = True
            self._done = True
            return
        self._lines.append(text)
        self._bytes += size
        if len(self._lines) == self._limit:
            self._done = True

    def _truncated(self, text: str, overflow: bool) -> str:
        """`text`, or its first `max_line_chars` UTF-16 code units plus the suffix when it is
        longer: upstream counts JavaScript string length, so a character outside the BMP
        counts 2. A cut that would split a surrogate pair is made before the pair."""
        limit = self._max_line_chars
        if text.isascii():
            return text[:limit] + self._suffix if overflow or len(text) > limit else text
        if not overflow and len(text.encode("utf-16-le")) <= 2 * limit:
            return text
        units = 0
        for index, char in enumerate(text):
            units += 2 if char > "\uffff" else 1
            if units > limit:
                return text[:index] + self._suffix
        return text[:limit] + self._suffix  # pragma: no cover - overflow means > limit units


def _skip_lines(text: str, count: int, average: int) -> int:
    """The index just past the `count`-th ``\n`` of `text` (which has at least that many).

    Jumps over about half the remaining lines at a time (guessed from the `average` line
    length) and counts the newlines jumped with `str.count`: a window at the end of a
    1 MiB chunk (thousands of lines in) costs a few C-speed scans, not one `str.index` call
    per line.
    """
    pos = 0
    average = max(1, average)
    while count > 16:
        end = pos + count // 2 * average
        jumped = text.count("\n", pos, end)
        if jumped >= count:
            # Shorter lines than guessed; `count // 2` characters can't hold `count` newlines,
            # so halving ends.
            average = max(1, average // 2)
            continue
        pos, count = end, count - jumped
    for _ in range(count):
        pos = text.index("\n", pos) + 1
    return pos


def window_text(chunks: Iterable[str], offset: int = 1, limit: int = MAX_LINES) -> Window:
    """Window a complete text given as chunks (a one-element list for a whole string)."""
    window = LineWindow(offset, limit)
    for chunk in chunks:
        window.feed(chunk)
    return window.finish()


def window_whole(text: str, offset: int = 1, limit: int = MAX_LINES) -> Window:
    """`window_text` of one whole text (`offset` and `limit` at least 1).

    A plain short text (ASCII, so no byte order mark and a byte per character; no CR; at
    most `MAX_BYTES` long, so no selection of its lines can reach the byte cap; no line
    over `MAX_LINE_CHARS`) is split at once: no cap can apply, so its window is a slice of
    its lines. Any other text goes through `LineWindow`.
    """
    if offset < 1 or limit < 1:
        raise ValueError("offset and limit must be at least 1")
    if len(text) <= MAX_BYTES and text.isascii() and "\r" not in text:
        lines = text.split("\n")
        if text.endswith("\n") or not text:
            lines.pop()  # what follows the last newline is no line
        if len(text) <= MAX_LINE_CHARS or max(map(len, lines)) <= MAX_LINE_CHARS:
            return Window(
                offset=offset,
                lines=tuple(lines[offset - 1 : offset - 1 + limit]),
                total_lines=len(lines),
                output_capped=False,
            )
    return window_text((text,), offset, limit)
