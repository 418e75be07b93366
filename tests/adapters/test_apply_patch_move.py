"""``update_file`` with ``move_to`` (the Agents SDK's apply_patch rename) maps onto `patch`
then `move`: the same guards, a read source and never an unread destination."""

from __future__ import annotations

from pathlib import Path

import pytest
from agents.editor import ApplyPatchOperation

from dsh_fs.adapters import WorkspaceEditor, run_apply_patch
from dsh_fs.workspace import Session

pytestmark = pytest.mark.anyio


async def test_an_update_with_move_to_patches_then_moves_a_read_file(
    session: Session, root: Path
) -> None:
    (root / "a.py").write_text("x = 1\n", encoding="utf-8")
    operation = {
        "type": "update_file",
        "path": "a.py",
        "move_to": "pkg/b.py",
        "diff": "@@\n-x = 1\n+x = 2\n",
    }
    unread = await run_apply_patch(session, operation)
    assert unread["status"] == "failed"
    await session.call("read", {"file_path": "a.py"})
    done = await run_apply_patch(session, operation)
    assert done == {
        "status": "completed",
        "output": f"Updated and moved file {root}/a.py to {root}/pkg/b.py",
    }
    assert not (root / "a.py").exists()
    assert (root / "pkg" / "b.py").read_text(encoding="utf-8") == "x = 2\n"


async def test_a_move_to_an_unread_existing_file_fails_and_says_the_patch_was_applied(
    session: Session, root: Path
) -> None:
    (root / "a.py").write_text("x = 1\n", encoding="utf-8")
    (root / "b.py").write_text("theirs\n", encoding="utf-8")
    await session.call("read", {"file_path": "a.py"})
    operation = {
        "type": "update_file",
        "path": "a.py",
        "move_to": "b.py",
        "diff": "@@\n-x = 1\n+x = 2\n",
    }
    outcome = await run_apply_patch(session, operation)
    assert outcome["status"] == "failed"
    assert "destination exists" in outcome["output"]
    assert outcome["output"].endswith("(the diff was applied to a.py, which was not moved)")
    assert (root / "b.py").read_text(encoding="utf-8") == "theirs\n"
    assert (root / "a.py").read_text(encoding="utf-8") == "x = 2\n"


async def test_the_agents_sdk_editor_passes_move_to_through(session: Session, root: Path) -> None:
    (root / "a.txt").write_text("a\n", encoding="utf-8")
    await session.call("read", {"file_path": "a.txt"})
    editor = WorkspaceEditor(session)
    result = await editor.update_file(
        ApplyPatchOperation(type="update_file", path="a.txt", diff="", move_to="b.txt")
    )
    assert (result.status, result.output) == (
        "completed",
        f"Moved file {root}/a.txt to {root}/b.txt",
    )
    assert (root / "b.txt").read_text(encoding="utf-8") == "a\n"
