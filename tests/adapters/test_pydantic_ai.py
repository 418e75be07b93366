"""The pydantic-ai toolset, driven by pydantic-ai's own scripted `FunctionModel`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai", reason="pydantic-ai supports Python 3.11+ only")

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from dsh_fs.adapters import WorkspaceToolset
from dsh_fs.workspace import Session

pytestmark = pytest.mark.anyio


def scripted(steps: list[Any]) -> tuple[FunctionModel, list[AgentInfo]]:
    """A model that plays `steps` (tool calls, or a final text), one per request."""
    seen: list[AgentInfo] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info)
        step = steps[len(seen) - 1]
        if callable(step):
            step = step()
        if isinstance(step, str):
            return ModelResponse(parts=[TextPart(step)])
        name, args = step
        return ModelResponse(parts=[ToolCallPart(name, args, tool_call_id=f"call_{len(seen)}")])

    return FunctionModel(respond), seen


def returns(messages: list[ModelMessage]) -> list[tuple[str, str, str]]:
    """Every tool result the model got back: (tool, outcome, text)."""
    found = []
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, ToolReturnPart):
                    outcome = getattr(part, "outcome", "success")
                    found.append((part.tool_name, str(outcome), str(part.content)))
    return found


async def test_the_toolset_offers_our_tools_with_our_schemas(session: Session) -> None:
    model, seen = scripted(["hi"])
    agent = Agent(model, toolsets=[WorkspaceToolset(session)])
    await agent.run("hello")
    offered = {tool.name: tool for tool in seen[0].function_tools}
    for schema in session.workspace.tool_schemas():
        tool = offered[schema["name"]]
        assert tool.description == schema["description"]
        assert tool.parameters_json_schema == schema["parameters"]
    assert set(offered) == {
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
    }


async def test_read_edit_stale_refused_reread_then_edit(session: Session, root: Path) -> None:
    path = root / "a.py"
    path.write_text("x = 1\n", encoding="utf-8")
    (root / "keep.txt").write_text("keep\n", encoding="utf-8")
    edit = ("edit", {"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 2"})

    def change_then_edit() -> Any:
        path.write_text("x = 1\n# theirs\n", encoding="utf-8")
        return edit

    model, _ = scripted(
        [
            ("read", {"file_path": "a.py"}),
            change_then_edit,  # stale: refused with our words
            ("read", {"file_path": "a.py"}),
            edit,
            ("write", {"file_path": "keep.txt", "content": "overwrite"}),  # never read
            ("edit", {"file_path": "a.py", "old_string": "nope", "new_string": "z"}),  # miss
            ("read", {"file_path": str(root.parent / "x.txt")}),  # outside the fence
            ("read", {"file_path": "a.py", "limit": 0}),  # malformed
            "done",
        ]
    )
    agent = Agent(model, toolsets=[WorkspaceToolset(session)])
    result = await agent.run("edit a.py")
    assert result.output == "done"
    got = returns(result.all_messages())
    assert [tool for tool, _, _ in got] == [
        "read",
        "edit",
        "read",
        "edit",
        "write",
        "edit",
        "read",
        "read",
    ]
    assert "1: x = 1" in got[0][2]
    assert got[1][2] == (
        f'Error: cannot edit "{path}": file changed since it was read'
        " \u2014 re-read the file, then retry"
    )
    assert got[3][2] == f"The file {path} has been updated successfully."
    assert "without reading it first" in got[4][2]
    assert f'old_string was not found in "{path}"' in got[5][2]
    assert "outside the sandbox" in got[6][2]
    assert "limit must be a positive integer" in got[7][2]
    assert [outcome for _, outcome, _ in got] == [
        "success",
        "failed",
        "success",
        "success",
        "failed",
        "failed",
        "failed",
        "failed",
    ]
    assert path.read_text(encoding="utf-8") == "x = 2\n# theirs\n"
    assert (root / "keep.txt").read_text(encoding="utf-8") == "keep\n"
