"""Anthropic tool use: tool definitions and ``tool_use`` → ``tool_result`` blocks.

The `anthropic` package is not needed at runtime.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from ._calls import field

if TYPE_CHECKING:
    from dsh_fs.workspace import Session, Workspace

__all__ = ["AnthropicTool", "AnthropicToolResult", "anthropic_tool_results", "anthropic_tools"]


class AnthropicTool(TypedDict):
    """A Messages API tool definition (``anthropic.types.ToolParam``)."""

    name: str
    description: str
    input_schema: dict[str, Any]


class AnthropicToolResult(TypedDict):
    """A ``tool_result`` content block (``anthropic.types.ToolResultBlockParam``)."""

    type: Literal["tool_result"]
    tool_use_id: str
    content: str
    is_error: bool


def anthropic_tools(workspace: Workspace) -> list[AnthropicTool]:
    """The workspace's tools in the Messages API ``tools=`` shape."""
    return [
        {"name": s["name"], "description": s["description"], "input_schema": s["parameters"]}
        for s in workspace.tool_schemas()
    ]


async def anthropic_tool_results(
    session: Session, content_blocks: Iterable[object] | None
) -> list[AnthropicToolResult]:
    """Run the ``tool_use`` blocks of an assistant message, in order, as ``tool_result`` blocks.

    Other blocks (text, thinking) are skipped. Never raises for a bad call: a failure is a
    block with ``is_error: true`` and ``Error: ...`` content. Put the returned blocks in
    the next ``user`` message.

    Args:
        session: The observation owner the calls run in.
        content_blocks: ``message.content`` as the ``anthropic`` SDK returns it, or the
            equivalent dicts.
    """
    results: list[AnthropicToolResult] = []
    for block in content_blocks or ():
        if field(block, "type") != "tool_use":
            continue
        tool_use_id = str(field(block, "id") or "")
        arguments = field(block, "input")
        result = await session.call(
            str(field(block, "name")), {} if arguments is None else arguments, call_id=tool_use_id
        )
        results.append(
            {
                "type": "tool_result",
                "tool_use_id": tool_use_id,
                "content": result.text,
                "is_error": result.is_error,
            }
        )
    return results
