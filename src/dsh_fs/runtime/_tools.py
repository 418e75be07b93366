"""The tool seam: `Tool`, the registry that executes tools, and `ToolResult`.

`ToolRegistry.execute` never raises for a tool's failure: invalid arguments, an `FsError`,
a `ToolError` or an unexpected bug all come back as an error result with a code, so a model
never sees a traceback. Cancellation is the one thing that propagates.
"""

from __future__ import annotations

import logging
import re
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from dsh_fs.errors import FsError

from ._events import Dispose
from ._session import ToolExecution

if TYPE_CHECKING:
    from ._context import Context

__all__ = ["Tool", "ToolArgumentError", "ToolError", "ToolRegistry", "ToolResult"]

logger = logging.getLogger("dsh_fs.tools")

A = TypeVar("A")
V = TypeVar("V")

_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class ToolError(Exception):
    """A tool failure that is not a filesystem error; shown to the model as `Error: <message>`."""

    code: str
    message: str

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class ToolArgumentError(ToolError):
    """The model's arguments do not fit the tool's schema."""

    def __init__(self, message: str) -> None:
        super().__init__("TOOL_INVALID_ARGUMENTS", message)


class Tool(ABC, Generic[A, V]):
    """A model-facing tool: schema, argument parsing, execution and rendering.

    Type parameters: `A` is the parsed arguments, `V` the canonical value of a success.
    """

    name: str
    """Unique in a registry; matches ``[A-Za-z0-9_-]{1,64}``."""
    description: str
    """What the model reads about the tool."""

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


class ToolResult:
    """What one call returns: the rendered text, plus a value or an error code.

    `value` is built on first access, so callers that only need the text (an MCP server,
    a model loop) do not pay for the JSON form of a 2000-line read.
    """

    __slots__ = ("_data", "_json", "_tool", "code", "error_name", "is_error", "text", "tool")

    def __init__(
        self,
        *,
        tool: str,
        is_error: bool,
        text: str,
        code: str | None = None,
        error_name: str | None = None,
        data: object = None,
        renderer: Tool[Any, Any] | None = None,
    ) -> None:
        self.tool = tool
        """The tool's name."""
        self.is_error = is_error
        """Whether the call failed."""
        self.text = text
        """What the model sees: the rendered value, or ``Error: <message>``."""
        self.code = code
        """On failure, the machine-routable code (e.g. ``FS_STALE_VERSION``); else None."""
        self.error_name = error_name
        """On failure, the error's kind (``FsError``, ``ToolArgumentError``, …); else None."""
        self._data = data
        self._tool = renderer
        self._json: dict[str, Any] | None = None

    @classmethod
    def failure(cls, tool: str, *, code: str, message: str, error_name: str) -> ToolResult:
        """An error result with the text ``Error: <message>``."""
        return cls(
            tool=tool, is_error=True, text=f"Error: {message}", code=code, error_name=error_name
        )

    @property
    def value(self) -> dict[str, Any] | None:
        """The canonical value (plain JSON data) on success, else None."""
        if self.is_error or self._tool is None:
            return None
        if self._json is None:
            self._json = self._tool.to_json(self._data)
        return self._json

    @property
    def data(self) -> object:
        """The tool's typed canonical value on success (what `value` is made from)."""
        return self._data

    @property
    def error(self) -> dict[str, str] | None:
        """On failure, ``{"name": ..., "code": ...}``; else None."""
        if not self.is_error or self.code is None or self.error_name is None:
            return None
        return {"name": self.error_name, "code": self.code}

    def __repr__(self) -> str:
        status = f"error {self.code}" if self.is_error else "ok"
        return f"ToolResult({self.tool!r}, {status}, text={self.text[:60]!r})"


class ToolRegistry:
    """The tools of one context, by name, in registration order."""

    __slots__ = ("_context", "_tools")

    def __init__(self, context: Context) -> None:
        self._context = context
        self._tools: dict[str, Tool[Any, Any]] = {}

    def register(self, tool: Tool[Any, Any]) -> Dispose:
        """Add `tool`; returns its disposer.

        Raises:
            ValueError: the name is invalid or taken, or the schema is not an object schema.
        """
        name = getattr(tool, "name", None)
        if not isinstance(name, str) or not _TOOL_NAME.match(name):
            raise ValueError(f"tool {tool!r} has an invalid name {name!r}")
        if name in self._tools:
            raise ValueError(f"a tool named {name!r} is already registered")
        if not isinstance(getattr(tool, "description", None), str):
            raise ValueError(f"tool {name!r} has no description")
        schema = tool.parameters_schema()
        if not isinstance(schema, dict) or schema.get("type") != "object":
            raise ValueError(f"tool {name!r} must declare an object schema for its parameters")
        self._tools[name] = tool

        def dispose() -> None:
            if self._tools.get(name) is tool:
                del self._tools[name]

        return dispose

    def get(self, name: str) -> Tool[Any, Any] | None:
        """The tool named `name`, if registered."""
        return self._tools.get(name)

    def names(self) -> list[str]:
        """Registered tool names, in registration order."""
        return list(self._tools)

    def schemas(self) -> list[dict[str, Any]]:
        """``[{"name", "description", "parameters"}]`` for every tool, in order."""
        return [
            {"name": t.name, "description": t.description, "parameters": t.parameters_schema()}
            for t in self._tools.values()
        ]

    async def execute(
        self, name: str, arguments: object, execution: ToolExecution | None = None
    ) -> ToolResult:
        """Validate `arguments`, run the tool and return its result; never raises for failures.

        `arguments` is whatever the model sent (normally a JSON object); anything else is an
        argument error. Only cancellation (and other `BaseException`s) propagate.
        """
        tool = self._tools.get(name)
        if tool is None:
            return ToolResult.failure(
                name,
                code="TOOL_NOT_FOUND",
                message=f'unknown tool "{name}"',
                error_name="ToolError",
            )
        if execution is None:
            execution = ToolExecution(tool=name)
        try:
            if not isinstance(arguments, Mapping):
                raise ToolArgumentError("arguments must be a JSON object")
            args = tool.parse_arguments(arguments)
            data = await tool.run(self._context, execution, args)
            text = tool.render(data)
        except FsError as error:
            return ToolResult.failure(
                name, code=error.code.value, message=tool.error_message(error), error_name="FsError"
            )
        except ToolError as error:
            return ToolResult.failure(
                name, code=error.code, message=error.message, error_name=type(error).__name__
            )
        except Exception as error:
            logger.exception("tool %r failed unexpectedly", name)
            return ToolResult.failure(
                name,
                code="TOOL_INTERNAL_ERROR",
                message=f"internal error in the {name} tool ({type(error).__name__}); "
                "the file was not changed by this call",
                error_name="ToolError",
            )
        return ToolResult(tool=name, is_error=False, text=text, data=data, renderer=tool)
