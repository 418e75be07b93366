"""The tools' canonical values: what a program gets beside the rendered text (SPEC §6).

Each value holds everything its rendering needs, and `to_json` gives the SPEC keys plus a
few clearly additive ones (``output_capped``, ``replacements``, ``replace_all``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["EditValue", "ReadValue", "WriteValue"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadValue:
    """A successful read: a window of numbered lines."""

    path: str
    """The display path."""
    offset: int
    """Number of the first line asked for (and of the first line in `lines`)."""
    lines: tuple[str, ...]
    """The lines' display texts (no line ending, long lines truncated), numbered from
    `offset`."""
    total_lines: int
    """How many lines the whole file has."""
    output_capped: bool = False
    """The 50 KiB output cap stopped the window early."""

    @property
    def last_line(self) -> int:
        """Number of the last line shown (``offset - 1`` when none is)."""
        return self.offset + len(self.lines) - 1

    def to_json(self) -> dict[str, Any]:
        """``{path, offset, lines: [{number, text}], total_lines, output_capped}``."""
        return {
            "path": self.path,
            "offset": self.offset,
            "lines": [
                {"number": number, "text": text}
                for number, text in enumerate(self.lines, self.offset)
            ],
            "total_lines": self.total_lines,
            "output_capped": self.output_capped,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class WriteValue:
    """A successful write."""

    path: str
    """The display path."""
    operation: Literal["create", "update"]
    """Whether the file was created or replaced."""
    before: str | None
    """The prior text; None for a create (or when the provider did not keep it)."""
    after: str
    """The text now in the file."""

    def to_json(self) -> dict[str, Any]:
        """``{path, operation, before, after}``."""
        return {
            "path": self.path,
            "operation": self.operation,
            "before": self.before,
            "after": self.after,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class EditValue:
    """A successful edit."""

    path: str
    """The display path."""
    before: str
    """The text before the edit."""
    after: str
    """The text after the edit."""
    replacements: int = 1
    """How many occurrences were replaced."""
    replace_all: bool = False
    """Whether the call asked for every occurrence (this changes the rendered sentence)."""

    def to_json(self) -> dict[str, Any]:
        """``{path, before, after, replacements, replace_all}``."""
        return {
            "path": self.path,
            "before": self.before,
            "after": self.after,
            "replacements": self.replacements,
            "replace_all": self.replace_all,
        }
