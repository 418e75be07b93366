"""Anthropic tool use: tool definitions and ``tool_use`` → ``tool_result`` blocks.

With ``text_editor=True`` Claude gets its own editing tool (`_anthropic_editor`) in place of
read/write/edit. The `anthropic` package is not needed at runtime.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal, TypedDict, overload

from ._anthropic_editor import TEXT_EDITOR_NAME, TextEditorTool, run_text_editor, text_editor_tool
from ._calls import field
from ._images import anthropic_image_block, image_of

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
    content: str | list[dict[str, Any]]
    """The text, or for an image `read` one ``image`` block (SPEC §10)."""
    is_error: bool


_EDITOR_REPLACES = frozenset({"read", "write", "edit"})
"""The tools the text editor stands in for."""


@overload
def anthropic_tools(
    workspace: Workspace, *, text_editor: Literal[False] = False
) -> list[AnthropicTool]: ...


@overload
def anthropic_tools(
    workspace: Workspace, *, text_editor: bool
) -> list[AnthropicTool | TextEditorTool]: ...


def anthropic_tools(
    workspace: Workspace, *, text_editor: bool = False
) -> list[AnthropicTool] | list[AnthropicTool | TextEditorTool]:
    """The workspace's tools in the Messages API ``tools=`` shape.

    Args:
        workspace: Whose tools to offer.
        text_editor: Offer Claude's own ``str_replace_based_edit_tool``
            (``text_editor_20250728``) instead of read/write/edit; the other tools (discovery)
            stay ordinary tools. `anthropic_tool_results` runs either kind. The editor is
            offered only when the workspace offers `read` (its ``view``), and runs only the
            commands the workspace's tools grant (`Workspace.dialects`).
    """
    editor = text_editor and workspace.dialects.allows("view")
    tools: list[AnthropicTool | TextEditorTool] = [text_editor_tool()] if editor else []
    tools += [
        {"name": s["name"], "description": s["description"], "input_schema": s["parameters"]}
        for s in workspace.tool_schemas()
        if not (editor and s["name"] in _EDITOR_REPLACES)
    ]
    return tools


async def anthropic_tool_results(
    session: Session, content_blocks: Iterable[object] | None
) -> list[AnthropicToolResult]:
    """Run the ``tool_use`` blocks of an assistant message, in order, as ``tool_result`` blocks.

    Other blocks (text, thinking) are skipped. Calls of ``str_replace_based_edit_tool`` run
    as the text editor's commands. Never raises for a bad call: a failure is a block with
    ``is_error: true`` and ``Error: ...`` content. Put the returned blocks in the next
    ``user`` message.

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
        name = str(field(block, "name"))
        content: str | list[dict[str, Any]]
        if name == TEXT_EDITOR_NAME:
            outcome = await run_text_editor(session, arguments, call_id=tool_use_id or None)
            content, is_error = outcome.text, outcome.is_error
            if outcome.image is not None:
                content = [anthropic_image_block(outcome.image)]
        else:
            result = await session.call(
                name, {} if arguments is None else arguments, call_id=tool_use_id
            )
            content, is_error = result.text, result.is_error
            image = image_of(result)
            if image is not None:
                content = [anthropic_image_block(image)]
        results.append(
            {
                "type": "tool_result",
                "tool_use_id": tool_use_id,
                "content": content,
                "is_error": is_error,
            }
        )
    return results
