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
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .._lf_search import has_crlf
from . import _wording as text_
from ._alignment import (
    MAX_OCCURRENCES,
    SCAN_BUDGET,
    Alignment,
    Haystack,
    Query,
    align_at,
    closest,
    is_close,
)
from ._differences import explain
from ._lookalikes import fold_key
from ._names import named_place
from ._stitched import Stitched, stitched

__all__ = ["Diagnosis", "diagnose_ambiguous", "diagnose_block", "diagnose_not_found"]

_BOM = "\ufeff"
_MAX_MATCH_LINES = 20
_MAX_OTHERS = 3
_ANCHOR_MARGIN = 0.15
_LOOSE = 0.55  # an alignment this close, though not close, is named with a hedge
_LOOSE_WEIGHT = 24  # and only for a needle with this many non-whitespace characters
_HOLDS = 0.9  # a line paired this closely is still there, nearly as written
_TRUSTED = 0.9  # an alignment this close is not second-guessed by anchors elsewhere
_ANCHOR_KEY = 6  # a verbatim line anchors only with this many non-whitespace characters
_ANCHOR_WEIGHT = 10
_ANCHOR_SHARE = 0.3
_MAX_ANCHOR_LINES = 12
_TAB_WIDTHS = (4, 8, 2)
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
    applied = _applied_at(hay, old, new) or _applied_reindented(hay, old, new)
    variants = _variants(old, subject)
    for needle, transforms in variants[1:]:
        exact = hay.first_spans(needle, 1)
        if exact:
            start, stop = exact[0]
            return _exact_after(hay, transforms, [(start, stop)], subject)
    rewrites = _rewrites(old)
    # Each rewrite is one scan; leave the alignment the budget of a few scans of its own.
    for needle, reasons_at in rewrites[: hay.affords(len(rewrites) + 4) - 4]:
        exact = hay.first_spans(needle, 1 + _MAX_OTHERS)
        if exact:
            start, stop = exact[0]
            return _exact_after(hay, reasons_at(hay, start, subject), exact, subject)
    best: _Best | None = None
    crowded: str | None = None
    for needle, transforms in variants:
        query = Query.of(needle, whole_lines=whole_lines)
        search = closest(hay, query)
        crowded = crowded or search.crowded
        found = search.alignments
        if found and (best is None or found[0].score > best.alignment.score + 1e-9):
            best = _Best(
                alignment=found[0],
                others=list(found[1:]),
                similar=list(search.similar),
                query=query,
                transforms=transforms,
            )
    close = best is not None and is_close(best.alignment)
    loose = best if best is not None and not close else None
    if best is not None and not close:
        best = None
    anchored = None
    if best is None or best.alignment.score < _TRUSTED:
        anchored = _anchored(hay, Query.of(old, whole_lines=whole_lines), subject)
    if applied is not None and _applied_by_evidence(hay, old, new, applied, best):
        similar = None
        if best is not None and _apart(best.alignment, applied):
            similar = (best.alignment.start, best.alignment.end)
        return _already_applied(hay, subject, applied, similar)
    pieces = stitched(hay, Query.of(old, whole_lines=whole_lines))
    if pieces is not None and (best is None or not _covers(best.alignment, pieces)):
        return _stitched(subject, pieces)
    if anchored is not None and (best is None or _anchor_wins(anchored, best)):
        return anchored.diagnosis
    if best is not None:
        return _near_miss(hay, subject, best)
    if not hay.exhausted:
        loosely = _loosely(hay, subject, Query.of(old, whole_lines=whole_lines), loose)
        if loosely is not None:
            return loosely
    if hay.exhausted:
        message, reason = text_.nothing_close_bounded(subject, len(text))
    elif crowded is not None:
        message, reason = text_.not_distinctive(subject, crowded, MAX_OCCURRENCES)
    else:
        message, reason = text_.nothing_close(subject, path=path)
    return _failure(message, reason)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Best:
    """The closest alignment found, and what else is about as close."""

    alignment: Alignment
    others: list[Alignment]
    """Equally close places."""
    similar: list[Alignment]
    """Places nearly as close (within `NEAR`)."""
    query: Query
    transforms: list[text_.Reason]


@dataclass(frozen=True, slots=True, kw_only=True)
class _Anchored:
    """A miss explained by lines of old_string found verbatim, once, in the file."""

    start: int
    end: int
    score: float
    """The anchored region's alignment score."""
    diagnosis: Diagnosis


