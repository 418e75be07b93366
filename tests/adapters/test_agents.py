"""The OpenAI Agents SDK integration, driven by the SDK's own scripted model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, ApplyPatchTool, FunctionTool, RunConfig, Runner
from agents.items import ToolCallOutputItem
from agents.testing import ModelStep, ScriptedModel
from openai.types.responses import (
    ResponseApplyPatchToolCall,
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from dsh_fs import Workspace
from dsh_fs.adapters import WorkspaceEditor, agents_tools
from dsh_fs.workspace import Session

pytestmark = pytest.mark.anyio


_ids = iter(range(1_000_000))


def read(path: str) -> list[Any]:
    n = next(_ids)
    return [
        ResponseFunctionToolCall(
            type="function_call",
            id=f"fc_{n}",
            call_id=f"call_{n}",
            name="read",
            arguments=json.dumps({"file_path": path}),
        )
    ]


def patch(kind: str, path: str, diff: str | None = None) -> list[Any]:
    n = next(_ids)
    operation: dict[str, Any] = {"type": kind, "path": path}
    if diff is not None:
        operation["diff"] = diff
    return [
        ResponseApplyPatchToolCall.model_validate(
            {
                "type": "apply_patch_call",
                "id": f"apc_{n}",
                "call_id": f"call_{n}",
                "status": "completed",
                "operation": operation,
            }
        )
    ]


def say(text: str) -> list[Any]:
    return [
        ResponseOutputMessage(
            type="message",
            id=f"msg_{next(_ids)}",
            role="assistant",
            status="completed",
            content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
        )
    ]


def test_the_tools_are_function_tools_with_our_schemas_plus_apply_patch(root: Path) -> None:
    workspace = Workspace.sandbox(root)
    tools = agents_tools(workspace.session())
    assert isinstance(tools[-1], ApplyPatchTool)
    assert isinstance(tools[-1].editor, WorkspaceEditor)
    # apply_patch replaces write and edit; read and the discovery tools stay.
    functions = tools[:-1]
    assert all(isinstance(tool, FunctionTool) for tool in functions)
    schemas = {s["name"]: s for s in workspace.tool_schemas()}
    assert [tool.name for tool in functions] == [
        "read",
        "edit_files",
        "glob",
        "grep",
        "list",
        "move",
        "delete",
        "mkdir",
    ]
    for tool in functions:
        assert isinstance(tool, FunctionTool)
        schema = schemas[tool.name]
        assert (tool.description, tool.params_json_schema) == (
            schema["description"],
            schema["parameters"],
        )
    plain = agents_tools(workspace.session(), apply_patch=False)
    assert [t.name for t in plain] == [
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


async def test_an_agent_run_reads_patches_is_refused_when_stale_and_recovers(
    session: Session, root: Path
) -> None:
    path = root / "app.py"
    path.write_text("x = 1\ny = 2\n", encoding="utf-8")
    (root / "keep.txt").write_text("keep\n", encoding="utf-8")
    outside = root.parent / "secret.txt"
    outside.write_text("secret\n", encoding="utf-8")

    def change_then_patch(call: Any) -> list[Any]:
        path.write_text("x = 1\ny = 2\n# theirs\n", encoding="utf-8")
        return patch("update_file", "app.py", "@@\n-x = 1\n+x = 10\n")

    model = ScriptedModel(
        [
            read("app.py"),
            ModelStep.respond(change_then_patch),  # stale: refused
            read("app.py"),
            patch("update_file", "app.py", "@@\n-x = 1\n+x = 10\n"),  # now applies
            patch("update_file", "app.py", "@@\n-nope\n+z\n"),  # a miss: refused
            patch("create_file", "keep.txt", "+overwrite\n"),  # never read: refused
            patch("delete_file", str(outside)),  # outside the fence: refused
            patch("update_file", "app.py", "not a diff\n"),  # malformed: refused
            say("done"),
        ]
    )
    agent = Agent(name="editor", model=model, tools=agents_tools(session))
    result = await Runner.run(agent, "edit", run_config=RunConfig(tracing_disabled=True))
    assert result.final_output == "done"

    outputs = [item.output for item in result.new_items if isinstance(item, ToolCallOutputItem)]
    assert len(outputs) == 8
    assert "1: x = 1" in outputs[0]
    assert outputs[1] == (
        f'Error: cannot edit "{path}": file changed since it was read'
        " \u2014 read the file again, then send a new patch"
    )
    assert outputs[3] == f"Updated file {path}"
    assert outputs[4].startswith(f'Error: hunk 1 of the patch was not found in "{path}"')
    assert outputs[5].startswith(f'Error: cannot overwrite existing "{root / "keep.txt"}"')
    assert "Error: " in outputs[6]
    assert outputs[7].startswith("Error: invalid diff for app.py: line 1")
    assert path.read_text(encoding="utf-8") == "x = 10\ny = 2\n# theirs\n"
    assert (root / "keep.txt").read_text(encoding="utf-8") == "keep\n"
    assert outside.read_text(encoding="utf-8") == "secret\n"
