"""The line matching behind `Journal.diff` and the hunks a revert takes back (SPEC §9.1):
difflib's `SequenceMatcher` as it is for small changes, and for large ones a near-linear
match: lines as numbers, the common start and end trimmed, then anchored on the lines found
exactly once on both sides (patience), difflib only on the small spans between anchors, a
shortest edit script (Myers) on a large span with no anchor and few edits (repeated lines).
A 1 MB change with edits all through the file is matched in well under a second where
difflib alone takes most of a minute. Both `diff` and the hunks use `matcher`, so the hunks
`dsh-fs diff` prints are the hunks `undo --hunk N` reverts. Pure: lines in, blocks out."""

from __future__ import annotations

import bisect
import difflib
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Final

__all__ = ["SMALL", "lines", "matcher", "unified_diff"]

SMALL: Final = 2_000
"""Changes with at most this many lines on both sides together are matched by difflib
alone (its result, exactly as before)."""

_DIRECT: Final = 10_000
"""A span whose sides multiply to at most this goes to difflib straight away (cheaper
than looking for anchors, and difflib's own match)."""

_SPAN: Final = 1_000_000
"""A span with no anchor is handed to difflib only while its sides multiply to at most this
(difflib is quadratic at worst); a larger one is left unmatched."""

_LINE: Final = re.compile(r"[^\n]*\n|[^\n]+")
"""A line and its ``\\n``, or a last line without one."""


def lines(text: str) -> list[str]:
    """`text` cut after each ``\\n``, line ends kept: the lines `read` numbers, so `diff`'s
    line numbers, the hunks and a revert's "line N changed since" name the lines `read`
    shows. (`str.splitlines` also cuts at ``\\r``, ``\\v``, ``\\f``, ``\\x1c``-``\\x1e``,
    ``\\x85``, ``\\u2028`` and ``\\u2029``: a form feed alone on a line would count twice.)"""
    found = text.splitlines(keepends=True)
    # `splitlines` cuts after every "\n" and maybe elsewhere: as many pieces as "\n" makes
    # is the same pieces (a cut of its own at the very end adds none), and the count runs
    # at C speed where splitting again would copy every line.
    if len(found) == text.count("\n") + (not text.endswith("\n") and bool(text)):
        return found
    return _LINE.findall(text)


class _Matcher(difflib.SequenceMatcher[str]):
    """A `SequenceMatcher` whose matching blocks come from the anchored match (its
    `get_opcodes` and `get_grouped_opcodes` are difflib's, over these blocks)."""

    def __init__(self, before: Sequence[str], after: Sequence[str]) -> None:
        # Empty sides for difflib: no index of `after` is built (the anchored match needs
        # none, and difflib's own methods below read only the matching blocks).
        super().__init__(None, (), ())
        self._before = before
        self._after = after
        self._blocks: list[difflib.Match] | None = None

    def get_matching_blocks(self) -> list[difflib.Match]:
        if self._blocks is None:
            self._blocks = _anchored(self._before, self._after)
            self._blocks.append(difflib.Match(len(self._before), len(self._after), 0))
        return self._blocks


def matcher(before: Sequence[str], after: Sequence[str]) -> difflib.SequenceMatcher[str]:
    """The matcher of `before` → `after` (lines): difflib's own for a small change, the
    anchored one for a large one. Its `get_opcodes` and `get_grouped_opcodes` are what
    `diff` shows."""
    if len(before) + len(after) <= SMALL:
        return difflib.SequenceMatcher(None, before, after)
    return _Matcher(before, after)


def unified_diff(
    before: Sequence[str], after: Sequence[str], old_name: str, new_name: str, context: int = 3
) -> Iterator[str]:
    """`difflib.unified_diff` of the lines `before` → `after`, hunks from `matcher`."""
    started = False
    for group in matcher(before, after).get_grouped_opcodes(context):
        if not started:
            started = True
            yield f"--- {old_name}\n"
            yield f"+++ {new_name}\n"
        first, last = group[0], group[-1]
        old_range = _range(first[1], last[2])
        new_range = _range(first[3], last[4])
        yield f"@@ -{old_range} +{new_range} @@\n"
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                for line in before[i1:i2]:
                    yield " " + line
                continue
            if tag in ("replace", "delete"):
                for line in before[i1:i2]:
                    yield "-" + line
            if tag in ("replace", "insert"):
                for line in after[j1:j2]:
                    yield "+" + line