def _placed(
    hay: Haystack, query: Query, alignment: Alignment, reasons: list[text_.Reason]
) -> list[text_.Reason]:
    """`reasons`, with a line said to be "not in the file here" that the file has, once, as
    a whole line outside the closest text said to be there instead (never a false "not in
    the file" of a line that is further on)."""
    missing = next(
        (
            p.query
            for p in alignment.pairs
            if p.query is not None and p.line is None and p.moved is None
        ),
        None,
    )
    if missing is None:
        return reasons
    line = query.lines[missing]
    if not _distinctive(line):
        return reasons
    found = hay.spans("\n" + line + "\n", cap=1)
    if not found or len(found) != 1:
        return reasons
    number = hay.line_numbers([found[0][0] + 1])[0]
    if alignment.start <= number <= alignment.end:
        return reasons
    return [
        text_.missing_here(reason, number) if reason.cause == "missing_line" else reason
        for reason in reasons
    ]


def _loosely(
    hay: Haystack, subject: text_.Subject, query: Query, loose: _Best | None
) -> Diagnosis | None:
    """Nothing is close, but the file defines (or imports from) a name old_string's line
    does, once; else an alignment short of close yet well above chance: named, hedged."""
    named = named_place(hay, query)
    if named is not None:
        start, end = named.start, named.end
        clause = text_.defines_once(subject, start, named.what, named.name, named.index + 1)
        shown = [(start + k, line) for k, line in enumerate(named.lines[:8])]
    elif (
        loose is not None
        and loose.alignment.score >= _LOOSE
        and loose.alignment.weight >= _LOOSE_WEIGHT
        and not loose.others
    ):
        alignment = loose.alignment
        start, end = alignment.start, alignment.end
        clause = text_.shares_text(start, end, round(alignment.score * 100))
        shown = [(n, alignment.file_lines[n]) for n in range(start, min(end, start + 7) + 1)]
    else:
        return None
    reason = text_.loosely_similar(subject, start, clause)
    message = text_.loose(subject, start, end, reason, shown)
    return _result(message, start, end, [reason])


def _covers(alignment: Alignment, pieces: Stitched) -> bool:
    """The alignment already spans every piece (a gap of a line or two, named as extra
    lines): it explains the miss as well."""
    return alignment.start <= pieces.start and pieces.end <= alignment.end


def _stitched(subject: text_.Subject, pieces: Stitched) -> Diagnosis:
    spans = [(piece.start, piece.end) for piece in pieces.pieces]
    reason = text_.left_out_lines(subject, spans, pieces.gaps())
    shown = list(pieces.lines.items())
    message = text_.stitched(subject, pieces.start, pieces.end, reason, shown)
    return _result(message, pieces.start, pieces.end, [reason])


def _applied_by_evidence(
    hay: Haystack, old: str, new: str | None, applied: _Place, best: _Best | None
) -> bool:
    """Whether new_string's place `applied` says the edit was made, decided by what the
    file holds rather than by how close old_string came elsewhere. new_string adds lines of
    its own and old_string's kept lines (those new_string has too) are found once in the
    file, inside new_string's place: it was. Else the lines the edit would remove, still
    there together where old_string is closest (or anywhere, a block of them), or every one
    of them nearly as written in the closest text: it was not. Without either, new_string
    once in the file wins."""
    if new is None:
        return False
    old_lines, new_lines = old.split("\n"), new.split("\n")
    had = {line.strip() for line in old_lines}
    kept = {line.strip() for line in new_lines}
    added = "".join(line for line in new_lines if line.strip() not in had)
    if _distinctive(added):
        for line in old_lines:
            key = line.strip()
            if key in kept and _distinctive(key):
                found = hay.spans(key, cap=1)
                if found and len(found) == 1:
                    number = hay.line_numbers([found[0][0]])[0]
                    if applied.first <= number <= applied.last:
                        return True
    removed = _longest_run(old_lines, kept)
    if removed and _distinctive("".join(removed)):
        found = hay.spans("\n".join(removed), cap=8)
        if found:
            numbers = hay.line_numbers([start for start, _ in found])
            if best is None:
                if len(removed) > 1:
                    return False
            elif any(best.alignment.start <= n <= best.alignment.end for n in numbers):
                return False
    if best is not None and _apart(best.alignment, applied) and _holds(best, kept):
        return False
    # No score bar: a block elsewhere a word away from old_string, whose lines to remove are
    # not there, does not outrank the one place new_string stands.
    return best is None or not _apart(best.alignment, applied) or applied.places == 1


def _holds(best: _Best, kept: set[str]) -> bool:
    """Every line the edit would remove is in the closest text, nearly as written."""
    removed = {
        index
        for index, line in enumerate(best.query.lines)
        if line.strip() and line.strip() not in kept
    }
    if not removed:
        return False
    paired = {
        pair.query: pair.similarity
        for pair in best.alignment.pairs
        if pair.query is not None and pair.line is not None
    }
    return all(paired.get(index, 0.0) >= _HOLDS for index in removed)


