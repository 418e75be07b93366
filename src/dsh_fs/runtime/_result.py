"""`ToolResult`: what one tool call returns, success or failure, never an exception."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["ToolResult"]

ToJson = Callable[[Any], dict[str, Any]]
"""Turns a tool's typed value into plain JSON data (the tool's `to_json`)."""


class ToolResult:
    """What one call returns: the rendered text, plus a value or an error code.

    `value` is built on first access, so callers that only need the text (an MCP server,
    a model loop) do not pay for the JSON form of a 2000-line read.
    """

    __slots__ = (
        "_data",
        "_json",
        "_to_json",
        "code",
        "details",
        "error_name",
        "is_error",
        "text",
        "tool",
    )

    def __init__(
        self,
        *,
        tool: str,
        is_error: bool,
        text: str,
        code: str | None = None,
        error_name: str | None = None,
        details: Mapping[str, Any] | None = None,
        data: object = None,
        to_json: ToJson | None = None,
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
        self.details: Mapping[str, Any] | None = details or None
        """On failure, structured facts for programs when the error has some (e.g. an edit
        miss's closest span); else None."""
        self._data = data
        self._to_json = to_json
        self._json: dict[str, Any] | None = None

    @classmethod
    def failure(
        cls,
        tool: str,
        *,
        code: str,
        message: str,
        error_name: str,
        details: Mapping[str, Any] | None = None,
    ) -> ToolResult:
        """An error result with the text ``Error: <message>``."""
        return cls(
            tool=tool,
            is_error=True,
            text=f"Error: {message}",
            code=code,
            error_name=error_name,
            details=details,
        )

    @property
    def value(self) -> dict[str, Any] | None:
        """The canonical value (plain JSON data) on success, else None."""
        if self.is_error or self._to_json is None:
            return None
        if self._json is None:
            self._json = self._to_json(self._data)
        return self._json

    @property
    def data(self) -> object:
        """The tool's typed canonical value on success (what `value` is made from)."""
        return self._data

    @property
    def error(self) -> dict[str, Any] | None:
        """On failure, ``{"name", "code"}`` (plus ``"details"`` when the error has them);
        else None."""
        if not self.is_error or self.code is None or self.error_name is None:
            return None
        error: dict[str, Any] = {"name": self.error_name, "code": self.code}
        if self.details:
            error["details"] = dict(self.details)
        return error

    def __repr__(self) -> str:
        status = f"error {self.code}" if self.is_error else "ok"
        return f"ToolResult({self.tool!r}, {status}, text={self.text[:60]!r})"
