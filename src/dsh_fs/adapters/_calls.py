"""Reading tool calls that arrive as SDK objects or as plain dicts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["field"]


def field(obj: object, name: str) -> Any:
    """`obj[name]` for a mapping, else `obj.name`; None when absent.

    SDK response objects (pydantic models) and their ``model_dump()`` dicts are both
    accepted, so a loop can pass whatever its client library returned.
    """
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)