def _longest_run(lines: list[str], kept: set[str]) -> list[str]:
    """The longest run of adjacent `lines` not in `kept` (compared stripped)."""
    best: list[str] = []
    run: list[str] = []
    for line in lines:
        if line.strip() and line.strip() not in kept:
            run.append(line)
            if len(run) > len(best):
                best = list(run)
        else:
            run = []
    return best


def _distinctive(text: str) -> bool:
    return len(fold_key(text)) >= _ANCHOR_KEY


def _anchor_wins(anchored: _Anchored, best: _Best) -> bool:
    """Verbatim lines found once are strong evidence: they win over an alignment elsewhere
    unless it is clearly closer; the same place is explained by the alignment."""
    alignment = best.alignment
    if anchored.start <= alignment.end and alignment.start <= anchored.end:
        return False
    return anchored.score >= alignment.score - _ANCHOR_MARGIN


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
    reindented: bool = False
    """Its lines are there indented otherwise (new_string itself is not)."""


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


def _applied_reindented(hay: Haystack, old: str, new: str | None) -> _Place | None:
    """Where new_string's lines are, once, each indented otherwise (a block moved into or
    out of a function after the edit), when it has lines of its own that old_string lacks."""
    if new is None:
        return None
    wanted = [line.strip() for line in new.split("\n") if line.strip()]
    had = {line.strip() for line in old.split("\n")}
    if len(wanted) < 2 or all(line in had for line in wanted):
        return None
    if not _distinctive("".join(line for line in wanted if line not in had)):
        return None
    head = max(wanted, key=len)
    found = hay.spans(head, cap=8)
    if not found:
        return None
    places: list[tuple[int, int, int]] = []
    at = wanted.index(head)
    for start, _ in found:
        number = hay.line_numbers([start])[0]
        first, lines = hay.lines(number - at - 2, number + len(wanted) + 2, start)
        texts = [(first + k, line.strip()) for k, line in enumerate(lines) if line.strip()]
        keys = [text for _, text in texts]
        for k in range(len(keys) - len(wanted) + 1):
            if keys[k : k + len(wanted)] == wanted and texts[k + at][0] == number:
                places.append((texts[k][0], texts[k + len(wanted) - 1][0], start))
    if len(places) != 1:
        return None
    first, last, offset = places[0]
    return _Place(first=first, last=last, offset=offset, places=1, reindented=True)


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
    hay: Haystack,
    transforms: list[text_.Reason],
    spans: list[tuple[int, int]],
    subject: text_.Subject,
) -> Diagnosis:
    """old_string, once rewritten, matches exactly at `spans` (the first is named)."""
    places: list[tuple[int, int]] = []
    for start, stop in spans:
        first = hay.line_numbers([start])[0]
        places.append((first, first + _breaks(hay.text, start, stop)))
    first, last = places[0]
    shown = _lines(hay, first, last, spans[0][0])
    message = text_.near_miss(subject, first, last, transforms, shown, others=places[1:])
    return _result(message, first, last, transforms, also=places[1:])


def _near_miss(hay: Haystack, subject: text_.Subject, best: _Best) -> Diagnosis:
    query, alignment, transforms = best.query, best.alignment, best.transforms
    reasons = [*transforms, *_placed(hay, query, alignment, explain(query, alignment, subject))]
    if len(reasons) == len(transforms):
        reasons.append(_edge_reason(hay, query, alignment, subject))
    shown = _around(alignment, reasons)
    others = [(other.start, other.end) for other in best.others]
    similar = [(other.start, other.end) for other in best.similar]
    message = text_.near_miss(
        subject,
        alignment.start,
        alignment.end,
        reasons,
        shown,
        others=others,
        similar=similar,
        bounded=hay.exhausted,
        cut=query.cut,
    )
    also = (others[:_MAX_OTHERS] + similar)[: _MAX_OTHERS + 2]
    return _result(message, alignment.start, alignment.end, reasons, also=also)


# --- rewrites: old_string as it would read with line endings, indentation or letters fixed --

_ReasonsAt = Callable[[Haystack, int, text_.Subject], list[text_.Reason]]


