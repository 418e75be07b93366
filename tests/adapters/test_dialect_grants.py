"""The dialects grant no power the workspace's tool selection withholds (issue 22, item 6).

A dialect operation is offered and executed only when the workspace offers the tool that
grants it; a read-only sandbox runs no change at all. Each refusal changes nothing on disk.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from agents import ApplyPatchTool, FunctionTool
from agents.editor import ApplyPatchOperation

from dsh_fs import Workspace
from dsh_fs.adapters import (
    WorkspaceEditor,
    agents_tools,
    anthropic_tool_results,
    anthropic_tools,
    openai_responses_tools,
    run_apply_patch,
    run_text_editor,
)
from dsh_fs.workspace import Session

pytestmark = pytest.mark.anyio

READ_ONLY_TOOLS = ("read", "glob", "grep", "list")
UPDATE = "@@\n-one\n+ONE\n"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "f.txt").write_text("one\ntwo\n", encoding="utf-8")
    return (tmp_path / "ws").resolve()


async def viewed(session: Session, path: str = "f.txt") -> None:
    result = await session.call("read", {"file_path": path})
    assert not result.is_error, result.text


def test_a_read_and_discovery_workspace_offers_no_apply_patch_anywhere(root: Path) -> None:
    workspace = Workspace.sandbox(root, tools=READ_ONLY_TOOLS)
    responses = openai_responses_tools(workspace, apply_patch=True)
    assert {"type": "apply_patch"} not in responses
    assert [t.get("name") for t in responses] == list(READ_ONLY_TOOLS)
    tools = agents_tools(workspace.session())
    assert not any(isinstance(t, ApplyPatchTool) for t in tools)
    assert [t.name for t in tools if isinstance(t, FunctionTool)] == list(READ_ONLY_TOOLS)


async def test_apply_patch_without_write_or_edit_changes_and_deletes_nothing(root: Path) -> None:
    async with Workspace.sandbox(root, tools=READ_ONLY_TOOLS) as workspace:
        session = workspace.session()
        await viewed(session)
        updated = await run_apply_patch(
            session, {"type": "update_file", "path": "f.txt", "diff": UPDATE}
        )
        deleted = await run_apply_patch(session, {"type": "delete_file", "path": "f.txt"})
        created = await run_apply_patch(
            session, {"type": "create_file", "path": "new.txt", "diff": "+x\n"}
        )
    assert updated == {
        "status": "failed",
        "output": "Error: update_file is not offered in this workspace (it needs the edit or "
        "write tools, which the workspace does not offer)",
    }
    assert deleted["status"] == "failed"
    assert deleted["output"] == (
        "Error: delete_file is not offered in this workspace (it needs the delete or write "
        "tools, which the workspace does not offer)"
    )
    assert created["output"] == (
        "Error: create_file is not offered in this workspace (it needs the write tool, which "
        "the workspace does not offer)"
    )
    assert (root / "f.txt").read_text(encoding="utf-8") == "one\ntwo\n"
    assert not (root / "new.txt").exists()


async def test_the_internal_tools_of_withheld_operations_are_not_even_registered(
    root: Path,
) -> None:
    async with Workspace.sandbox(root, tools=READ_ONLY_TOOLS) as workspace:
        session = workspace.session()
        await viewed(session)
        for name, arguments in (
            ("delete", {"file_path": "f.txt"}),
            ("insert", {"file_path": "f.txt", "insert_line": 0, "text": "x\n"}),
            ("patch", {"file_path": "f.txt", "hunks": [{"lines": ["-one", "+ONE"]}]}),
        ):
            result = await session.call(name, arguments, internal=True)
            assert result.code == "UNKNOWN_TOOL", (name, result.text)
    assert (root / "f.txt").read_text(encoding="utf-8") == "one\ntwo\n"


async def test_the_agents_editor_refuses_what_the_workspace_withholds(root: Path) -> None:
    async with Workspace.sandbox(root, tools=READ_ONLY_TOOLS) as workspace:
        session = workspace.session()
        await viewed(session)
        editor = WorkspaceEditor(session)
        update = ApplyPatchOperation(type="update_file", path="f.txt", diff=UPDATE)
        delete = ApplyPatchOperation(type="delete_file", path="f.txt")
        assert (await editor.update_file(update)).status == "failed"
        assert (await editor.delete_file(delete)).status == "failed"
    assert (root / "f.txt").read_text(encoding="utf-8") == "one\ntwo\n"


async def test_a_text_editor_with_only_read_offers_view_alone(root: Path) -> None:
    async with Workspace.sandbox(root, tools=READ_ONLY_TOOLS) as workspace:
        tools = anthropic_tools(workspace, text_editor=True)
        assert tools[0] == {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"}
        session = workspace.session()
        view = await run_text_editor(session, {"command": "view", "path": "f.txt"})
        assert view.text == "1: one\n2: two"
        assert not view.is_error
        outcomes = [
            await run_text_editor(session, {"command": command, "path": "f.txt", **extra})
            for command, extra in (
                ("str_replace", {"old_str": "one", "new_str": "ONE"}),
                ("insert", {"insert_line": 0, "new_str": "zero"}),
                ("create", {"file_text": "x"}),
            )
        ]
    assert [(o.is_error, o.code) for o in outcomes] == [(True, "UNKNOWN_TOOL")] * 3
    assert outcomes[0].text == (
        "Error: The str_replace command is not offered in this workspace (it needs the edit "
        "tool, which the workspace does not offer)"
    )
    assert outcomes[1].text == (
        "Error: The insert command is not offered in this workspace (it needs the edit or "
        "write tools, which the workspace does not offer)"
    )
    assert (root / "f.txt").read_text(encoding="utf-8") == "one\ntwo\n"


def test_without_read_the_text_editor_is_not_offered(root: Path) -> None:
    workspace = Workspace.sandbox(root, tools=("write", "glob"))
    tools: list[Any] = anthropic_tools(workspace, text_editor=True)
    assert [t["name"] for t in tools] == ["write", "glob"]
    assert "type" not in tools[0]


async def test_a_read_only_sandbox_refuses_every_change_of_every_dialect(root: Path) -> None:
    async with Workspace.sandbox(root, mode="read-only") as workspace:
        assert {"type": "apply_patch"} not in openai_responses_tools(workspace, apply_patch=True)
        session = workspace.session()
        await viewed(session)
        patched = await run_apply_patch(
            session, {"type": "update_file", "path": "f.txt", "diff": UPDATE}
        )
        inserted = await run_text_editor(
            session, {"command": "insert", "path": "f.txt", "insert_line": 0, "new_str": "z"}
        )
        (block,) = await anthropic_tool_results(
            session,
            [
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "str_replace_based_edit_tool",
                    "input": {"command": "str_replace", "path": "f.txt", "old_str": "one"},
                }
            ],
        )
    assert patched["output"] == (
        "Error: update_file is not offered in this workspace (the workspace is read-only)"
    )
    assert inserted.text == (
        "Error: The insert command is not offered in this workspace (the workspace is read-only)"
    )
    assert block["is_error"]
    assert "read-only" in block["content"]
    assert (root / "f.txt").read_text(encoding="utf-8") == "one\ntwo\n"


async def test_write_alone_grants_patches_and_deletes_but_not_str_replace(root: Path) -> None:
    async with Workspace.sandbox(root, tools=("read", "write")) as workspace:
        session = workspace.session()
        await viewed(session)
        updated = await run_apply_patch(
            session, {"type": "update_file", "path": "f.txt", "diff": UPDATE}
        )
        assert updated == {"status": "completed", "output": f"Updated file {root}/f.txt"}
        replaced = await run_text_editor(
            session, {"command": "str_replace", "path": "f.txt", "old_str": "two", "new_str": "2"}
        )
        assert replaced.code == "UNKNOWN_TOOL"
        deleted = await run_apply_patch(session, {"type": "delete_file", "path": "f.txt"})
        assert deleted["status"] == "completed", deleted
    assert not (root / "f.txt").exists()


def test_grants_follow_the_offered_tools() -> None:
    from dsh_fs.tools import DialectGrants

    edit_only = DialectGrants.of(("read", "edit"))
    assert [edit_only.allows(op) for op in ("view", "create", "replace", "change", "delete")] == [
        True,
        False,
        True,
        True,
        False,
    ]
    assert DialectGrants.of(("read", "delete")).allows("delete")
    assert not DialectGrants.of(("read", "write", "edit"), read_only=True).any_change()
    assert DialectGrants.of(("read", "write", "edit"), read_only=True).allows("view")
