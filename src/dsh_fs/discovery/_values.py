"""The discovery tools' canonical values (SPEC §8.1): what a program gets beside the text.

Each holds what its rendering needs, already capped (100 paths, 250 matches, 1000 entries)
with the uncapped counts beside, so a value is as small as what the model sees.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["GlobValue", "GrepMatch", "GrepValue", "ListEntry", "ListValue"]


@dataclass(frozen=True, slots=True, kw_only=True)
class GlobValue:
    """A glob's files."""

    root: str
    """The searched directory as displayed (``.`` for the working directory)."""
    paths: tuple[str, ...]
    """The files shown, as displayed: all of them, oldest first, when they fit; else a
    sample grouped by top-level entry."""
    total: int
    """How many files matched."""
    entries_shown: int = 0
    """How many top-level entries under the root the shown paths reach."""
    entries_total: int = 0
    """How many top-level entries the matching files lie under."""

    def to_json(self) -> dict[str, Any]:
        """``{root, paths, total, entries_shown, entries_total}``."""
        return {
            "root": self.root,
            "paths": list(self.paths),
            "total": self.total,
            "entries_shown": self.entries_shown,
            "entries_total": self.entries_total,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class GrepMatch:
    """One matching line."""

    path: str
    """The file, as displayed."""
    line_number: int
    """1-based."""
    line: str
    """The line's text, cut at 2000 bytes (on a character boundary) when longer."""
    truncated: bool = False
    """Whether `line` was cut."""


@dataclass(frozen=True, slots=True, kw_only=True)
class GrepValue:
    """A grep's matches."""

    matches: tuple[GrepMatch, ...]
    """The first matches: files in path order, lines ascending."""
    total: int
    """How many lines matched in all."""

    def to_json(self) -> dict[str, Any]:
        """``{matches: [{path, line_number, line, truncated}], total}``."""
        return {
            "matches": [
                {
                    "path": match.path,
                    "line_number": match.line_number,
                    "line": match.line,
                    "truncated": match.truncated,
                }
                for match in self.matches
            ],
            "total": self.total,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class ListEntry:
    """One child of a listed directory."""

    name: str
    """Its name (escaped where it is not valid UTF-8)."""
    type: str
    """``file``, ``directory``, ``symlink`` or ``other``."""
    size: int
    """Size in bytes."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ListValue:
    """A directory's entries."""

    path: str
    """The directory's display path."""
    entries: tuple[ListEntry, ...]
    """The first entries in name order."""
    total: int
    """How many entries the directory has."""

    def to_json(self) -> dict[str, Any]:
        """``{path, entries: [{name, type, size}], total}``."""
        return {
            "path": self.path,
            "entries": [
                {"name": entry.name, "type": entry.type, "size": entry.size}
                for entry in self.entries
            ],
            "total": self.total,
        }
