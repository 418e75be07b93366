"""`ToolRegistry`: the tools of one context by name, checked when they are registered."""

from __future__ import annotations

import re
from typing import Any

from ._events import Dispose
from ._tool import Tool

__all__ = ["ToolRegistry"]

_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class ToolRegistry:
    """The tools of one context, by name, in registration order."""

    __slots__ = ("_tools",)

    def __init__(self) -> None:
        self._tools: dict[str, Tool[Any, Any]] = {}

    def register(self, tool: Tool[Any, Any]) -> Dispose:
        """Add `tool`; returns its disposer.

        Raises:
            ValueError: the name is invalid or taken, the description is missing, or the
                schema is not an object schema; the message names the tool.
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
        """Registered tool names, in registration order (internal tools included)."""
        return list(self._tools)

    def schemas(self) -> list[dict[str, Any]]:
        """``[{"name", "description", "parameters"}]`` for every tool offered to models, in
        order (internal tools are left out)."""
        return [
            {"name": t.name, "description": t.description, "parameters": t.parameters_schema()}
            for t in self._tools.values()
            if not t.internal
        ]
