"""OpenAI and Anthropic adapters: shapes checked with the SDKs' own types, offline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from anthropic.types import ToolParam, ToolResultBlockParam, ToolUseBlock
from openai.types.chat import (
    ChatCompletionMessageFunctionToolCall,
    ChatCompletionToolMessageParam,
    ChatCompletionToolParam,
)
from pydantic import TypeAdapter

from dsh_fs import Workspace
from dsh_fs.adapters import (
    anthropic_tool_results,
    anthropic_tools,
    execute_openai_tool_calls,
    openai_tools,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
async def workspace(tmp_path: Path) -> Any:
    (tmp_path / "a.txt").write_text("one\ntwo\n", encoding="utf-8")
    async with Workspace.sandbox(tmp_path) as ws:
        yield ws


def test_openai_tools_validate_as_chat_completion_tool_params(tmp_path: Path) -> None:
    workspace = Workspace.sandbox(tmp_path)
    tools = openai_tools(workspace)
    adapter = TypeAdapter(ChatCompletionToolParam)
    for tool, schema in zip(tools, workspace.tool_schemas(), strict=True):
        adapter.validate_python(tool, strict=True)
        assert tool == {
            "type": "function",
            "function": {
                "name": schema["name"],
                "description": schema["description"],
                "parameters": schema["parameters"],
            },
        }


def test_anthropic_tools_validate_as_tool_params(tmp_path: Path) -> None:
    workspace = Workspace.sandbox(tmp_path)
    adapter = TypeAdapter(ToolParam)
    tools = anthropic_tools(workspace)
    for tool in tools:
        adapter.validate_python(tool, strict=True)
    assert [t["name"] for t in tools] == [
        "read",
        "write",
        "edit",
        "edit_files",
        "glob",
        "grep",
        "list",
        "move",
        "delete",
        "mkdir",
    ]
    assert tools[0]["input_schema"] == workspace.tool_schemas()[0]["parameters"]


async def test_openai_tool_calls_from_sdk_objects_and_dicts_run_in_order(workspace: Any) -> None:
    session = workspace.session()
    read = ChatCompletionMessageFunctionToolCall.model_validate(
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "read", "arguments": '{"file_path": "a.txt"}'},
        }
    )
    edit = {
        "id": "call_2",
        "type": "function",
        "function": {
            "name": "edit",
            "arguments": '{"file_path": "a.txt", "old_string": "two", "new_string": "2"}',
        },
    }
    messages = await execute_openai_tool_calls(session, [read, edit])
    adapter = TypeAdapter(ChatCompletionToolMessageParam)
    for message in messages:
        adapter.validate_python(message, strict=True)
    assert [m["tool_call_id"] for m in messages] == ["call_1", "call_2"]
    assert "1: one" in messages[0]["content"]
    assert messages[1]["content"].endswith("has been updated successfully.")


async def test_malformed_openai_arguments_become_an_error_message_not_an_exception(
    workspace: Any,
) -> None:
    calls = [
        {"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{oops"}},
        {"id": "c2", "type": "function", "function": {"name": "read", "arguments": "[1]"}},
        {"id": "c3", "type": "function", "function": {"name": "nope", "arguments": "{}"}},
        {"id": "c4", "type": "custom", "custom": {"name": "x", "input": ""}},
    ]
    messages = await execute_openai_tool_calls(workspace.session(), calls)
    contents = [m["content"] for m in messages]
    assert contents[0].startswith("Error: arguments are not valid JSON (")
    assert contents[1] == 'Error: invalid arguments: "arguments" must be an object'
    assert contents[2] == 'Error: unknown tool "nope"'
    assert contents[3] == "Error: only function tool calls are supported"
    assert await execute_openai_tool_calls(workspace.session(), None) == []


async def test_a_negative_zero_in_openai_arguments_is_refused_as_upstream_refuses_it(
    workspace: Any,
) -> None:
    calls = [
        {"id": "c1", "type": "function", "function": {"name": "read", "arguments": args}}
        for args in ('{"file_path": "a.txt", "offset": -0}', '{"file_path": "a.txt", "x": [-0]}')
    ]
    messages = await execute_openai_tool_calls(workspace.session(), calls)
    lossy = "Error: tool execution arguments must be losslessly JSON-serializable"
    assert [m["content"] for m in messages] == [lossy, lossy]


async def test_anthropic_tool_use_blocks_become_tool_results_with_is_error(
    workspace: Any,
) -> None:
    session = workspace.session()
    blocks: list[object] = [
        {"type": "text", "text": "Let me look."},
        ToolUseBlock(id="tu_1", name="read", input={"file_path": "a.txt"}, type="tool_use"),
        {
            "type": "tool_use",
            "id": "tu_2",
            "name": "write",
            "input": {"file_path": "../escape.txt", "content": "x"},
        },
    ]
    results = await anthropic_tool_results(session, blocks)
    adapter = TypeAdapter(ToolResultBlockParam)
    for result in results:
        adapter.validate_python(result, strict=True)
    assert [(r["tool_use_id"], r["is_error"]) for r in results] == [
        ("tu_1", False),
        ("tu_2", True),
    ]
    assert "outside the sandbox" in results[1]["content"]