def _range(start: int, stop: int) -> str:
    """A hunk's range as `difflib.unified_diff` writes it."""
    beginning = start + 1
    length = stop - start
    if length == 1:
        return f"{beginning}"
    if not length:
        beginning -= 1  # an empty range begins before its line
    return f"{beginning},{length}"


def _anchored(before: Sequence[str], after: Sequence[str]) -> list[difflib.Match]:
    """The matching blocks of `before` → `after`, in order, adjacent ones joined."""
    numbers: dict[str, int] = {}
    a = [numbers.setdefault(line, len(numbers)) for line in before]
    b = [numbers.setdefault(line, len(numbers)) for line in after]
    matched: list[tuple[int, int, int]] = []
    spans = [(0, len(a), 0, len(b))]
    while spans:
        alo, ahi, blo, bhi = spans.pop()
        # The common start and end are matched as they are.
        start = 0
        while alo + start < ahi and blo + start < bhi and a[alo + start] == b[blo + start]:
            start += 1
        if start:
            matched.append((alo, blo, start))
            alo, blo = alo + start, blo + start
        end = 0
        while alo < ahi - end and blo < bhi - end and a[ahi - end - 1] == b[bhi - end - 1]:
            end += 1
        if end:
            matched.append((ahi - end, bhi - end, end))
            ahi, bhi = ahi - end, bhi - end
        if alo == ahi or blo == bhi:
            continue
        small = (ahi - alo) * (bhi - blo) <= _DIRECT
        anchors = [] if small else _anchors(a, b, alo, ahi, blo, bhi)
        if not anchors:
            matched.extend(_difflib_blocks(a, b, alo, ahi, blo, bhi))
            continue
        # Between anchors (and before the first, after the last) the spans are matched
        # the same way; anchors next to each other are one block.
        last_a, last_b = alo, blo
        run_a = run_b = run = 0
        for i, j in anchors:
            if run and i == last_a and j == last_b:
                run += 1
            else:
                if run:
                    matched.append((run_a, run_b, run))
                if i > last_a or j > last_b:
                    spans.append((last_a, i, last_b, j))
                run_a, run_b, run = i, j, 1
            last_a, last_b = i + 1, j + 1
        matched.append((run_a, run_b, run))
        if ahi > last_a or bhi > last_b:
            spans.append((last_a, ahi, last_b, bhi))
    matched.sort()
    blocks: list[difflib.Match] = []
    for i, j, size in matched:
        if blocks and blocks[-1].a + blocks[-1].size == i and blocks[-1].b + blocks[-1].size == j:
            previous = blocks.pop()
            blocks.append(difflib.Match(previous.a, previous.b, previous.size + size))
        else:
            blocks.append(difflib.Match(i, j, size))
    return blocks


def _anchors(
    a: list[int], b: list[int], alo: int, ahi: int, blo: int, bhi: int
) -> list[tuple[int, int]]:
    """The lines found exactly once on each side of the span, as (a, b) index pairs: the
    longest run of them in the same order on both sides (patience sorting)."""
    in_a = Counter(a[alo:ahi])
    in_b = Counter(b[blo:bhi])
    where_b = {line: j for j, line in enumerate(b[blo:bhi], blo) if in_b[line] == 1}
    pairs = [
        (i, where_b[line])
        for i, line in enumerate(a[alo:ahi], alo)
        if in_a[line] == 1 and line in where_b
    ]
    if not pairs:
        return []
    # The longest increasing run of b-indexes: piles' tops, with a link back from each.
    tops: list[int] = []
    top_at: list[int] = []
    back: list[int] = [-1] * len(pairs)
    for n, (_, j) in enumerate(pairs):
        pile = bisect.bisect_left(tops, j)
        if pile == len(tops):
            tops.append(j)
            top_at.append(n)
        else:
            tops[pile] = j
            top_at[pile] = n
        back[n] = top_at[pile - 1] if pile else -1
    run: list[tuple[int, int]] = []
    n = top_at[-1]
    while n >= 0:
        run.append(pairs[n])
        n = back[n]
    run.reverse()
    return run


