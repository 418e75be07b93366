"""Why an aligned needle did not match: each paired line compared character by character.

Given an `Alignment` (which file line each needle line pairs with), every pair is split into
indentation, core text and trailing whitespace; indentation and trailing runs are compared
whole, the cores with difflib, and each differing stretch is classified: a look-alike
character, spacing, or a real difference. The findings are then summed up across lines into
a few `Reason`s (one per kind), worded by `_wording`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from . import _wording as text
from ._alignment import Alignment, Query, common_prefix
from ._lookalikes import is_lookalike_pair

__all__ = ["explain"]

_CORE_CHARS = 120  # longest middle stretch compared with difflib; longer is one difference
_WORD = re.compile(r"\w")
_CONTEXT = 12
_CLUSTER_GAP = 2


@dataclass(slots=True)
class _Findings:
    """What the line comparisons found, before it is summed up."""

    indents: list[tuple[int, str, str]] = field(default_factory=list)
    trailing: list[tuple[int, str, str]] = field(default_factory=list)
    lookalikes: list[tuple[int, int, str, str]] = field(default_factory=list)
    spacing: list[tuple[int, int, str, str]] = field(default_factory=list)
    content: list[tuple[int, int, str, str]] = field(default_factory=list)
    missing: list[tuple[int, str, int]] = field(default_factory=list)
    moved: list[tuple[int, str, int, int]] = field(default_factory=list)
    extra: list[tuple[int, str]] = field(default_factory=list)


def explain(query: Query, alignment: Alignment, subject: text.Subject) -> list[text.Reason]:
    """The reasons `query` differs from the aligned file lines, most telling first."""
    found = _Findings()
    last = len(query.lines) - 1
    previous = alignment.start - 1
    moved_to = {pair.moved for pair in alignment.pairs if pair.moved is not None}
    for pair in alignment.pairs:
        if pair.query is None:
            assert pair.line is not None
            if pair.line not in moved_to:
                found.extra.append((pair.line, alignment.file_lines[pair.line]))
            previous = pair.line
        elif pair.moved is not None:
            found.moved.append((pair.query, query.lines[pair.query], pair.moved, previous))
        elif pair.line is None:
            found.missing.append((pair.query, query.lines[pair.query], previous))
        else:
            _compare(
                query.lines[pair.query],
                alignment.file_lines[pair.line],
                pair.line,
                found,
                open_start=query.open_start and pair.query == 0,
                open_end=query.open_end and pair.query == last,
            )
            previous = pair.line
    return _summarise(found, subject)


def _compare(
    needle: str, line: str, number: int, found: _Findings, *, open_start: bool, open_end: bool
) -> None:
    """Record how needle line `needle` differs from file line `line` (number `number`)."""
    if _contained(needle, line, open_start=open_start, open_end=open_end):
        return
    lead_n, lead_f = _lead(needle), _lead(line)
    if lead_n != lead_f and not (open_start and lead_f.endswith(lead_n)):
        found.indents.append((number, lead_f, lead_n))
    trail_n, trail_f = _trail(needle[len(lead_n) :]), _trail(line[len(lead_f) :])
    if trail_n != trail_f and not (open_end and trail_f.startswith(trail_n)):
        found.trailing.append((number, trail_f, trail_n))
    core_n = needle[len(lead_n) : len(needle) - len(trail_n)]
    core_f = line[len(lead_f) : len(line) - len(trail_f)]
    if _contained(core_n, core_f, open_start=open_start, open_end=open_end):
        return
    offset = len(lead_f) + 1
    for i1, i2, j1, j2 in _clusters(_differing(core_n, core_f, open_start, open_end)):
        piece_n, piece_f = core_n[i1:i2], core_f[j1:j2]
        if is_lookalike_pair(piece_f, piece_n):
            found.lookalikes.append((number, offset + j1, piece_f, piece_n))
        elif not (piece_n + piece_f).strip(" \t"):
            found.spacing.append((number, offset + j1, piece_f, piece_n))
        else:
            # Only the first differing line is quoted; the others are only counted.
            if found.content:
                excerpt_f = excerpt_n = ""
            else:
                excerpt_f, excerpt_n = _excerpts(core_f, (j1, j2), core_n, (i1, i2))
            found.content.append((number, offset + j1, excerpt_f, excerpt_n))
            return  # the first real difference of a line is the one worth reading


def _clusters(
    ops: list[tuple[str, int, int, int, int]],
) -> list[tuple[int, int, int, int]]:
    """Differing stretches a few equal characters apart read as one difference
    (``sent++`` vs ``sent += 1``), unless each is a look-alike on its own."""
    merged: list[tuple[int, int, int, int]] = []
    for _, i1, i2, j1, j2 in ops:
        if merged and i1 - merged[-1][1] <= _CLUSTER_GAP and j1 - merged[-1][3] <= _CLUSTER_GAP:
            a1, _, b1, _ = merged[-1]
            merged[-1] = (a1, i2, b1, j2)
        else:
            merged.append((i1, i2, j1, j2))
    return merged


def _contained(needle: str, line: str, *, open_start: bool, open_end: bool) -> bool:
    if needle == line:
        return True
    if open_start and open_end:
        return needle in line
    if open_start:
        return line.endswith(needle)
    return open_end and line.startswith(needle)


def _lead(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _trail(line: str) -> str:
    return line[len(line.rstrip(" \t")) :]


def _differing(
    needle: str, line: str, open_start: bool, open_end: bool
) -> list[tuple[str, int, int, int, int]]:
    """difflib's non-equal opcodes between two line cores; text of the file line before
    (after) an open needle edge is not a difference."""
    head = 0 if open_start else common_prefix(needle, line)
    tail = 0 if open_end else common_prefix(needle[head:][::-1], line[head:][::-1])
    mid_n, mid_f = needle[head : len(needle) - tail], line[head : len(line) - tail]
    if len(mid_n) > _CORE_CHARS or len(mid_f) > _CORE_CHARS:
        ops = [("replace", 0, len(mid_n), 0, len(mid_f))]
    else:
        matcher = SequenceMatcher(None, mid_n, mid_f, autojunk=False)
        ops = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    if open_start and ops and ops[0][0] == "insert" and ops[0][1] == 0:
        ops = ops[1:]
    if open_end and ops and ops[-1][0] == "insert" and ops[-1][1] == len(mid_n):
        ops = ops[:-1]
    return [(tag, i1 + head, i2 + head, j1 + head, j2 + head) for tag, i1, i2, j1, j2 in ops]


def _excerpts(
    line: str, span_f: tuple[int, int], needle: str, span_n: tuple[int, int]
) -> tuple[str, str]:
    """The differing stretch on each side, widened to whole words and a little context."""
    (j1, j2), (i1, i2) = span_f, span_n
    left = 0
    while left < _CONTEXT and j1 - left > 0 and i1 - left > 0:
        if not _WORD.match(line[j1 - left - 1]):
            break
        left += 1
    right_f = _word_end(line, j2)
    right_n = _word_end(needle, i2)
    excerpt_f, excerpt_n = line[j1 - left : right_f], needle[i1 - left : right_n]
    if min(len(excerpt_f.strip()), len(excerpt_n.strip())) < 2:
        # Punctuation alone (or nothing) says little: show the token it sits in.
        lo_f, hi_f = _token_around(line, j1 - left, right_f)
        lo_n, hi_n = _token_around(needle, i1 - left, right_n)
        grow = min(j1 - left - lo_f, i1 - left - lo_n)
        excerpt_f = line[j1 - left - grow : hi_f]
        excerpt_n = needle[i1 - left - grow : hi_n]
    return excerpt_f, excerpt_n


def _word_end(text_: str, pos: int) -> int:
    end = pos
    while end < len(text_) and end - pos < _CONTEXT and _WORD.match(text_[end]):
        end += 1
    return end


def _token_around(text_: str, start: int, end: int) -> tuple[int, int]:
    """Widen [start, end) to the whitespace-delimited token around it (a few characters at
    most each way): a lone ``=`` reads better as ``>=``."""
    lo, hi = start, end
    while lo > 0 and start - lo < _CONTEXT // 2 and not text_[lo - 1].isspace():
        lo -= 1
    while hi < len(text_) and hi - end < _CONTEXT // 2 and not text_[hi].isspace():
        hi += 1
    return lo, hi


def _summarise(found: _Findings, subject: text.Subject) -> list[text.Reason]:
    reasons: list[text.Reason] = []
    if found.lookalikes:
        line, column, in_file, in_needle = found.lookalikes[0]
        others = [entry[0] for entry in found.lookalikes[1:]]
        reasons.append(text.lookalike(subject, line, column, in_file, in_needle, others))
    reasons.extend(_indentation(found.indents, subject))
    if found.trailing:
        lines = [entry[0] for entry in found.trailing]
        _, in_file, in_needle = found.trailing[0]
        reasons.append(text.trailing_whitespace(subject, lines, in_file, in_needle))
    if found.spacing:
        line, column, in_file, in_needle = found.spacing[0]
        reasons.append(text.spacing(subject, line, column, in_file, in_needle))
    if found.content:
        line, column, in_file, in_needle = found.content[0]
        more = len({entry[0] for entry in found.content[1:]})
        reasons.append(text.line_differs(subject, line, column, in_file, in_needle, more))
    if found.moved:
        index, moved, line, after = found.moved[0]
        more = len(found.moved) - 1
        reasons.append(text.line_order(subject, index + 1, moved, line, after, more))
    if found.missing:
        index, missing, after = found.missing[0]
        more = len(found.missing) - 1
        reasons.append(text.missing_line(subject, index + 1, missing, after, more))
    if found.extra:
        line, extra = found.extra[0]
        reasons.append(text.extra_line(subject, line, extra, len(found.extra) - 1))
    return reasons


def _indentation(indents: list[tuple[int, str, str]], subject: text.Subject) -> list[text.Reason]:
    reasons: list[text.Reason] = []
    tabbed = [entry for entry in indents if ("\t" in entry[1]) != ("\t" in entry[2])]
    if tabbed:
        _, in_file, in_needle = tabbed[0]
        lines = [entry[0] for entry in tabbed]
        reasons.append(text.tabs_vs_spaces(subject, lines, in_file, in_needle))
    rest = [entry for entry in indents if entry not in tabbed]
    if rest:
        _, in_file, in_needle = rest[0]
        shifts = {len(f) - len(n) for _, f, n in rest}
        only_spaces = all("\t" not in f + n for _, f, n in rest)
        shift = shifts.pop() if len(shifts) == 1 and only_spaces else None
        lines = [entry[0] for entry in rest]
        reasons.append(text.indentation(subject, lines, shift, in_file, in_needle))
    return reasons
