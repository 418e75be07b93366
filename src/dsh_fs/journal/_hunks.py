"""Revert by hunk (SPEC §9.1): a text change's hunks, numbered as `diff` shows them, taken
back one by one from a file that changed since, each only where the lines the change wrote
are still exactly there with their context, found once. Pure: lines in, lines out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ._diff import matcher

__all__ = ["CONTEXT", "Hunk", "HunkResult", "hunks", "revert"]

CONTEXT = 3
"""Lines of context a hunk carries on each side (as `diff` shows it) and needs to be found."""


@dataclass(frozen=True, slots=True, kw_only=True)
class HunkResult:
    """What a revert did to one hunk: ``reverted``, or ``refused`` with the reason."""

    n: int
    """The hunk's number, from 1 in `diff`'s order."""
    result: str
    """``reverted`` or ``refused``."""
    reason: str | None
    """Why it was refused (None when reverted)."""

    def to_json(self) -> dict[str, object]:
        """``{n, result, reason}``."""
        return {"n": self.n, "result": self.result, "reason": self.reason}


@dataclass(frozen=True, slots=True, kw_only=True)
class Hunk:
    """One hunk of a change: its lines before and after, context included."""

    n: int
    """Its number, from 1 in `diff`'s order."""
    after_start: int
    """Where its block starts in the after-image (a line index)."""
    before: tuple[str, ...]
    """The block as it was before the change (what a revert puts back)."""
    after: tuple[str, ...]
    """The block as the change wrote it, with its context (what a revert looks for)."""
    at_start: bool
    """It has fewer than `CONTEXT` lines before it: it must be found at the file's start."""
    at_end: bool
    """It has fewer than `CONTEXT` lines after it: it must be found at the file's end."""


def hunks(before: Sequence[str], after: Sequence[str]) -> list[Hunk]:
    """The hunks `diff` shows for `before` → `after` (lines with their ends), in its order
    and with its context (the same `matcher`)."""
    found = []
    for n, group in enumerate(matcher(before, after).get_grouped_opcodes(CONTEXT), start=1):
        first, last = group[0], group[-1]
        lead = first[2] - first[1] if first[0] == "equal" else 0
        trail = last[2] - last[1] if last[0] == "equal" else 0
        found.append(
            Hunk(
                n=n,
                after_start=first[3],
                before=tuple(before[first[1] : last[2]]),
                after=tuple(after[first[3] : last[4]]),
                # A group carries fewer context lines only where the file starts or ends.
                at_start=lead < CONTEXT,
                at_end=trail < CONTEXT,
            )
        )
    return found


def revert(
    current: Sequence[str], chosen: Sequence[Hunk], after: Sequence[str] | None = None
) -> tuple[list[str], list[HunkResult]]:
    """`current` with each of the `chosen` hunks reverted where its block is found exactly
    once (anchored at the file's start or end when it has less context there), and what
    became of each hunk; a hunk not found, found more than once, or overlapping a hunk
    reverted before it is refused and `current` keeps it.

    With `after` (the lines the change wrote): in a file still exactly as the change left
    it, every hunk is at its own place, found there however often its lines appear
    elsewhere (a file of repeated lines holds a small hunk's block many times). "Found
    once" is how a hunk is located in a file that changed since; there it still holds."""
    unchanged = after is not None and list(current) == list(after)
    results: list[HunkResult] = []
    placed: list[tuple[int, Hunk]] = []
    for hunk in chosen:
        where = _places(current, hunk)
        if unchanged and hunk.after_start in where:
            where = [hunk.after_start]
        if len(where) != 1:
            results.append(_refused(hunk, _why(current, hunk, len(where))))
            continue
        start = where[0]
        end = start + len(hunk.after)
        clash = next(
            (other for at, other in placed if start < at + len(other.after) and at < end), None
        )
        if clash is not None:
            results.append(
                _refused(hunk, f"its lines overlap hunk {clash.n}'s now; this hunk was kept")
            )
            continue
        placed.append((start, hunk))
        results.append(HunkResult(n=hunk.n, result="reverted", reason=None))
    lines: list[str] = []
    done = 0
    for start, hunk in sorted(placed, key=lambda item: item[0]):
        lines.extend(current[done:start])
        lines.extend(hunk.before)
        done = start + len(hunk.after)
    lines.extend(current[done:])
    return lines, results


def _refused(hunk: Hunk, reason: str) -> HunkResult:
    return HunkResult(n=hunk.n, result="refused", reason=reason)


def _places(current: Sequence[str], hunk: Hunk) -> list[int]:
    """Where the hunk's block is in `current` (line indexes), honouring its anchors."""
    block, size = hunk.after, len(hunk.after)
    if hunk.at_start:
        candidates: Sequence[int] = [0]
    elif hunk.at_end:
        candidates = [len(current) - size]
    elif size:
        first = block[0]
        candidates = [
            i for i, line in enumerate(current[: len(current) - size + 1]) if line == first
        ]
    else:
        candidates = []
    places = []
    for start in candidates:
        if start < 0 or start + size > len(current):
            continue
        if hunk.at_end and start + size != len(current):
            continue
        if tuple(current[start : start + size]) == block:
            places.append(start)
    return places


def _why(current: Sequence[str], hunk: Hunk, count: int) -> str:
    """Why `hunk` can't be reverted in `current`: found `count` times (not once), or which
    line at its place differs now."""
    if count > 1:
        return f"its lines are found {count} times now; this hunk was kept"
    start = hunk.after_start
    for offset, line in enumerate(hunk.after):
        here = start + offset
        if here >= len(current):
            return f"the file ends before line {here + 1} now; this hunk was kept"
        if current[here] != line:
            return f"line {here + 1} changed since; this hunk was kept"
    if hunk.at_end:
        return f"the file no longer ends after line {start + len(hunk.after)}; this hunk was kept"
    return "its lines are not found as the change left them; this hunk was kept"
