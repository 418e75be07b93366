"""The tool seam: what a model-facing tool is, and the failures it may report."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from dsh_fs.errors import FsError, ToolErrorCode

from ._session import ToolExecution

if TYPE_CHECKING:
    from ._context import Context

__all__ = ["Tool", "ToolAnnotations", "ToolArgumentError", "ToolError"]

A = TypeVar("A")
V = TypeVar("V")


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


class Tool(ABC, Generic[A, V]):
    """A model-facing tool: schema, argument parsing, execution and rendering.

    Type parameters: `A` is the parsed arguments, `V` the canonical value of a success.
    """

    name: str
    """Unique in a registry; matches ``[A-Za-z0-9_-]{1,64}``."""
    description: str
    """What the model reads about the tool."""
    annotations: ClassVar[ToolAnnotations] = ToolAnnotations()
    """What a host may assume about the tool's effects (the default assumes the worst)."""
    internal: ClassVar[bool] = False
    """An internal tool runs like any other (same events, same policy) but is not offered
    to models: `ToolRegistry.schemas` leaves it out. Adapters call internal tools to carry
    out a vendor dialect's operations (an insert, a patch, a delete)."""

    @abstractmethod
    def parameters_schema(self) -> dict[str, Any]:
        """The JSON Schema of the arguments (an object schema)."""

    @abstractmethod
    def parse_arguments(self, raw: Mapping[str, Any]) -> A:
        """Validate the model's arguments.

        Raises:
            ToolArgumentError: with the exact model-facing message.
        """

    @abstractmethod
    async def run(self, context: Context, execution: ToolExecution, args: A) -> V:
        """Do the work and return the canonical value.

        Raises:
            FsError: a filesystem failure (the result carries its code).
            ToolError: any other expected failure.
        """

    @abstractmethod
    def render(self, value: V) -> str:
        """The text the model sees for `value`; a pure function of it."""

    @abstractmethod
    def to_json(self, value: V) -> dict[str, Any]:
        """The canonical value as plain JSON data (what `ToolResult.value` returns)."""

    def error_message(self, error: FsError) -> str:
        """The model-facing message for `error` (override to append a remedy)."""
        return error.message