def _difflib_blocks(
    a: list[int], b: list[int], alo: int, ahi: int, blo: int, bhi: int
) -> list[tuple[int, int, int]]:
    """difflib's matching blocks of a span with no anchor; a span too large for it (no
    line unique on both sides: a file of repeated lines) gets a shortest edit script when
    it has few edits (`_few_edits`), else is left unmatched, a replace."""
    if (ahi - alo) * (bhi - blo) > _SPAN:
        return _few_edits(a, b, alo, ahi, blo, bhi) or []
    found = difflib.SequenceMatcher(None, a[alo:ahi], b[blo:bhi], autojunk=False)
    return [
        (alo + block.a, blo + block.b, block.size)
        for block in found.get_matching_blocks()
        if block.size
    ]


_EDITS: Final = 500
"""Most inserted and deleted lines `_few_edits` looks for (its work grows with their
square, and with the lines times their number)."""


def _few_edits(
    a: list[int], b: list[int], alo: int, ahi: int, blo: int, bhi: int
) -> list[tuple[int, int, int]] | None:
    """The matching blocks of a shortest edit script of the span (Myers' greedy algorithm),
    when one of at most `_EDITS` inserted and deleted lines exists; None otherwise.

    Why: a large span with no anchor is a file of repeated lines (a log, a table, blank
    lines and braces), and a few lines edited in it must not show as the whole span
    replaced (a revert by hunk would take back every change in it at once). The script's
    cost is its number of edits times the span's lines, where difflib's is the product of
    the sides."""
    n, m = ahi - alo, bhi - blo
    limit = min(_EDITS, n + m)
    offset = limit + 1
    furthest = [0] * (2 * limit + 3)  # by diagonal k = x - y: the furthest x reached
    rounds: list[list[int]] = []  # `furthest` over k = -d..d before each round d ≥ 1
    for d in range(limit + 1):
        if d:
            rounds.append(furthest[offset - d : offset + d + 1])
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and furthest[offset + k - 1] < furthest[offset + k + 1]):
                x = furthest[offset + k + 1]  # a line of `b` inserted
            else:
                x = furthest[offset + k - 1] + 1  # a line of `a` deleted
            y = x - k
            x += _common(a, b, alo + x, ahi, blo + y, bhi)
            furthest[offset + k] = x
            if x >= n and x - k >= m:
                return _script_blocks(rounds, x, x - k, alo, blo)
    return None


def _common(a: list[int], b: list[int], i: int, ahi: int, j: int, bhi: int) -> int:
    """How many lines `a[i:ahi]` and `b[j:bhi]` share from their starts (compared in
    doubling slices: C speed along the long runs of repeated lines)."""
    size, step = 0, 1
    while True:
        step = min(step, ahi - i - size, bhi - j - size)
        if step <= 0:
            return size
        if a[i + size : i + size + step] == b[j + size : j + size + step]:
            size += step
            step *= 2
        elif step == 1:
            return size
        else:
            step //= 2


def _script_blocks(
    rounds: list[list[int]], x: int, y: int, alo: int, blo: int
) -> list[tuple[int, int, int]]:
    """The runs of matched lines of the script that ends at (`x`, `y`), walked back
    through each round's furthest points: each round's edit, then its run of matches."""
    blocks: list[tuple[int, int, int]] = []
    for d in range(len(rounds), 0, -1):
        furthest = rounds[d - 1]  # before round d, k = -d..d at index k + d
        k = x - y
        if k == -d or (k != d and furthest[k - 1 + d] < furthest[k + 1 + d]):
            prev_x = furthest[k + 1 + d]  # came down: a line of `b` inserted
            prev_y = prev_x - k - 1
            mid_x, mid_y = prev_x, prev_y + 1
        else:
            prev_x = furthest[k - 1 + d]  # came right: a line of `a` deleted
            prev_y = prev_x - k + 1
            mid_x, mid_y = prev_x + 1, prev_y
        if x > mid_x:
            blocks.append((alo + mid_x, blo + mid_y, x - mid_x))
        x, y = prev_x, prev_y
    if x:
        blocks.append((alo, blo, x))
    blocks.reverse()
    return blocks
