"""Saying a tool's failure in a vendor dialect's own words, and the snippets dialects show.

A dialect's model knows its own commands (Anthropic's ``view``, ``old_str``), not our tool
names. The failure keeps its code and its first line's facts (path, counts); only the fixed
phrases that name our tools, and the remedy, are swapped. Lines after the first (an edit
miss's diagnosis: file content) are never touched.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from dsh_fs.errors import FsErrorCode
from dsh_fs.tools import REMEDIES

__all__ = ["Vocabulary", "numbered", "snippet"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Vocabulary:
    """How one dialect words our failures."""

    phrases: tuple[tuple[str, str], ...] = ()
    """``(ours, theirs)`` fixed phrases replaced in the first line, in order."""
    remedies: Mapping[str, str] = field(default_factory=dict)
    """The remedy for a code (``FS_STALE_VERSION`` …), replacing ours after the em dash."""

    def reword(self, text: str, code: str | None) -> str:
        """`text` (a failed result's ``Error: …``) in this dialect's words."""
        first, newline, rest = text.partition("\n")
        ours = _our_remedy(code)
        theirs = self.remedies.get(code or "")
        if ours is not None and first.endswith(ours):
            first = first[: -len(ours)]
            if theirs is None:
                theirs = REMEDIES[FsErrorCode(code)]
        for old, new in self.phrases:
            first = first.replace(old, new)
        if theirs is not None:
            first = f"{first} \u2014 {theirs}"
        return first + newline + rest


def _our_remedy(code: str | None) -> str | None:
    """The suffix our tools append for `code`, if any."""
    try:
        remedy = REMEDIES.get(FsErrorCode(code)) if code is not None else None
    except ValueError:
        return None
    return None if remedy is None else f" \u2014 {remedy}"


def numbered(lines: list[str], first: int) -> str:
    """``<n>: <text>`` lines, as `read` numbers them."""
    return "\n".join(f"{number}: {text}" for number, text in enumerate(lines, first))


SNIPPET_CONTEXT = 4
"""Unchanged lines shown around a change."""
SNIPPET_LINES = 60
"""At most this many lines in a snippet."""


def snippet(before: str, after: str) -> str:
    """The changed lines of `after` with `SNIPPET_CONTEXT` lines around them, numbered."""
    old, new = _lines(before), _lines(after)
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    tail = 0
    while (
        tail < min(len(old), len(new)) - start
        and old[len(old) - 1 - tail] == new[len(new) - 1 - tail]
    ):
        tail += 1
    first = max(0, start - SNIPPET_CONTEXT)
    last = min(len(new), len(new) - tail + SNIPPET_CONTEXT, first + SNIPPET_LINES)
    return numbered(new[first:last], first + 1)


def _lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]
