"""old_string stitched from pieces of the file that are not adjacent (issue 41, pattern 1).

A model that remembers a few lines here and a few lines further on writes them as one
old_string: every line is in the file, in order, but other lines sit between the pieces.
An alignment then names one piece (or a near-copy of both), or says "line N is not in the
file here" of a line that is, further on. Here each line of the needle is looked up as a
whole file line; when all of them are found in order as a few runs of adjacent lines, each
run placed without doubt, the whole span and the lines left out between the runs are named.

Pure and bounded: one exact search per distinct line of the needle (at most `_MAX_LINES`),
stopping at the first line the file lacks, each charged to the scan budget.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

from ._alignment import Haystack, Query

__all__ = ["Piece", "Stitched", "stitched"]

_MAX_PIECES = 6
_MAX_LINES = 40  # a longer needle is not looked at line by line (a scan per line)
_DISTINCT = 6  # a piece needs a line with this many non-whitespace characters


@dataclass(frozen=True, slots=True, kw_only=True)
class Piece:
    """A run of the needle's lines found adjacent in the file."""

    first: int
    """The needle's index of its first line."""
    start: int
    """Its first file line."""
    end: int
    """Its last file line."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Stitched:
    """The needle as pieces of the file, in order."""

    pieces: tuple[Piece, ...]
    lines: dict[int, str]
    """The text of the file lines the pieces and the first gap lines name, by number."""

    @property
    def start(self) -> int:
        return self.pieces[0].start

    @property
    def end(self) -> int:
        return self.pieces[-1].end

    def gaps(self) -> list[tuple[int, int]]:
        """The file lines between the pieces, as (first, last) spans."""
        return [(one.end + 1, two.start - 1) for one, two in pairwise(self.pieces)]


def stitched(hay: Haystack, query: Query) -> Stitched | None:
    """The pieces `query` is made of, when all of its lines are whole lines of the file, in
    order, in 2 to `_MAX_PIECES` runs with lines between them, and each run occurs once in
    the whole file (so the split is not a guess); else None."""
    wanted = query.lines
    if not 2 <= len(wanted) <= _MAX_LINES:
        return None
    where: dict[str, set[int]] = {}
    anchors: dict[int, int] = {}
    for line in wanted:
        if line in where:
            continue
        numbers = _whole_lines(hay, line, anchors)
        if not numbers:
            return None  # a line the file lacks (or has too often to place): not stitched
        where[line] = numbers
    pieces: list[Piece] = []
    index, after = 0, 0
    while index < len(wanted):
        runs = [
            (start, _run(where, wanted, index, start)) for start in sorted(where[wanted[index]])
        ]
        later = [length for start, length in runs if start > after]
        if not later:
            return None
        longest = max(later)
        best = [start for start, length in runs if length >= longest]
        if len(best) > 1 or best[0] <= after or not _distinct(wanted[index : index + longest]):
            return None  # this piece could be in more than one place
        start = best[0]
        pieces.append(Piece(first=index, start=start, end=start + longest - 1))
        if len(pieces) > _MAX_PIECES:
            return None
        index, after = index + longest, start + longest - 1
    if len(pieces) < 2:
        return None
    named = {n for piece in pieces for n in range(piece.start, piece.end + 1)}
    for one, two in pairwise(pieces):
        named.update(range(one.end + 1, min(two.start, one.end + 4)))
    shown: dict[int, str] = {}
    for piece in pieces:
        last = max(n for n in named if n < (_next_start(pieces, piece) or 1 << 62))
        first, lines = hay.lines(piece.start, last, anchors[piece.start])
        shown.update((first + k, line) for k, line in enumerate(lines))
    return Stitched(pieces=tuple(pieces), lines=shown)


def _next_start(pieces: list[Piece], piece: Piece) -> int | None:
    later = [other.start for other in pieces if other.start > piece.start]
    return min(later) if later else None


def _whole_lines(hay: Haystack, line: str, anchors: dict[int, int]) -> set[int]:
    """The numbers of the file lines that are exactly `line` (at most `MAX_OCCURRENCES`;
    none when there are more), each with its offset kept in `anchors`."""
    found = hay.spans(line) if line else None
    if not found:
        return set()
    text = hay.text
    whole: list[int] = []
    for start, stop in found:
        before = start == 0 or text[start - 1] == "\n"
        end = stop == len(text) or text[stop] == "\n" or text.startswith("\r\n", stop)
        if before and end:
            whole.append(start)
    numbers = hay.line_numbers(whole)
    anchors.update(zip(numbers, whole, strict=True))
    return set(numbers)


def _run(where: dict[str, set[int]], wanted: tuple[str, ...], index: int, start: int) -> int:
    """How many of the needle's lines from `index` on are the file's from line `start`."""
    length = 0
    while index + length < len(wanted) and start + length in where[wanted[index + length]]:
        length += 1
    return length


def _distinct(piece: tuple[str, ...]) -> bool:
    return any(len("".join(line.split())) >= _DISTINCT for line in piece)
