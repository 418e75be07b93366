"""``apply_patch`` responses that create, update, move and delete files together (SPEC §13):
one change set, landing whole or not at all — a failing operation in any position leaves
every file as it was (a created file removed, a moved file back, a deleted file restored) —
with each call's own output on success and one journal group that undoes them all."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from openai.types.responses import ResponseApplyPatchToolCall, ResponseFunctionToolCall

from dsh_fs import Approval, Proposal, Workspace
from dsh_fs.adapters import execute_openai_response
from dsh_fs.fs import (
    FsCapture,
    FsDeleteOutcome,
    FsMoveOutcome,
    FsTarget,
    FsVersion,
    FsWriteOutcome,
    WrapperFileSystem,
    WriteGuard,
)
from dsh_fs.providers import LocalFileSystem
from dsh_fs.workspace import Session

pytestmark = pytest.mark.anyio

RENAME = "@@\n-    return old\n+    return new\n"
BEFORE = {name: f"def {name[0]}():\n    return old\n" for name in ("a.py", "b.py", "c.py")}


def call(n: int, operation: dict[str, Any]) -> ResponseApplyPatchToolCall:
    return ResponseApplyPatchToolCall.model_validate(
        {
            "id": f"apc_{n}",
            "call_id": f"call_{n}",
            "status": "completed",
            "type": "apply_patch_call",
            "operation": operation,
        }
    )


def mixed(last_diff: str = RENAME) -> list[ResponseApplyPatchToolCall]:
    """Create new.py, update a.py and move it to moved.py, delete b.py, update c.py."""
    return [
        call(0, {"type": "create_file", "path": "new.py", "diff": "+x = 1\n"}),
        call(1, {"type": "update_file", "path": "a.py", "diff": RENAME, "move_to": "moved.py"}),
        call(2, {"type": "delete_file", "path": "b.py"}),
        call(3, {"type": "update_file", "path": "c.py", "diff": last_diff}),
    ]


def statuses(replies: list[Any]) -> list[str]:
    return [reply["status"] for reply in replies]


def tree(root: Path) -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(root.iterdir()) if p.is_file()}


async def read_all(root: Path, session: Session) -> None:
    for name, text in BEFORE.items():
        (root / name).write_text(text, encoding="utf-8")
    reads = [
        ResponseFunctionToolCall(
            type="function_call",
            call_id=f"call_r{n}",
            name="read",
            arguments=f'{{"file_path": "{name}"}}',
        )
        for n, name in enumerate(BEFORE)
    ]
    await execute_openai_response(session, reads)


async def test_a_response_that_creates_updates_moves_and_deletes_lands_whole_in_one_group(
    tmp_path: Path,
) -> None:
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    async with Workspace.sandbox(root, journal=tmp_path / "store") as workspace:
        session = workspace.session()
        await read_all(root, session)
        replies = await execute_openai_response(session, mixed())
        assert [(r["status"], r["output"]) for r in map(dict, replies)] == [
            ("completed", f"Created file {root / 'new.py'}"),
            ("completed", f"Updated and moved file {root / 'a.py'} to {root / 'moved.py'}"),
            ("completed", f"Deleted file {root / 'b.py'}"),
            ("completed", f"Updated file {root / 'c.py'}"),
        ]
        assert tree(root) == {
            "c.py": "def c():\n    return new\n",
            "moved.py": "def a():\n    return new\n",
            "new.py": "x = 1\n",
        }
        assert workspace.journal is not None
        entries = await workspace.journal.entries()
        (group,) = {entry.group for entry in entries if entry.group is not None}
        # One entry per step: the create, a.py's patch and its move, the delete, the update.
        assert len([e for e in entries if e.group == group]) == 5
        undone = await workspace.journal.undo(ids=[group])
        assert {result.result for result in undone} == {"undone"}, undone
    assert tree(root) == BEFORE


async def test_a_failing_operation_while_staging_leaves_every_file_as_it_was(
    tmp_path: Path,
) -> None:
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    async with Workspace.sandbox(root) as workspace:
        session = workspace.session()
        await read_all(root, session)
        replies = await execute_openai_response(
            session, mixed("@@\n-    return absent\n+    return new\n")
        )
    assert statuses(replies) == ["failed"] * 4
    assert str(replies[3]["output"]).startswith("Error: hunk 1 of the patch was not found in")
    assert replies[0]["output"] == (
        f"Error: not applied: the patch to {root / 'c.py'} in the same response failed, and "
        "a response's apply_patch operations apply all or none"
    )
    assert tree(root) == BEFORE


class BeforePublication(WrapperFileSystem):
    """The local provider, running `hook` once right before the set's first publication
    step of any kind (every operation staged, none published)."""

    def __init__(self, root: Path, hook: Callable[[], Awaitable[None]]) -> None:
        super().__init__(LocalFileSystem(root))
        self.hook: Callable[[], Awaitable[None]] | None = hook

    async def _first(self) -> None:
        hook, self.hook = self.hook, None
        if hook is not None:
            await hook()

    async def write_text(
        self,
        target: FsTarget,
        content: str,
        expected: WriteGuard | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsWriteOutcome:
        await self._first()
        return await super().write_text(target, content, expected, capture=capture)

    async def delete(
        self,
        target: FsTarget,
        expected: FsVersion | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsDeleteOutcome:
        await self._first()
        return await super().delete(target, expected, capture=capture)

    async def move(
        self,
        source: FsTarget,
        destination: FsTarget,
        expected: FsVersion | None = None,
        replace: WriteGuard | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsMoveOutcome:
        await self._first()
        return await super().move(source, destination, expected, replace, capture=capture)


@pytest.mark.parametrize(
    ("position", "name"),
    [(1, "new.py"), (2, "moved.py"), (3, "b.py"), (4, "c.py")],
)
async def test_a_writer_during_publication_at_any_position_puts_every_operation_back(
    tmp_path: Path, position: int, name: str
) -> None:
    # Another program writes the file of operation `position` after staging: that step is
    # refused, and every step published before it is undone (the created file removed,
    # the moved file back with its old text, the deleted file restored).
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    theirs = "their content\n"

    async def writer() -> None:
        (root / name).write_text(theirs, encoding="utf-8")

    workspace = Workspace(BeforePublication(root, writer), cwd=str(root))
    try:
        session = workspace.session()
        await read_all(root, session)
        replies = await execute_openai_response(session, mixed())
        assert statuses(replies) == ["failed"] * 4, replies
        own = str(replies[position - 1]["output"])
        # The refusal the operation alone would get (stale, or a file there now).
        assert own.startswith("Error: cannot "), own
        assert str(root / name) in own
    finally:
        await workspace.aclose()
    assert tree(root) == {**BEFORE, name: theirs}


AGENT = Path(__file__).parent / "patch_set_agent.py"


def run_agent(root: Path, steps: int) -> None:
    """Run the agent until it kills itself after `steps` publication steps."""
    child = subprocess.run(
        [sys.executable, str(AGENT), str(root), str(steps)],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ.copy(),
        check=False,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr


@pytest.mark.parametrize("steps", [1, 3, 4, 5])
async def test_a_process_killed_mid_response_is_rolled_back_whole_at_the_next_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, steps: int
) -> None:
    # A real SIGKILL after `steps` of the set's 5 publication steps (new.py created, the
    # patched a.py created at moved.py, a.py deleted, b.py deleted, c.py written): the next
    # start rolls every one back from the intent record, or finds the set finished.
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    for name, text in BEFORE.items():
        (root / name).write_text(text, encoding="utf-8")
    run_agent(root, steps)
    assert tree(root) != BEFORE  # half published (or whole)
    async with Workspace.local(root) as workspace:
        (recovery,) = workspace.recovered
    if steps < 5:
        assert recovery.outcome == "rolled back"
        assert tree(root) == BEFORE
    else:
        assert recovery.outcome == "finished"
        assert tree(root) == {
            "c.py": "def c():\n    return new\n",
            "moved.py": "def a():\n    return new\n",
            "new.py": "x = 1\n",
        }


async def test_under_approval_the_whole_response_is_one_question_and_lands_whole(
    tmp_path: Path,
) -> None:
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    asked: list[Proposal] = []

    def approve(proposal: Proposal) -> Approval:
        asked.append(proposal)
        assert not (root / "new.py").exists()  # nothing lands while the person looks
        return Approval(approved=True)

    async with Workspace.sandbox(root, approve=approve) as workspace:
        session = workspace.session()
        await read_all(root, session)
        replies = await execute_openai_response(session, mixed())
    assert statuses(replies) == ["completed"] * 4, replies
    (proposal,) = asked
    # new.py created; a.py's new text created at moved.py and a.py deleted; b.py deleted.
    assert [(change.action, Path(change.path).name) for change in proposal.changes] == [
        ("write", "new.py"),
        ("write", "moved.py"),
        ("delete", "a.py"),
        ("delete", "b.py"),
        ("write", "c.py"),
    ]
    assert f"rename from {root / 'a.py'}\nrename to {root / 'moved.py'}\n" in proposal.diff
    assert sorted(tree(root)) == ["c.py", "moved.py", "new.py"]