def _rewrites(old: str) -> list[tuple[str, _ReasonsAt]]:
    """What the model may have meant, each with the reasons to give when it matches
    exactly at an offset: carriage returns as line breaks, the other Unicode composition,
    indentation by tabs instead of spaces (or the reverse), no blank lines between lines.
    Exact searches only, so they cost little in a file of any size and a short needle is
    explained as well as a long."""
    out: list[tuple[str, _ReasonsAt]] = []
    if "\r" in old:
        for fixed in (old.replace("\r", "\n"), old.replace("\r", "")):
            if fixed and fixed.strip():

                def endings(
                    hay: Haystack, start: int, subject: text_.Subject
                ) -> list[text_.Reason]:
                    line = hay.line_numbers([start])[0]
                    return [text_.line_endings(subject, line, hay.crlf)]

                out.append((fixed, endings))
    if not old.isascii():
        for form in ("NFC", "NFD"):
            fixed = unicodedata.normalize(form, old)
            if fixed != old:
                out.append((fixed, _composition(old, fixed)))
    # A block of lines gets its indentation compared by the alignment; a single line (a
    # short needle above all) is better served by the exact search.
    for fixed, lines in _reindented(old) if "\n" not in old.strip("\n") else []:
        out.append((fixed, _indentation(old, fixed, lines)))
    unblanked = _unblanked(old)
    if unblanked is not None:
        out.append((unblanked[0], _blank_lines(unblanked[1])))
    return out


def _unblanked(old: str) -> tuple[str, list[int]] | None:
    """old_string without the blank lines between its other lines (a short needle such as
    ``});\n\n});`` is too short for the alignment to place), with their indexes."""
    lines = old.split("\n")
    blank = [k for k in range(1, len(lines) - 1) if not lines[k].strip()]
    if not blank or len(lines) - len(blank) < 2:
        return None
    dropped = set(blank)
    return "\n".join(line for k, line in enumerate(lines) if k not in dropped), blank


def _blank_lines(blank: list[int]) -> _ReasonsAt:
    def reasons(hay: Haystack, start: int, subject: text_.Subject) -> list[text_.Reason]:
        first = hay.line_numbers([start])[0]
        after = first + blank[0] - 1  # no blank line of old_string comes before this one
        return [text_.blank_line(subject, blank[0] + 1, after, len(blank) - 1)]

    return reasons


def _composition(old: str, fixed: str) -> _ReasonsAt:
    def reasons(hay: Haystack, start: int, subject: text_.Subject) -> list[text_.Reason]:
        clusters = _clusters_differing(old, fixed)
        (_, piece_old), (i_fixed, piece_fixed) = clusters[0]
        offset = start + i_fixed
        line = hay.line_numbers([offset])[0]
        column = offset - hay.text.rfind("\n", 0, offset)
        return [
            text_.unicode_form(subject, line, column, piece_fixed, piece_old, len(clusters) - 1)
        ]

    return reasons


def _clusters_differing(old: str, fixed: str) -> list[tuple[tuple[int, str], tuple[int, str]]]:
    """Each letter with its combining marks that is composed differently in the two texts,
    as ((offset, text) in `old`, (offset, text) in `fixed`)."""
    out: list[tuple[tuple[int, str], tuple[int, str]]] = []
    i = j = 0
    while i < len(old) and j < len(fixed):
        i2, j2 = _cluster_end(old, i), _cluster_end(fixed, j)
        if old[i:i2] != fixed[j:j2]:
            out.append(((i, old[i:i2]), (j, fixed[j:j2])))
        i, j = i2, j2
    return out or [((0, old[:1]), (0, fixed[:1]))]


def _cluster_end(text: str, start: int) -> int:
    end = start + 1
    while end < len(text) and unicodedata.combining(text[end]):
        end += 1
    return end


def _reindented(old: str) -> list[tuple[str, list[int]]]:
    """old_string with the indentation of its lines converted from spaces to tabs (or tabs
    to spaces), for each usual tab width, with the indexes of the lines changed."""
    lines = old.split("\n")
    leads = [line[: len(line) - len(line.lstrip(" \t"))] for line in lines]
    if not any(leads) or not any(line.strip() for line in lines):
        return []
    out: list[tuple[str, list[int]]] = []
    seen: set[str] = set()
    for width in _TAB_WIDTHS:
        for convert in (_to_tabs, _to_spaces):
            fixed_leads = [convert(lead, width) for lead in leads]
            changed = [k for k, (a, b) in enumerate(zip(leads, fixed_leads, strict=True)) if a != b]
            if not changed:
                continue
            fixed = "\n".join(
                lead + line[len(old_lead) :]
                for lead, old_lead, line in zip(fixed_leads, leads, lines, strict=True)
            )
            if fixed not in seen:
                seen.add(fixed)
                out.append((fixed, changed))
    return out


