"""Where a missed needle most likely belongs: anchored candidates, then a line alignment.

Pure and bounded. Candidate regions come from exact searches for the needle's distinctive
pieces (its stripped lines, else its longest words), which run at C speed; a piece found
too often says nothing and is dropped. Each candidate region is then aligned with the
needle line by line (difflib on whitespace-free, look-alike-folded keys), and lines that
differ are paired by character similarity. Every scan of the file is charged to a budget,
so a huge file costs a bounded amount of work inside the provider's critical section.

Line numbers and line texts are those `read` shows: lines split on LF, one trailing CR
stripped, numbered from 1 (the caller has already removed a leading byte order mark).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from .._lf_search import crlf_tolerant_pattern
from ._lookalikes import fold_key

__all__ = [
    "MAX_OCCURRENCES",
    "SCAN_BUDGET",
    "Alignment",
    "Haystack",
    "Pair",
    "Query",
    "Search",
    "align_at",
    "closest",
    "common_prefix",
    "is_close",
]

SCAN_BUDGET = 32 << 20
"""Characters of the file the diagnosis may scan in all (each search, each line count)."""

COMPARE_CHARS = 2000
"""Characters of a line kept for comparison (the read tool's line cap)."""

MAX_OCCURRENCES = 64
"""A piece of the needle found more often than this says nothing about where it belongs."""

CLOSE_ENOUGH = 0.66
"""The least alignment score that counts as "close": below it, nothing is named."""

CLOSE_ENOUGH_SHORT = 0.8
"""The same for a needle with fewer than `SHORT` non-whitespace characters, where one
changed character is a large share and chance resemblance is common."""

SHORT = 12

NEAR = 0.06
"""Two places whose scores differ by less than this are both worth naming (near-copies)."""

_MAX_LINE_NEEDLES = 16
_MAX_TOKEN_NEEDLES = 12
_MAX_FRAGMENT_NEEDLES = 16
_FRAGMENT = 10
_MAX_CANDIDATES = 6
_WEAK_VOTE = 0.25
_MAX_QUERY_LINES = 200
_MAX_MARGIN = 12
_PAIR_AT_LEAST = 0.5  # two differing lines below this similarity are a deletion + insertion
_DP_CELLS = 400
_RATIO_CHARS = 120
_OPEN_SLACK = 8
_TOKEN = re.compile(r"\w{3,}")


class Haystack:
    """The file's text (no BOM; LF or CRLF endings), searched within a scan budget.

    Offsets are into the original text; a needle with line breaks is matched with CRLF or
    LF at each break, as the literal edit matches it.
    """

    __slots__ = ("_marks", "_pattern_cache", "_remaining", "crlf", "exhausted", "text")

    def __init__(self, text: str, *, crlf: bool, budget: int = SCAN_BUDGET) -> None:
        self.text = text
        """The text searched."""
        self.crlf = crlf
        """Whether the text contains CRLF pairs."""
        self.exhausted = False
        """A search stopped because the budget ran out: what was not found may exist."""
        self._remaining = budget
        self._marks: list[tuple[int, int]] = [(0, 1)]  # known (offset, line number), sorted
        self._pattern_cache: dict[str, re.Pattern[str]] = {}

    @property
    def searchable(self) -> bool:
        """Whether one full scan of the text fits in the remaining budget."""
        return len(self.text) <= self._remaining

    def charge(self, characters: int) -> None:
        """Count `characters` scanned by a caller's own pass over the text."""
        self._remaining -= characters

    def affords(self, scans: int) -> int:
        """How many of `scans` further full scans of the text fit in the remaining budget."""
        return max(0, min(scans, self._remaining // max(len(self.text), 1)))

    def spans(self, needle: str, cap: int = MAX_OCCURRENCES) -> list[tuple[int, int]] | None:
        """Every non-overlapping occurrence of LF-normalized `needle`, as (start, end)
        offsets, when there are at most `cap`; else None (the needle is not distinctive).
        None as well when the budget ran out first (`exhausted` says so)."""
        found: list[tuple[int, int]] = []
        for span in self._occurrences(needle):
            found.append(span)
            if len(found) > cap:
                return None
        return None if self.exhausted else found

    def first_spans(self, needle: str, limit: int) -> list[tuple[int, int]]:
        """The first `limit` non-overlapping occurrences of `needle` (fewer when there are
        fewer, or when the budget ran out: `exhausted` says which)."""
        found: list[tuple[int, int]] = []
        for span in self._occurrences(needle):
            found.append(span)
            if len(found) == limit:
                break
        return found

    def _occurrences(self, needle: str) -> Iterator[tuple[int, int]]:
        text = self.text
        regex = self._pattern(needle) if self.crlf and "\n" in needle else None
        pos = 0
        while True:
            end = min(len(text), pos + max(self._remaining, 0))
            if regex is None:
                start = text.find(needle, pos, end)
                stop = start + len(needle)
            else:
                match = regex.search(text, pos, end)
                start, stop = (match.start(), match.end()) if match else (-1, -1)
            if start == -1:
                self._remaining -= end - pos
                if end < len(text):
                    self.exhausted = True
                return
            self._remaining -= stop - pos
            yield start, stop
            # Never an empty needle from the callers; this only guards against a loop.
            pos = max(stop, start + 1)

    def line_numbers(self, offsets: Sequence[int]) -> list[int]:
        """The line number of each offset (in the order given)."""
        numbers: dict[int, int] = {}
        for offset in sorted(set(offsets)):
            index = bisect.bisect_right(self._marks, (offset, 1 << 62)) - 1
            mark, line = self._marks[index]
            line += self.text.count("\n", mark, offset)
            self._remaining -= offset - mark
            bisect.insort(self._marks, (offset, line))
            numbers[offset] = line
        return [numbers[offset] for offset in offsets]

    def lines(self, first: int, last: int, anchor: int) -> tuple[int, list[str]]:
        """The display texts of lines `first`..`last` (clamped to the file), found from
        `anchor`, an offset whose line is already known or cheap to count. Returns the number
        of the first line returned and the lines, each cut to `COMPARE_CHARS` + 1."""
        text = self.text
        line = self.line_numbers([anchor])[0]
        start = text.rfind("\n", 0, anchor) + 1
        scanned = anchor - start
        while line > max(first, 1) and start > 0:
            previous = text.rfind("\n", 0, start - 1) + 1
            scanned += start - previous
            start, line = previous, line - 1
        out: list[str] = []
        number = line
        while number <= last:
            end = text.find("\n", start)
            if end == -1:
                end = len(text)
            scanned += end - start
            if number >= first:
                if start == end == len(text) and number > 1:
                    break  # the text ends with LF: there is no line after it
                piece = text[start : min(end, start + COMPARE_CHARS + 1)]
                if piece.endswith("\r") and end - start <= COMPARE_CHARS + 1:
                    piece = piece[:-1]
                out.append(piece)
            if end == len(text):
                break
            start, number = end + 1, number + 1
        self._remaining -= scanned
        return (max(first, line), out) if out else (first, out)

    def _pattern(self, needle: str) -> re.Pattern[str]:
        pattern = self._pattern_cache.get(needle)
        if pattern is None:
            pattern = self._pattern_cache[needle] = crlf_tolerant_pattern(needle)
        return pattern


@dataclass(frozen=True, slots=True, kw_only=True)
class Query:
    """The needle as lines, with what its edges say about where it may start and end."""

    lines: tuple[str, ...]
    """Its lines (LF-split); an empty first or last piece left by a line break at the very
    start or end of the needle is dropped."""
    open_start: bool
    """The first line may begin in the middle of a file line (no line break before it)."""
    open_end: bool
    """The last line may end in the middle of a file line (no line break after it)."""
    cut: bool
    """The needle had more lines than the alignment compares (only the first are used)."""
    whole_lines: bool = False
    """The caller said the needle is whole lines (a patch's context block): its edges are
    closed whatever line breaks it starts or ends with."""

    @classmethod
    def of(cls, needle: str, *, whole_lines: bool = False) -> Query:
        """Split `needle` (LF line breaks) into a query; with `whole_lines`, its first and
        last lines must be whole file lines."""
        lines = needle.split("\n")
        open_start = open_end = not whole_lines
        if len(lines) > 1 and lines[0] == "":
            lines, open_start = lines[1:], False
        if len(lines) > 1 and lines[-1] == "":
            lines, open_end = lines[:-1], False
        cut = len(lines) > _MAX_QUERY_LINES
        if cut:
            lines, open_end = lines[:_MAX_QUERY_LINES], False
        return cls(
            lines=tuple(line[: COMPARE_CHARS + 1] for line in lines),
            open_start=open_start,
            open_end=open_end,
            cut=cut,
            whole_lines=whole_lines,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Pair:
    """One step of an alignment: a query line, a file line, or both."""

    query: int | None
    """Index of the query line, or None for a file line the query lacks."""
    line: int | None
    """Number of the file line, or None for a query line the file lacks."""
    similarity: float
    """How alike the two lines' keys are (1.0 for equal keys; 0.0 when one side is absent)."""
    moved: int | None = None
    """For a query line the file lacks here: the file line elsewhere in the region with the
    same text, when the order of lines differs."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Alignment:
    """The closest region found for a query, and how its lines pair up."""

    start: int
    """First file line of the region."""
    end: int
    """Last file line of the region."""
    score: float
    """Share of the query's non-whitespace characters found in the region (0..1)."""
    weight: int
    """How many non-whitespace characters the query has."""
    pairs: tuple[Pair, ...]
    """The alignment inside the region, in order (query lines the file lacks included)."""
    file_lines: dict[int, str]
    """The text of every file line the pairs name, by number."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Search:
    """What looking for a query found."""

    alignments: tuple[Alignment, ...]
    """The best alignments, best first (several only when equally close)."""
    similar: tuple[Alignment, ...] = ()
    """Other close places scoring within `NEAR` of the best, not overlapping it (sibling
    blocks), best first."""
    crowded: str | None
    """A whole line of the query that occurs too often to say where it belongs, when no
    piece of the query was found any other way (the file is full of near-copies)."""


def closest(hay: Haystack, query: Query) -> Search:
    """The regions of the text closest to `query`."""
    if not any(fold_key(line) for line in query.lines):
        return Search(alignments=(), crowded=None)
    candidates, crowded = _candidates(hay, query)
    aligned: list[Alignment] = []
    seen: set[tuple[int, int]] = set()
    for start, anchor in candidates:
        alignment = _align(hay, query, start, anchor)
        if alignment is not None and (alignment.start, alignment.end) not in seen:
            seen.add((alignment.start, alignment.end))
            aligned.append(alignment)
    aligned.sort(key=lambda a: (-a.score, a.start))
    best = aligned[0].score if aligned else 0.0
    tied = tuple(a for a in aligned if a.score >= best - 1e-9)
    similar: list[Alignment] = []
    for other in aligned[len(tied) :]:
        if other.score < best - NEAR or not is_close(other):
            break
        if not any(_overlap(other, kept) for kept in (*tied, *similar)):
            similar.append(other)
    return Search(alignments=tied, similar=tuple(similar), crowded=crowded)


def align_at(hay: Haystack, query: Query, start: int, anchor: int) -> Alignment | None:
    """The alignment of `query` with the file from line `start` on (reached from `anchor`,
    an offset on or near that line)."""
    return _align(hay, query, start, anchor)


def _overlap(a: Alignment, b: Alignment) -> bool:
    return a.start <= b.end and b.start <= a.end


def is_close(alignment: Alignment) -> bool:
    """Whether the alignment is close enough to name its lines to the model."""
    needed = CLOSE_ENOUGH if alignment.weight >= SHORT else CLOSE_ENOUGH_SHORT
    return alignment.score >= needed


def _candidates(hay: Haystack, query: Query) -> tuple[list[tuple[int, int]], str | None]:
    """Likely first lines of the query in the file, each with an offset to reach it from;
    when there are none, the longest piece found too often to count, if any. Pieces are
    tried from the most telling (whole lines) to the least (words, then fragments of lines),
    stopping at the first kind that lands somewhere."""
    crowded: list[str] = []
    hits: list[tuple[int, list[int], float]] = []
    for needles in (_line_needles, _token_needles, _fragment_needles):
        # Only a whole line found everywhere says the file is full of near-copies; a common
        # word or fragment says nothing.
        hits = _search(hay, needles(query), crowded if needles is _line_needles else [])
        if hits or hay.exhausted:
            break
    if not hits:
        return [], max((line for line in crowded if len(line) >= 6), key=len, default=None)
    offsets = [offset for offset, _, _ in hits]
    numbers = dict(zip(offsets, hay.line_numbers(offsets), strict=True))
    votes: dict[int, float] = {}
    anchors: dict[int, int] = {}
    for offset, indexes, weight in hits:
        for index in indexes:
            start = numbers[offset] - index
            votes[start] = votes.get(start, 0.0) + weight
            anchors.setdefault(start, offset)
    ranked = sorted(votes, key=lambda start: (-votes[start], start))
    # A start with a small share of the best one's evidence is not worth an alignment.
    strong = [start for start in ranked if votes[start] >= votes[ranked[0]] * _WEAK_VOTE]
    return [(start, anchors[start]) for start in strong[:_MAX_CANDIDATES]], None


def _line_needles(query: Query) -> list[tuple[str, list[int]]]:
    needles: dict[str, list[int]] = {}
    for index, line in enumerate(query.lines):
        stripped = line.strip()
        if len(stripped) >= 4:
            needles.setdefault(stripped, []).append(index)
    ranked = sorted(needles.items(), key=lambda item: -len(item[0]))
    return ranked[:_MAX_LINE_NEEDLES]


def _token_needles(query: Query) -> list[tuple[str, list[int]]]:
    needles: dict[str, list[int]] = {}
    for index, line in enumerate(query.lines):
        for token in _TOKEN.findall(line):
            if not token.isdigit():
                needles.setdefault(token, []).append(index)
    ranked = sorted(needles.items(), key=lambda item: -len(item[0]))
    return ranked[:_MAX_TOKEN_NEEDLES]


def _fragment_needles(query: Query) -> list[tuple[str, list[int]]]:
    """Consecutive pieces of each line: in a file of near-copies, the piece that holds a
    line's distinctive part (a number, a name) is found where its words alone are not."""
    per_line: list[list[str]] = []
    for line in query.lines:
        stripped = line.strip()
        starts = range(0, max(1, len(stripped) - _FRAGMENT // 2), _FRAGMENT // 2)
        pieces = [stripped[k : k + _FRAGMENT] for k in starts]
        per_line.append([piece for piece in pieces if len(piece.strip()) >= 4])
    needles: dict[str, list[int]] = {}
    # Round-robin over the lines, so that a long line does not crowd out the others.
    for depth in range(max((len(pieces) for pieces in per_line), default=0)):
        for index, pieces in enumerate(per_line):
            if depth < len(pieces):
                needles.setdefault(pieces[depth], []).append(index)
    return list(needles.items())[:_MAX_FRAGMENT_NEEDLES]


def _search(
    hay: Haystack, needles: list[tuple[str, list[int]]], crowded: list[str]
) -> list[tuple[int, list[int], float]]:
    """(offset, query line indexes, weight) for every occurrence of every distinctive
    needle; a needle's weight (its length) is shared among its occurrences. Needles found
    too often are added to `crowded`."""
    hits: list[tuple[int, list[int], float]] = []
    for needle, indexes in needles:
        found = hay.spans(needle)
        if hay.exhausted:
            break
        if found is None:
            crowded.append(needle)
        elif found:
            weight = len(needle) / len(found)
            hits.extend((start, indexes, weight) for start, _ in found)
    return hits


def _align(hay: Haystack, query: Query, start: int, anchor: int) -> Alignment | None:
    """The alignment from line `start` in a window with a margin for lines added or lost;
    when it stretched past the query's length, the alignment of exactly the query's lines
    from `start` too, kept if it scores as well. (An exact line of a sibling block inside
    the margin can pull the alignment across into it: both blocks then lose to a third.)"""
    count = len(query.lines)
    wide = _align_in(hay, query, start, anchor, min(_MAX_MARGIN, 2 + count // 2))
    if wide is None or wide.end - wide.start + 1 <= count:
        return wide
    tight = _align_in(hay, query, start, anchor, 0)
    return tight if tight is not None and tight.score >= wide.score else wide


def _align_in(
    hay: Haystack, query: Query, start: int, anchor: int, margin: int
) -> Alignment | None:
    count = len(query.lines)
    first, window = hay.lines(start - margin, start + count - 1 + margin, anchor)
    if not window:
        return None
    keys_q = [fold_key(line) for line in query.lines]
    keys_w = [fold_key(line) for line in window]
    weights = [len(key) for key in keys_q]
    _attach_open_edges(query, keys_q, keys_w, start - first)
    # difflib's "popular line" heuristic (windows of 200 lines or more) keeps a window of
    # repeated lines from going quadratic: repeated lines extend matches but never seed one.
    matcher = SequenceMatcher(None, keys_q, keys_w)
    opcodes = matcher.get_opcodes()
    pairs: list[Pair] = []
    for index, (tag, i1, i2, j1, j2) in enumerate(opcodes):
        if tag == "equal":
            pairs.extend(
                Pair(query=i, line=first + j, similarity=1.0)
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True)
            )
        elif tag == "delete":
            pairs.extend(Pair(query=i, line=None, similarity=0.0) for i in range(i1, i2))
        elif tag == "insert":
            pairs.extend(Pair(query=None, line=first + j, similarity=0.0) for j in range(j1, j2))
        else:
            shift = _diagonal(opcodes, index, start - first)
            pairs.extend(_pair_block(query, keys_q, keys_w, (i1, i2), (j1, j2), first, shift))
    return _region(weights, keys_q, keys_w, pairs, first, window)


def _diagonal(opcodes: Sequence[tuple[str, int, int, int, int]], index: int, expected: int) -> int:
    """The window-minus-query offset a replaced block most likely keeps: that of the equal
    lines before it, else after it, else where the candidate said the query starts."""
    for tag, i1, _, j1, _ in reversed(opcodes[:index]):
        if tag == "equal":
            return j1 - i1
    for tag, i1, _, j1, _ in opcodes[index + 1 :]:
        if tag == "equal":
            return j1 - i1
    return expected


def _attach_open_edges(query: Query, keys_q: list[str], keys_w: list[str], expected: int) -> None:
    """Let an open first (last) query line equal the file line it is the end (start) of,
    so that an old_string starting or ending mid-line aligns with the whole line."""
    last = len(keys_q) - 1
    edges: list[tuple[int, str]] = []
    if query.open_start and query.open_end and last == 0:
        edges.append((0, "in"))
    else:
        if query.open_start:
            edges.append((0, "end"))
        if query.open_end:
            edges.append((last, "start"))
    for index, how in edges:
        key = keys_q[index]
        if not key:
            continue
        centre = expected + index
        near = [j for j in range(centre - 2, centre + 3) if 0 <= j < len(keys_w)]
        for j in sorted(near, key=lambda j: abs(j - centre)):
            other = keys_w[j]
            if other == key:
                break
            if (
                (how == "in" and key in other)
                or (how == "end" and other.endswith(key))
                or (how == "start" and other.startswith(key))
            ):
                keys_q[index] = other
                break


def _pair_block(
    query: Query,
    keys_q: list[str],
    keys_w: list[str],
    rows: tuple[int, int],
    cols: tuple[int, int],
    first: int,
    shift: int,
) -> list[Pair]:
    """Pair the differing lines of a replaced block by similarity (an order-keeping dynamic
    program; a large block is paired along the diagonal `shift`, window index minus query
    index); lines left unpaired are missing from one side."""
    (i1, i2), (j1, j2) = rows, cols
    n, m = i2 - i1, j2 - j1
    last = len(keys_q) - 1

    def sim(i: int, j: int) -> float:
        return _similarity(
            keys_q[i1 + i],
            keys_w[j1 + j],
            open_start=query.open_start and i1 + i == 0,
            open_end=query.open_end and i1 + i == last,
        )

    if n * m > _DP_CELLS:
        offset = shift - (j1 - i1)  # block column minus block row on that diagonal
        diagonal = [(i, i + offset) for i in range(n) if 0 <= i + offset < m]
        scores = {(i, j): sim(i, j) for i, j in diagonal}
        chosen = [cell for cell in diagonal if scores[cell] >= _PAIR_AT_LEAST]
    else:
        scores = {(i, j): sim(i, j) for i in range(n) for j in range(m)}
        best = [[0.0] * (m + 1) for _ in range(n + 1)]
        for i in range(n - 1, -1, -1):
            for j in range(m - 1, -1, -1):
                take = scores[i, j] + best[i + 1][j + 1] if scores[i, j] >= _PAIR_AT_LEAST else -1
                best[i][j] = max(take, best[i + 1][j], best[i][j + 1])
        chosen, i, j = [], 0, 0
        while i < n and j < m:
            if scores[i, j] >= _PAIR_AT_LEAST and best[i][j] == scores[i, j] + best[i + 1][j + 1]:
                chosen.append((i, j))
                i, j = i + 1, j + 1
            elif best[i][j] == best[i + 1][j]:
                i += 1
            else:
                j += 1
    pairs: list[Pair] = []
    i = j = 0
    for ci, cj in [*chosen, (n, m)]:
        pairs.extend(Pair(query=i1 + k, line=None, similarity=0.0) for k in range(i, ci))
        pairs.extend(Pair(query=None, line=first + j1 + k, similarity=0.0) for k in range(j, cj))
        if ci < n:
            pairs.append(Pair(query=i1 + ci, line=first + j1 + cj, similarity=scores[ci, cj]))
        i, j = ci + 1, cj + 1
    return pairs


def _similarity(a: str, b: str, *, open_start: bool, open_end: bool) -> float:
    """How alike two keys are, as difflib's ratio: twice the matched characters over both
    lengths. An open edge line is compared with the stretch of `b` it could be the end
    (start) of. Bounded: shared ends are measured at C speed, and difflib only sees a short
    differing middle (on long repetitive text it is quadratic)."""
    if a == b:
        return 1.0
    if not a or not b:
        return 0.0
    if open_start and open_end:
        return _local_ratio(a[:_RATIO_CHARS], b[: 2 * _RATIO_CHARS])
    if open_start:
        b = b[-(len(a) + _OPEN_SLACK) :]
    elif open_end:
        b = b[: len(a) + _OPEN_SLACK]
    head = common_prefix(a, b)
    tail = common_prefix(a[head:][::-1], b[head:][::-1])
    shared = head + tail
    mid_a, mid_b = a[head : len(a) - tail], b[head : len(b) - tail]
    total = len(a) + len(b)
    at_most = 2.0 * (shared + min(len(mid_a), len(mid_b))) / total
    if at_most < _PAIR_AT_LEAST or max(len(mid_a), len(mid_b)) > _RATIO_CHARS:
        return 2.0 * shared / total
    matcher = SequenceMatcher(None, mid_a, mid_b, autojunk=False)
    matched = sum(block.size for block in matcher.get_matching_blocks())
    return 2.0 * (shared + matched) / total


def _local_ratio(a: str, b: str) -> float:
    """The ratio of `a` against the stretch of `b` its matches span (a needle line that
    may sit anywhere inside a file line)."""
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    blocks = [block for block in matcher.get_matching_blocks() if block.size]
    if not blocks:
        return 0.0
    matched = sum(block.size for block in blocks)
    return 2.0 * matched / (len(a) + blocks[-1].b + blocks[-1].size - blocks[0].b)


def common_prefix(a: str, b: str) -> int:
    """Length of the common prefix of `a` and `b`, by bisection on slice equality (each
    compare runs at C speed)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _region(
    weights: list[int],
    keys_q: list[str],
    keys_w: list[str],
    pairs: list[Pair],
    first: int,
    window: list[str],
) -> Alignment | None:
    """Trim the file lines outside the paired region, find query lines that are in the
    region in another order, and score what remains (a moved line earns half its weight)."""
    paired = [p.line for p in pairs if p.query is not None and p.line is not None]
    if not paired:
        return None
    start, end = paired[0], paired[-1]
    taken = set(paired)
    placed: list[Pair] = []
    for pair in pairs:
        if pair.query is not None and pair.line is None:
            moved = _elsewhere(keys_q[pair.query], keys_w, first, taken, (start + end) / 2)
            if moved is not None:
                taken.add(moved)
                start, end = min(start, moved), max(end, moved)
                pair = Pair(query=pair.query, line=None, similarity=0.5, moved=moved)
        placed.append(pair)
    kept = tuple(p for p in placed if p.line is None or start <= p.line <= end)
    total = sum(weights)
    found = sum(weights[p.query] * p.similarity for p in kept if p.query is not None)
    return Alignment(
        start=start,
        end=end,
        score=found / total if total else 0.0,
        weight=total,
        pairs=kept,
        file_lines={number: window[number - first] for number in range(start, end + 1)},
    )


def _elsewhere(
    key: str, keys_w: list[str], first: int, taken: set[int], centre: float
) -> int | None:
    """The free window line nearest `centre` whose key is `key` (a line long enough to
    mean something), if any."""
    if len(key) < 4:
        return None
    spots = [first + j for j, other in enumerate(keys_w) if other == key]
    free = [line for line in spots if line not in taken]
    return min(free, key=lambda line: abs(line - centre), default=None)
