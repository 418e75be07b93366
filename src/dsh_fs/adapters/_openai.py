"""OpenAI-compatible function calling: tool definitions and tool-call execution.

Works with any Chat Completions endpoint that speaks OpenAI's tool-call shape (OpenAI,
DeepSeek, vLLM, Ollama, ...). The `openai` package is not needed at runtime.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from dsh_fs.runtime import parse_json

from ._calls import field
from ._images import image_of, not_carried

if TYPE_CHECKING:
    from dsh_fs.workspace import Session, Workspace

__all__ = [
    "OpenAIFunction",
    "OpenAITool",
    "OpenAIToolMessage",
    "execute_openai_tool_calls",
    "openai_tools",
]


class OpenAIFunction(TypedDict):
    """The ``function`` member of a Chat Completions tool definition."""

    name: str
    description: str
    parameters: dict[str, Any]


class OpenAITool(TypedDict):
    """A Chat Completions tool definition (``ChatCompletionFunctionToolParam``)."""

    type: Literal["function"]
    function: OpenAIFunction


class OpenAIToolMessage(TypedDict):
    """A ``role: "tool"`` message answering one tool call."""

    role: Literal["tool"]
    tool_call_id: str
    content: str


def openai_tools(workspace: Workspace) -> list[OpenAITool]:
    """The workspace's tools in the Chat Completions ``tools=`` shape."""
    return [
        {
            "type": "function",
            "function": {
                "name": s["name"],
                "description": s["description"],
                "parameters": s["parameters"],
            },
        }
        for s in workspace.tool_schemas()
    ]


def _arguments(raw: object) -> tuple[object, str | None]:
    """The parsed arguments, or an error message for the model."""
    if isinstance(raw, Mapping):
        return raw, None
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}, None  # some models send "" for a call without arguments
    if not isinstance(raw, str):
        return None, "arguments must be a JSON object"
    try:
        return parse_json(raw), None
    except (ValueError, RecursionError) as exc:
        detail = exc.msg if isinstance(exc, json.JSONDecodeError) else type(exc).__name__
        return None, f"arguments are not valid JSON ({detail}); send a JSON object"


async def execute_openai_tool_calls(
    session: Session, tool_calls: Iterable[object] | None
) -> list[OpenAIToolMessage]:
    """Run a model's ``tool_calls`` in order and return one ``tool`` message per call.

    Calls run one after the other, in the model's order (a read then an edit of the same
    file in one turn must happen in that order). Never raises for a bad call: malformed
    JSON arguments, an unknown tool or a tool failure come back as ``Error: ...`` content.

    Args:
        session: The observation owner the calls run in.
        tool_calls: ``message.tool_calls`` as the ``openai`` SDK returns them, or the
            equivalent dicts (``{"id", "function": {"name", "arguments"}}``); None is empty.
    """
    messages: list[OpenAIToolMessage] = []
    for call in tool_calls or ():
        call_id = str(field(call, "id") or "")
        function = field(call, "function")
        name = field(function, "name") if function is not None else None
        if not isinstance(name, str):
            content = "Error: only function tool calls are supported"
        else:
            arguments, problem = _arguments(field(function, "arguments"))
            if problem is not None:
                content = f"Error: {problem}"
            else:
                result = await session.call(name, arguments, call_id=call_id or None)
                # A tool message carries text only: an image read says it is not shown.
                content = result.text if image_of(result) is None else not_carried(result.text)
        messages.append({"role": "tool", "tool_call_id": call_id, "content": content})
    return messages