def _to_tabs(lead: str, width: int) -> str:
    if "\t" in lead or len(lead) < width:
        return lead
    return "\t" * (len(lead) // width) + " " * (len(lead) % width)


def _to_spaces(lead: str, width: int) -> str:
    if " " in lead:
        return lead
    return lead.replace("\t", " " * width)


def _indentation(old: str, fixed: str, changed: list[int]) -> _ReasonsAt:
    old_lines, fixed_lines = old.split("\n"), fixed.split("\n")

    def reasons(hay: Haystack, start: int, subject: text_.Subject) -> list[text_.Reason]:
        first = hay.line_numbers([start])[0]
        k = changed[0]
        in_file = fixed_lines[k][: len(fixed_lines[k]) - len(fixed_lines[k].lstrip(" \t"))]
        in_old = old_lines[k][: len(old_lines[k]) - len(old_lines[k].lstrip(" \t"))]
        return [text_.tabs_vs_spaces(subject, [first + j for j in changed], in_file, in_old)]

    return reasons


# --- anchors: lines of old_string found verbatim, once ---------------------------------------


def _anchored(hay: Haystack, query: Query, subject: text_.Subject) -> _Anchored | None:
    """When lines of old_string occur verbatim, as whole lines, exactly once in the file
    (the model remembered the start of a block and invented the rest, or the block changed
    since), the region they anchor: its lines, how far they match, and the first line that
    differs."""
    count = len(query.lines)
    if count < 2:
        return None
    weights = [len(fold_key(line)) for line in query.lines]
    total = sum(weights)
    votes: dict[int, list[int]] = {}
    offsets: dict[int, int] = {}
    indexes = [k for k in range(count) if weights[k] >= _ANCHOR_KEY][:_MAX_ANCHOR_LINES]
    for index in indexes:
        line = query.lines[index]
        before = "" if index == 0 and query.open_start else "\n"
        after = "" if index == count - 1 and query.open_end else "\n"
        found = hay.spans(before + line + after, cap=1)
        if hay.exhausted:
            return None
        if not found:
            continue
        offset = found[0][0] + len(before)
        number = hay.line_numbers([offset])[0]
        start = number - index
        votes.setdefault(start, []).append(index)
        offsets.setdefault(start, offset)
    if not votes:
        return None
    start = max(votes, key=lambda s: (sum(weights[k] for k in votes[s]), -min(votes[s])))
    found_at = votes[start]
    weight = sum(weights[k] for k in found_at)
    if (
        start < 1
        or weight < _ANCHOR_WEIGHT
        or (0 not in found_at and weight < _ANCHOR_SHARE * total)
    ):
        return None
    first, window = hay.lines(start, start + count - 1, offsets[start])
    if first != start or not window:
        return None
    alignment = align_at(hay, query, start, offsets[start])
    end = start + len(window) - 1
    if alignment is not None and alignment.start >= start:
        end = max(end, alignment.end)
    differs = next(
        (
            start + k
            for k, line in enumerate(window)
            if k >= len(query.lines) or line != query.lines[k]
        ),
        None,
    )
    if differs is not None and differs == start and 0 in found_at and query.open_start:
        # An open first line is the end of the file's line: it matched.
        differs = next(
            (start + k for k, line in enumerate(window) if k and line != query.lines[k]), None
        )
    lines = [start + k for k in found_at]
    reasons = [text_.partial_match(subject, found_at, lines, differs)]
    if alignment is not None:
        reasons.extend(
            r for r in explain(query, alignment, subject) if r.cause not in ("unexplained",)
        )
    shown_from = max(start, (differs or start) - 2) if end - start >= 8 else start
    shown_first, shown_lines = hay.lines(shown_from, min(end, shown_from + 7), offsets[start])
    shown = [(shown_first + k, line) for k, line in enumerate(shown_lines)]
    message = text_.near_miss(subject, start, end, reasons, shown, bounded=hay.exhausted)
    score = alignment.score if alignment is not None else weight / max(total, 1)
    return _Anchored(
        start=start,
        end=end,
        score=max(score, weight / max(total, 1)),
        diagnosis=_result(message, start, end, reasons),
    )


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


def _already_applied(
    hay: Haystack, subject: text_.Subject, place: _Place, similar: tuple[int, int] | None
) -> Diagnosis:
    shown = _lines(hay, place.first, place.last, place.offset)
    message, reason = text_.already_applied(
        subject, place.first, place.last, place.places, shown, similar, place.reindented
    )
    details: dict[str, Any] = {
        "closest": None,
        "new_string_at": {"start": place.first, "end": place.last},
        "reasons": [reason.to_json()],
    }
    if similar is not None:
        details["also"] = [{"start": similar[0], "end": similar[1]}]
    return Diagnosis(text=message, details=details)


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
