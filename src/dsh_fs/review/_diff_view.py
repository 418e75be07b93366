"""A change's unified diff (what `dsh-fs diff` prints) as rows with the line numbers of both
sides, hunks numbered from 1 in the diff's order (the numbers `undo --hunk N` takes), cut
into chunks the page loads one at a time (a 1 MB change never arrives at once). Pure."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["CHUNK_ROWS", "DiffRow", "DiffView", "parse_diff"]

CHUNK_ROWS = 400
"""Rows in one chunk of a diff: small enough that adding one to the page never freezes it."""

_HUNK = re.compile(r"\A@@ -([0-9]+)(?:,([0-9]+))? \+([0-9]+)(?:,([0-9]+))? @@")

RowKind = Literal["hunk", "context", "added", "removed", "marker", "note"]


@dataclass(frozen=True, slots=True, kw_only=True)
class DiffRow:
    """One row of a diff."""

    kind: RowKind
    """``hunk`` (a hunk's ``@@`` line), ``context``, ``added``, ``removed``, ``marker`` (``\\ No
    newline at end of file``) or ``note`` (what the journal says instead of a diff)."""
    text: str
    """The line as the diff has it, without its first column (the whole line for a hunk,
    a marker or a note)."""
    old: int | None = None
    """The line's number before the change (None on the side it is absent from)."""
    new: int | None = None
    """The line's number after the change."""
    hunk: int | None = None
    """The hunk's number, on a ``hunk`` row."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DiffView:
    """A parsed diff: its file names and lines, made into rows a chunk at a time (a 1 MB
    change's first chunk is ready without making its other 20,000 rows)."""

    old_name: str
    """The ``---`` side (``a/<path>`` or ``/dev/null``)."""
    new_name: str
    """The ``+++`` side."""
    lines: tuple[str, ...]
    """The diff's lines after the file names, one a row."""
    starts: tuple[tuple[int, int, int], ...]
    """Where each chunk starts: the old and new line numbers its first row continues from,
    and how many hunks came before it."""
    hunks: int
    """How many hunks."""

    @property
    def count(self) -> int:
        """How many rows."""
        return len(self.lines)

    @property
    def rows(self) -> tuple[DiffRow, ...]:
        """Every row, hunks in order."""
        return tuple(row for number in range(self.chunks) for row in self.chunk(number))

    @property
    def chunks(self) -> int:
        """How many chunks of `CHUNK_ROWS` rows the page loads (at least one)."""
        return max(1, -(-len(self.lines) // CHUNK_ROWS))

    def chunk(self, number: int) -> tuple[DiffRow, ...]:
        """The rows of chunk `number` (from 0); empty past the end."""
        if not 0 <= number < len(self.starts):
            return ()
        old, new, hunks = self.starts[number]
        lines = self.lines[number * CHUNK_ROWS : (number + 1) * CHUNK_ROWS]
        return _rows(lines, old, new, hunks)


def parse_diff(text: str) -> DiffView:
    """The rows of `text`, a unified diff as `Journal.diff` makes it (a line in brackets
    after the file names, instead of hunks, says why there is no diff)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    old_name = new_name = ""
    first = 0
    if lines and lines[0].startswith("--- "):
        old_name, first = lines[0][4:], 1
    if len(lines) > first and lines[first].startswith("+++ "):
        new_name, first = lines[first][4:], first + 1
    body = tuple(lines[first:])
    # One pass that only counts: where each chunk's numbering starts.
    starts: list[tuple[int, int, int]] = []
    hunks = old = new = 0
    for index, line in enumerate(body):
        if index % CHUNK_ROWS == 0:
            starts.append((old, new, hunks))
        if line.startswith("@@"):
            match = _HUNK.match(line)
            if match:
                hunks += 1
                old, new = _hunk_start(match)
                continue
        if hunks == 0:
            continue
        first_char = line[:1]
        if first_char == "+":
            new += 1
        elif first_char == "-":
            old += 1
        elif first_char != "\\":
            old += 1
            new += 1
    return DiffView(
        old_name=old_name, new_name=new_name, lines=body, starts=tuple(starts), hunks=hunks
    )


def _hunk_start(match: re.Match[str]) -> tuple[int, int]:
    """The old and new line numbers a hunk's first row has."""
    old, new = int(match.group(1)), int(match.group(3))
    # An empty side starts at line 0 of the file: its first line would be line 1.
    old += 1 if match.group(2) == "0" else 0
    new += 1 if match.group(4) == "0" else 0
    return old, new


def _rows(lines: tuple[str, ...], old: int, new: int, hunks: int) -> tuple[DiffRow, ...]:
    """The rows of `lines`, numbered on from `old`, `new` and `hunks`."""
    rows: list[DiffRow] = []
    for line in lines:
        match = _HUNK.match(line)
        if match:
            hunks += 1
            old, new = _hunk_start(match)
            rows.append(DiffRow(kind="hunk", text=line, hunk=hunks))
        elif hunks == 0:
            rows.append(DiffRow(kind="note", text=line))
        elif line.startswith("+"):
            rows.append(DiffRow(kind="added", text=line[1:], new=new))
            new += 1
        elif line.startswith("-"):
            rows.append(DiffRow(kind="removed", text=line[1:], old=old))
            old += 1
        elif line.startswith("\\"):
            rows.append(DiffRow(kind="marker", text=line))
        else:
            rows.append(DiffRow(kind="context", text=line[1:], old=old, new=new))
            old += 1
            new += 1
    return tuple(rows)
