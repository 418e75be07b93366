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
    """A parsed diff: its file names and rows."""

    old_name: str
    """The ``---`` side (``a/<path>`` or ``/dev/null``)."""
    new_name: str
    """The ``+++`` side."""
    rows: tuple[DiffRow, ...]
    """Every row, hunks in order."""
    hunks: int
    """How many hunks."""

    @property
    def chunks(self) -> int:
        """How many chunks of `CHUNK_ROWS` rows the page loads (at least one)."""
        return max(1, -(-len(self.rows) // CHUNK_ROWS))

    def chunk(self, number: int) -> tuple[DiffRow, ...]:
        """The rows of chunk `number` (from 0); empty past the end."""
        return self.rows[number * CHUNK_ROWS : (number + 1) * CHUNK_ROWS]


def parse_diff(text: str) -> DiffView:
    """The rows of `text`, a unified diff as `Journal.diff` makes it (a line in brackets
    after the file names, instead of hunks, says why there is no diff)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    old_name = new_name = ""
    if lines and lines[0].startswith("--- "):
        old_name = lines.pop(0)[4:]
    if lines and lines[0].startswith("+++ "):
        new_name = lines.pop(0)[4:]
    rows: list[DiffRow] = []
    hunks = 0
    old = new = 0
    for line in lines:
        match = _HUNK.match(line)
        if match:
            hunks += 1
            old, new = int(match.group(1)), int(match.group(3))
            # An empty side starts at line 0 of the file: its first line would be line 1.
            old += 1 if match.group(2) == "0" else 0
            new += 1 if match.group(4) == "0" else 0
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
    return DiffView(old_name=old_name, new_name=new_name, rows=tuple(rows), hunks=hunks)
