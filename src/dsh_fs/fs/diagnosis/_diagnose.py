"""Explaining a missed or ambiguous edit (SPEC §8.2): show what the model meant, never guess.

`apply_edit` calls `diagnose_not_found` / `diagnose_ambiguous` when `old_string` matches
zero or several times; the result follows the unchanged first line of the error, and its
`details` reach programs. The diagnosis only reads: matching stays exact, nothing is
applied, and it costs a bounded amount of work (`SCAN_BUDGET` characters scanned) because
it runs inside the provider's critical section.

A miss is explained in this order: the file too large to search; new_string already there
(the edit looks applied); old_string matching exactly once read's line-number prefixes or
backslash escapes are undone; else the closest region by alignment, with the reasons it
differs; else nothing close, and no line named. `diagnose_block` is the same explanation
for a block of lines a patch expected (e.g. an apply_patch context) but did not find.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .._lf_search import has_crlf
from . import _wording as text_
from ._alignment import MAX_OCCURRENCES, SCAN_BUDGET, Alignment, Haystack, Query, closest, is_close
from ._differences import explain
from ._lookalikes import fold_key

__all__ = ["Diagnosis", "diagnose_ambiguous", "diagnose_block", "diagnose_not_found"]

_BOM = "\ufeff"
_MAX_MATCH_LINES = 20
_PREFIX = re.compile(r"^ *(\d+)(?:: ?|:?\t|→)")


@dataclass(frozen=True, slots=True, kw_only=True)
class Diagnosis:
    """What follows the first line of the error, for the model and for programs."""

    text: str
    """The diagnosis lines (no leading newline); empty when there is nothing to say."""
    details: dict[str, Any] = field(default_factory=dict)
    """The same facts as JSON data: ``closest`` ({start, end} or None) and ``reasons``
    ([{cause, line, message}]) for a miss; ``lines`` and ``count`` for an ambiguous edit."""


def diagnose_not_found(
    text: str, old: str, new: str, *, crlf: bool, budget: int = SCAN_BUDGET
) -> Diagnosis:
    """Why `old` (LF line breaks) does not occur in `text` (no BOM; LF or CRLF), given the
    `new` text the model wanted instead (LF line breaks). `budget` (characters scanned)
    exists for tests; the edit uses `SCAN_BUDGET`."""
    return _diagnose_miss(
        text, old, new, crlf=crlf, subject=text_.OLD_STRING, path=None, budget=budget
    )


def diagnose_block(
    text: str, expected_block: str, path: str, *, whole_lines: bool = True
) -> Diagnosis:
    """Why the lines `expected_block` were expected in the file `path` (whose content is
    `text`, as read) but not found: the closest lines and what differs, or that nothing is
    close. For callers outside `apply_edit`, such as a patch whose context did not match;
    `whole_lines` (the default) says the block's first and last lines are whole lines, not
    pieces of longer ones."""
    if text.startswith(_BOM):
        text = text[1:]
    expected = expected_block.replace("\r\n", "\n")
    return _diagnose_miss(
        text,
        expected,
        None,
        crlf=has_crlf(text),
        subject=text_.EXPECTED_LINES,
        path=path,
        budget=SCAN_BUDGET,
        whole_lines=whole_lines,
    )


def diagnose_ambiguous(
    text: str, old: str, count: int, *, crlf: bool, budget: int = SCAN_BUDGET
) -> Diagnosis:
    """Where each of the `count` matches of `old` starts (the first 20), so the model can
    extend old_string around the one it means. `budget` exists for tests."""
    hay = Haystack(text, crlf=crlf, budget=budget)
    starts = [start for start, _ in hay.first_spans(old, _MAX_MATCH_LINES)]
    if not starts:
        return Diagnosis(text="")
    lines = hay.line_numbers(starts)
    complete = len(starts) == min(count, _MAX_MATCH_LINES)
    return Diagnosis(
        text=text_.match_lines(lines, count, complete),
        details={"lines": lines, "count": count},
    )


def _diagnose_miss(
    text: str,
    old: str,
    new: str | None,
    *,
    crlf: bool,
    subject: text_.Subject,
    path: str | None,
    budget: int,
    whole_lines: bool = False,
) -> Diagnosis:
    hay = Haystack(text, crlf=crlf, budget=budget)
    if not hay.searchable:
        message, reason = text_.too_large(subject, len(text), budget)
        return _failure(message, reason)
    applied = _applied_at(hay, old, new)
    variants = _variants(old, subject)
    for needle, transforms in variants[1:]:
        exact = hay.first_spans(needle, 1)
        if exact:
            start, stop = exact[0]
            return _exact_after(hay, transforms, start, stop, subject)
    best: tuple[Alignment, list[Alignment], Query, list[text_.Reason]] | None = None
    crowded: str | None = None
    for needle, transforms in variants:
        query = Query.of(needle, whole_lines=whole_lines)
        search = closest(hay, query)
        crowded = crowded or search.crowded
        found = search.alignments
        if found and (best is None or found[0].score > best[0].score + 1e-9):
            best = (found[0], list(found[1:]), query, transforms)
    close = best is not None and is_close(best[0])
    if applied is not None and not (close and best is not None and _apart(best[0], applied)):
        return _already_applied(hay, subject, applied)
    if best is not None and close:
        alignment, others, query, transforms = best
        return _near_miss(hay, subject, query, alignment, others, transforms)
    if hay.exhausted:
        message, reason = text_.nothing_close_bounded(subject, len(text))
    elif crowded is not None:
        message, reason = text_.not_distinctive(subject, crowded, MAX_OCCURRENCES)
    else:
        message, reason = text_.nothing_close(subject, path=path)
    return _failure(message, reason)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Place:
    """Where new_string already is."""

    first: int
    """Its first line."""
    last: int
    """Its last line."""
    offset: int
    """Where it starts in the text."""
    places: int
    """How many times it occurs."""


def _applied_at(hay: Haystack, old: str, new: str | None) -> _Place | None:
    """Where new_string is in the file, when its presence says something: it has some text
    of its own and is not just a piece of old_string."""
    if new is None or len(fold_key(new)) < 3 or new in old:
        return None
    found = hay.spans(new, cap=100)
    if not found:
        return None
    start, stop = found[0]
    first = hay.line_numbers([start])[0]
    return _Place(
        first=first, last=first + _breaks(hay.text, start, stop), offset=start, places=len(found)
    )


def _apart(alignment: Alignment, place: _Place) -> bool:
    return alignment.end < place.first or alignment.start > place.last


def _variants(old: str, subject: text_.Subject) -> list[tuple[str, list[text_.Reason]]]:
    """old_string, then what the model may have meant by it: without read's line-number
    prefixes, with backslash escapes undone, or both."""
    variants: list[tuple[str, list[text_.Reason]]] = [(old, [])]
    escaped = "\n" not in old and ("\\n" in old or "\\t" in old)
    bases: list[tuple[str, list[text_.Reason]]] = [(old, [])]
    if escaped:
        unescaped = old.replace("\\r\\n", "\n").replace("\\n", "\n").replace("\\t", "\t")
        reason = text_.escaped_line_breaks(subject, "\\n" in old, "\\t" in old)
        bases.append((unescaped, [reason]))
        variants.append((unescaped, [reason]))
    for base, reasons in bases:
        stripped = _without_prefixes(base)
        if stripped is not None:
            sample = _PREFIX.match(base)
            assert sample is not None
            prefix = text_.line_number_prefixes(subject, sample.group(0))
            variants.append((stripped, [*reasons, prefix]))
    return variants


def _without_prefixes(needle: str) -> str | None:
    """`needle` without a read-style ``<n>: `` at the start of every line, when every line
    has one and the numbers count up by one; else None."""
    lines = needle.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines = lines[:-1]
        ending = "\n"
    else:
        ending = ""
    out: list[str] = []
    expected: int | None = None
    for line in lines:
        match = _PREFIX.match(line)
        if match is None:
            return None
        number = int(match.group(1))
        if expected is not None and number != expected:
            return None
        expected = number + 1
        out.append(line[match.end() :])
    return "\n".join(out) + ending


def _breaks(text: str, start: int, stop: int) -> int:
    """Line breaks inside text[start:stop], not counting one at its very end."""
    inner = text.count("\n", start, stop)
    return inner - 1 if inner and text.endswith("\n", start, stop) else inner


def _exact_after(
    hay: Haystack, transforms: list[text_.Reason], start: int, stop: int, subject: text_.Subject
) -> Diagnosis:
    first = hay.line_numbers([start])[0]
    last = first + _breaks(hay.text, start, stop)
    shown = _lines(hay, first, last, start)
    message = text_.near_miss(subject, first, last, transforms, shown)
    return _result(message, first, last, transforms)


def _near_miss(
    hay: Haystack,
    subject: text_.Subject,
    query: Query,
    alignment: Alignment,
    others: list[Alignment],
    transforms: list[text_.Reason],
) -> Diagnosis:
    reasons = [*transforms, *explain(query, alignment, subject)]
    if len(reasons) == len(transforms):
        reasons.append(_edge_reason(hay, query, alignment, subject))
    shown = _around(alignment, reasons)
    message = text_.near_miss(
        subject,
        alignment.start,
        alignment.end,
        reasons,
        shown,
        others=[(other.start, other.end) for other in others],
        bounded=hay.exhausted,
        cut=query.cut,
    )
    also = [(other.start, other.end) for other in others[:3]]
    return _result(message, alignment.start, alignment.end, reasons, also=also)


def _edge_reason(
    hay: Haystack, query: Query, alignment: Alignment, subject: text_.Subject
) -> text_.Reason:
    """Every line is equal, so the needle's edges are what differ (or something unnamed)."""
    text = hay.text
    last_line = alignment.file_lines[alignment.end]
    if query.whole_lines:
        return text_.unexplained(subject, alignment.start)
    if not query.open_end and not text.endswith("\n") and text.endswith(last_line):
        return text_.final_line_break(subject, alignment.end)
    if not query.open_start and alignment.start == 1:
        return text_.first_line_break(subject)
    return text_.unexplained(subject, alignment.start)


