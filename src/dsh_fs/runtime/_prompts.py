"""Prompt sections: the guidance each tool contributes to the system prompt."""

from __future__ import annotations

from dataclasses import dataclass

from ._events import Dispose

__all__ = ["PromptRegistry", "PromptSection"]


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptSection:
    """One titled block of guidance."""

    id: str
    """Unique key, e.g. ``"tools:read"``."""
    text: str
    """The guidance, verbatim."""


class PromptRegistry:
    """Sections in registration order; `assemble()` joins them."""

    __slots__ = ("_sections",)

    def __init__(self) -> None:
        self._sections: dict[str, PromptSection] = {}

    def add(self, section: PromptSection) -> Dispose:
        """Add `section`; returns its disposer.

        Raises:
            ValueError: a section with the same id exists.
        """
        if section.id in self._sections:
            raise ValueError(f"prompt section {section.id!r} is already registered")
        self._sections[section.id] = section

        def dispose() -> None:
            if self._sections.get(section.id) is section:
                del self._sections[section.id]

        return dispose

    def sections(self) -> list[PromptSection]:
        """The sections, in registration order."""
        return list(self._sections.values())

    def assemble(self) -> str:
        """The sections' texts, separated by blank lines."""
        return "\n\n".join(section.text for section in self._sections.values())
