"""What the tool seam shares below the context: the failures a tool may report, and what a
host may assume of its effects. (`Tool` itself is defined with the `Context` its `run`
takes, in `_context`: apart, each would import the other.)"""

from __future__ import annotations

from dataclasses import dataclass

from dsh_fs.errors import ToolErrorCode

__all__ = ["ToolAnnotations", "ToolArgumentError", "ToolError"]


class ToolError(Exception):
    """A tool failure that is not a filesystem error; shown to the model as `Error: <message>`.

    Attributes:
        code: The machine-routable code (e.g. ``INVALID_ARGS``, ``UNKNOWN_TOOL``).
        message: The sentence the model reads.
    """

    code: str
    message: str

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class ToolArgumentError(ToolError):
    """The model's arguments do not fit the tool's schema or its value rules (`INVALID_ARGS`)."""

    def __init__(self, message: str) -> None:
        super().__init__(ToolErrorCode.INVALID_ARGS.value, message)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolAnnotations:
    """What a host may assume about a tool's effects (MCP's tool annotations): hints for
    deciding what to auto-approve, never a security boundary."""

    title: str | None = None
    """A human-readable name for UIs."""
    read_only: bool = False
    """The tool never changes its environment."""
    destructive: bool = True
    """A change may overwrite or remove what was there (meaningful when not read-only)."""
    idempotent: bool = False
    """Repeating a call with the same arguments has no further effect (when not read-only)."""
    open_world: bool = False
    """The tool reaches beyond a closed domain (the web, other services)."""