def _around(alignment: Alignment, reasons: list[text_.Reason]) -> list[tuple[int, str]]:
    """The closest lines to show: all of them, or a few around the first named line."""
    start, end = alignment.start, alignment.end
    named = [r.line for r in reasons if r.line is not None and start <= r.line <= end]
    first = start if end - start < 8 or not named else max(start, min(named) - 2)
    return [(n, alignment.file_lines[n]) for n in range(first, min(end, first + 7) + 1)]


def _lines(hay: Haystack, first: int, last: int, anchor: int) -> list[tuple[int, str]]:
    start, lines = hay.lines(first, min(last, first + 7), anchor)
    return [(start + k, line) for k, line in enumerate(lines)]


def _already_applied(hay: Haystack, subject: text_.Subject, place: _Place) -> Diagnosis:
    shown = _lines(hay, place.first, place.last, place.offset)
    message, reason = text_.already_applied(subject, place.first, place.last, place.places, shown)
    return Diagnosis(
        text=message,
        details={
            "closest": None,
            "new_string_at": {"start": place.first, "end": place.last},
            "reasons": [reason.to_json()],
        },
    )


def _result(
    message: str,
    first: int,
    last: int,
    reasons: list[text_.Reason],
    also: list[tuple[int, int]] | None = None,
) -> Diagnosis:
    details: dict[str, Any] = {
        "closest": {"start": first, "end": last},
        "reasons": [reason.to_json() for reason in reasons],
    }
    if also:
        details["also"] = [{"start": start, "end": end} for start, end in also]
    return Diagnosis(text=message, details=details)


def _failure(message: str, reason: text_.Reason) -> Diagnosis:
    return Diagnosis(text=message, details={"closest": None, "reasons": [reason.to_json()]})
