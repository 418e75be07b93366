"""A definition or import old_string shares with the file, by name (issue 41, pattern 3).

A model recalls a ``def`` line with another signature and invents its body, or writes an
import of the names the file imports another way: no line of old_string is in the file and
nothing aligns closely, yet the name it defines (or the module it imports from) is in the
file exactly once. That place is named, hedged ("loosely similar"), never guessed at when
the name occurs twice or not at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ._alignment import Haystack, Query

__all__ = ["Named", "named_place"]

_DEFINITION = re.compile(
    r"^\s*(?:export\s+)?(?:pub(?:\([\w:]+\))?\s+)?(?:async\s+)?(?:static\s+)?"
    r"(def|class|function|func|fn|struct|enum|trait|interface|impl|type|module)\s+"
    r"\*?([A-Za-z_$][\w$]*)"
)
_IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import\b|import\s+([\w.]+)\s*$|use\s+([\w:]+))")
_MAX_BLOCK = 40
_MIN_NAME = 3


@dataclass(frozen=True, slots=True, kw_only=True)
class Named:
    """The file's only definition (or import) of a name old_string's line defines."""

    index: int
    """The line of old_string (0-based) that names it."""
    name: str
    """The name (or the module)."""
    what: str
    """``defines`` or ``imports from``."""
    start: int
    """The file line where it is."""
    end: int
    """The last line of its block (by indentation), at most `_MAX_BLOCK` lines on."""
    lines: tuple[str, ...]
    """The texts of lines `start`..`end`."""


def named_place(hay: Haystack, query: Query) -> Named | None:
    """The first definition or import of old_string whose name the file has once, with the
    same keyword, as its own line's; None when there is none."""
    for index, line in enumerate(query.lines):
        definition = _DEFINITION.match(line)
        if definition is not None:
            keyword, name = definition.group(1), definition.group(2)
            if len(name) >= _MIN_NAME:
                place = _once(hay, [f"{keyword} {name}", f"{keyword} *{name}"])
                if place is not None:
                    return _block(hay, index, name, "defines", place)
            continue
        imported = _IMPORT.match(line)
        if imported is not None:
            module = next(group for group in imported.groups() if group)
            if len(module) >= _MIN_NAME:
                needles = [f"from {module} import", f"import {module}", f"use {module}"]
                place = _once(hay, needles)
                if place is not None:
                    return _block(hay, index, module, "imports from", place)
    return None


def _once(hay: Haystack, needles: list[str]) -> int | None:
    """The offset of the line that is the only one to start with one of `needles` (after
    indentation and words such as ``pub`` or ``async``) and end the name there."""
    places: set[int] = set()
    text = hay.text
    for needle in needles:
        found = hay.spans(needle, cap=8)
        if found is None:
            return None  # too many to tell
        for start, stop in found:
            line_start = text.rfind("\n", 0, start) + 1
            after = text[stop : stop + 1]
            if _PREFIX.fullmatch(text[line_start:start]) and not _word_char(after):
                places.add(line_start)
    return places.pop() if len(places) == 1 else None


_PREFIX = re.compile(r"[ \t]*(?:[\w()]+[ \t]+)*")


def _block(hay: Haystack, index: int, name: str, what: str, offset: int) -> Named:
    """The definition's block: its line and the lines after it indented deeper (or blank),
    up to `_MAX_BLOCK`; an import's statement up to its closing bracket."""
    start = hay.line_numbers([offset])[0]
    first, lines = hay.lines(start, start + _MAX_BLOCK, offset)
    head = lines[0] if lines else ""
    indent = len(head) - len(head.lstrip())
    end = start
    opened = head.count("(") - head.count(")")
    for k, line in enumerate(lines[1:], 1):
        if what == "imports from":
            if opened <= 0:
                break
            opened += line.count("(") - line.count(")")
            end = first + k
            continue
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            if line.strip()[:1] in ")]}" and len(line) - len(line.lstrip()) == indent:
                end = first + k  # a closing bracket or brace ends the block
            break
        if line.strip():
            end = first + k
    block = tuple(lines[start - first : end - first + 1])
    return Named(index=index, name=name, what=what, start=start, end=end, lines=block)


def _word_char(char: str) -> bool:
    return bool(char) and (char.isalnum() or char in "_$")
