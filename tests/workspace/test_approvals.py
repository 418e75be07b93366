"""Approvals pinned to the approved bytes (SPEC §11.2) through the library: the callback,
the modes, the pin, single use, and the deferred proposal."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import anyio
import pytest

from dsh_fs import Approval, Proposal, Workspace

pytestmark = pytest.mark.anyio


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


async def test_a_sync_callback_sees_the_full_proposal_and_its_approval_lands_exactly_those_bytes(
    tmp_path: Path,
) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    (root / "a.py").write_text("x = 1\ny = 2\n")
    seen: list[Proposal] = []

    def approve(proposal: Proposal) -> Approval:
        seen.append(proposal)
        # Nothing is published while the person looks.
        assert (root / "a.py").read_text() == "x = 1\ny = 2\n"
        return Approval(approved=True, note="fine")

    async with Workspace.sandbox(root, journal=store, approve=approve) as ws:
        s = ws.session(label="agent")
        read = await s.call("read", {"file_path": "a.py"})
        assert not read.is_error
        result = await s.call(
            "edit", {"file_path": "a.py", "old_string": "y = 2", "new_string": "y = 3"}
        )
        assert not result.is_error, result.text
        assert (root / "a.py").read_text() == "x = 1\ny = 3\n"
        (proposal,) = seen
        assert proposal.tool == "edit"
        (change,) = proposal.changes
        assert change.path == str(root / "a.py")
        assert change.content == "x = 1\ny = 3\n"
        assert change.base is not None
        assert "-y = 2\n+y = 3\n" in proposal.diff
        assert ws.journal is not None
        (entry,) = await ws.journal.entries()
        assert (entry.approved_by, entry.approval_note) == ("callback", "fine")
        assert entry.to_json()["approved_by"] == "callback"


async def test_an_async_callback_rejecting_with_a_note_gives_fs_rejected_and_nothing_changes(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.txt").write_text("old\n")

    async def approve(proposal: Proposal) -> Approval:
        await anyio.lowlevel.checkpoint()
        return Approval(approved=False, note="keep the old wording")

    async with Workspace.local(tmp_path, approve=approve) as ws:
        s = ws.session()
        await s.call("read", {"file_path": "a.txt"})
        result = await s.call("write", {"file_path": "a.txt", "content": "new\n"})
    assert result.is_error
    assert result.code == "FS_REJECTED"
    assert result.text == (
        f'Error: the user rejected this change to "{tmp_path / "a.txt"}": keep the old wording'
    )
    assert (tmp_path / "a.txt").read_text() == "old\n"


async def test_a_rejection_without_a_note_ends_at_the_path(tmp_path: Path) -> None:
    async with Workspace.local(tmp_path, approve=lambda p: Approval(approved=False)) as ws:
        result = await ws.session().call("write", {"file_path": "n.txt", "content": "x"})
    assert result.text == f'Error: the user rejected this change to "{tmp_path / "n.txt"}"'
    assert not (tmp_path / "n.txt").exists()


async def test_without_an_approver_a_held_change_is_not_approved(tmp_path: Path) -> None:
    async with Workspace.local(tmp_path, approve="changes") as ws:
        result = await ws.session().call("write", {"file_path": "n.txt", "content": "x"})
        made = await ws.session().call("mkdir", {"path": "d"})
    assert result.code == "FS_NOT_APPROVED"
    assert result.text == (
        f'Error: cannot write "{tmp_path / "n.txt"}": approval required and none was given'
    )
    assert made.code == "FS_NOT_APPROVED"
    assert _tree(tmp_path) == []


async def test_no_answer_in_time_is_not_approved_and_leaves_nothing_behind(tmp_path: Path) -> None:
    never = anyio.Event()

    async def approve(proposal: Proposal) -> Approval:
        await never.wait()
        return Approval(approved=True)

    async with Workspace.local(tmp_path, approve=approve, approve_timeout=0.05) as ws:
        with anyio.fail_after(60):
            result = await ws.session().call("write", {"file_path": "n.txt", "content": "x"})
    assert result.code == "FS_NOT_APPROVED"
    assert _tree(tmp_path) == []


async def test_a_concurrent_change_during_the_wait_is_stale_and_the_other_writers_bytes_stay(
    tmp_path: Path,
) -> None:
    target = tmp_path / "a.txt"
    target.write_text("one\ntwo\n")

    writes = iter(["theirs\n", "theirs, again\n"])

    def approve(proposal: Proposal) -> Approval:
        # Another writer gets in while the person reads the diff.
        target.write_text(next(writes))
        return Approval(approved=True)

    async with Workspace.local(tmp_path, approve=approve) as ws:
        s = ws.session()
        await s.call("read", {"file_path": "a.txt"})
        edit = await s.call("edit", {"file_path": "a.txt", "old_string": "two", "new_string": "2"})
        assert edit.code == "FS_STALE_VERSION"
        assert edit.text == (
            f'Error: cannot edit "{target}": file changed since it was read — re-read the file, '
            "then retry"
        )
        assert target.read_text() == "theirs\n"
        await s.call("read", {"file_path": "a.txt"})
        write = await s.call("write", {"file_path": "a.txt", "content": "mine\n"})
        assert write.code == "FS_STALE_VERSION"
        assert target.read_text() == "theirs, again\n"


async def test_a_call_cancelled_while_it_waits_leaves_no_file_and_no_staged_residue(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.txt").write_text("old\n")
    asked = anyio.Event()

    async def approve(proposal: Proposal) -> Approval:
        asked.set()
        await anyio.Event().wait()
        return Approval(approved=True)

    async with Workspace.local(tmp_path, approve=approve) as ws:
        s = ws.session()
        await s.call("read", {"file_path": "a.txt"})
        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:

                async def call() -> None:
                    await s.call("write", {"file_path": "a.txt", "content": "new\n"})
                    raise AssertionError("the call should have been cancelled")

                tg.start_soon(call)
                await asked.wait()
                tg.cancel_scope.cancel()
    assert _tree(tmp_path) == ["a.txt"]
    assert (tmp_path / "a.txt").read_text() == "old\n"
    assert os.listdir(tmp_path) == ["a.txt"]


async def test_destructive_asks_for_overwrite_delete_and_move_and_listed_paths_but_not_creates(
    tmp_path: Path,
) -> None:
    asked: list[tuple[str, tuple[str, ...]]] = []

    def approve(proposal: Proposal) -> Approval:
        asked.append((proposal.tool, tuple(Path(p).name for p in proposal.paths)))
        return Approval(approved=True)

    (tmp_path / "keep.txt").write_text("k\n")
    (tmp_path / "settings.toml").write_text("a = 1\n")
    async with Workspace.local(
        tmp_path,
        approve="destructive",
        approver=approve,
        approve_paths=["*.toml"],
    ) as ws:
        s = ws.session()
        assert not (await s.call("write", {"file_path": "new.txt", "content": "n\n"})).is_error
        assert not (
            await s.call("edit", {"file_path": "new.txt", "old_string": "n", "new_string": "m"})
        ).is_error
        assert asked == []
        await s.call("read", {"file_path": "keep.txt"})
        assert not (await s.call("write", {"file_path": "keep.txt", "content": "K\n"})).is_error
        await s.call("read", {"file_path": "settings.toml"})
        edited = await s.call(
            "edit", {"file_path": "settings.toml", "old_string": "1", "new_string": "2"}
        )
        assert not edited.is_error
        moved = await s.call("move", {"source_path": "new.txt", "destination_path": "moved.txt"})
        assert not moved.is_error, moved.text
        assert not (await s.call("delete", {"file_path": "moved.txt"})).is_error
    assert asked == [
        ("write", ("keep.txt",)),
        ("edit", ("settings.toml",)),
        ("move", ("moved.txt",)),
        ("delete", ("moved.txt",)),
    ]
    assert (tmp_path / "settings.toml").read_text() == "a = 2\n"
    assert sorted(os.listdir(tmp_path)) == ["keep.txt", "settings.toml"]


async def test_edit_files_asks_once_for_the_whole_set_with_one_diff(tmp_path: Path) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    (root / "a.py").write_text("def f():\n    pass\n")
    (root / "b.py").write_text("f()\n")
    seen: list[Proposal] = []

    def approve(proposal: Proposal) -> Approval:
        seen.append(proposal)
        return Approval(approved=True, by="alice")

    async with Workspace.sandbox(root, journal=store, approve=approve) as ws:
        s = ws.session()
        await s.call("read", {"file_path": "a.py"})
        await s.call("read", {"file_path": "b.py"})
        result = await s.call(
            "edit_files",
            {
                "edits": [
                    {"file_path": "a.py", "old_string": "def f", "new_string": "def g"},
                    {"file_path": "b.py", "old_string": "f()", "new_string": "g()"},
                ]
            },
        )
        assert not result.is_error, result.text
        (proposal,) = seen
        assert [Path(p).name for p in proposal.paths] == ["a.py", "b.py"]
        assert "-def f():\n+def g():\n" in proposal.diff
        assert "-f()\n+g()\n" in proposal.diff
        assert ws.journal is not None
        entries = await ws.journal.entries()
        assert {e.approved_by for e in entries} == {"alice"}
        assert len({e.group for e in entries}) == 1
    assert (root / "b.py").read_text() == "g()\n"


async def test_a_rejected_set_changes_no_file(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "b.txt").write_text("b\n")
    async with Workspace.local(tmp_path, approve=lambda p: Approval(approved=False)) as ws:
        s = ws.session()
        await s.call("read", {"file_path": "a.txt"})
        await s.call("read", {"file_path": "b.txt"})
        result = await s.call(
            "edit_files",
            {
                "edits": [
                    {"file_path": "a.txt", "old_string": "a", "new_string": "A"},
                    {"file_path": "b.txt", "old_string": "b", "new_string": "B"},
                ]
            },
        )
    assert result.code == "FS_REJECTED"
    assert (tmp_path / "a.txt").read_text() == "a\n"
    assert (tmp_path / "b.txt").read_text() == "b\n"


async def test_the_dialects_internal_tools_are_held_too(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    tools: list[str] = []

    def approve(proposal: Proposal) -> Approval:
        tools.append(proposal.tool)
        return Approval(approved=False)

    async with Workspace.local(tmp_path, approve=approve) as ws:
        s = ws.session()
        await s.call("read", {"file_path": "a.txt"})
        insert = await s.call(
            "insert", {"file_path": "a.txt", "insert_line": 0, "text": "zero"}, internal=True
        )
        gone = await s.call("delete_file", {"file_path": "a.txt"}, internal=True)
    assert (insert.code, gone.code) == ("FS_REJECTED", "FS_REJECTED")
    assert tools == ["insert", "delete_file"]
    assert (tmp_path / "a.txt").read_text() == "one\n"


async def test_an_undo_is_the_persons_own_and_is_never_held(tmp_path: Path) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    asked: list[str] = []

    def approve(proposal: Proposal) -> Approval:
        asked.append(proposal.tool)
        return Approval(approved=True)

    async with Workspace.sandbox(root, journal=store, approve=approve) as ws:
        s = ws.session(label="agent")
        assert not (await s.call("write", {"file_path": "n.txt", "content": "x"})).is_error
        assert ws.journal is not None
        results = await ws.journal.undo(session="agent")
    assert [r.result for r in results] == ["undone"]
    assert asked == ["write"]
    assert not (root / "n.txt").exists()


# -- deferred: a proposal held across a pause ------------------------------------------------


async def _held(ws: Workspace, root: Path) -> tuple[Proposal, object]:
    """An edit of a.txt proposed and left waiting (the approver keeps it, answers None)."""
    kept: list[Proposal] = []

    def approve(proposal: Proposal) -> None:
        kept.append(proposal)

    s = ws.session(label="agent")
    s.approver = approve
    await s.call("read", {"file_path": "a.txt"})
    result = await s.call("edit", {"file_path": "a.txt", "old_string": "two", "new_string": "2"})
    assert result.code == "FS_NOT_APPROVED"
    assert (root / "a.txt").read_text() == "one\ntwo\n"
    (proposal,) = kept
    return Proposal.from_json(proposal.to_json()), s


async def test_a_deferred_proposal_applies_later_once_when_the_file_is_unchanged(
    tmp_path: Path,
) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    (root / "a.txt").write_text("one\ntwo\n")
    async with Workspace.sandbox(root, journal=store, approve="changes") as ws:
        proposal, _ = await _held(ws, root)
        assert json.loads(proposal.to_json())["changes"][0]["content"] == "one\n2\n"
        # Resumed tomorrow, in another session of the same workspace.
        later = ws.session(label="resumed")
        applied = await later.apply(proposal, Approval(approved=True, by="bob", note="ok"))
        assert not applied.is_error, applied.text
        assert (root / "a.txt").read_text() == "one\n2\n"
        assert ws.journal is not None
        (entry,) = await ws.journal.entries()
        assert (entry.tool, entry.approved_by, entry.approval_note) == ("edit", "bob", "ok")
        again = await later.apply(proposal, Approval(approved=True))
        assert again.code == "FS_NOT_APPROVED"
        # The session that applied it observed the result: it may edit on (asked again).
        later.approver = lambda proposal: None
        more = await later.call(
            "edit", {"file_path": "a.txt", "old_string": "one", "new_string": "1"}
        )
        assert more.code == "FS_NOT_APPROVED"  # not FS_NOT_OBSERVED


async def test_a_deferred_proposal_is_stale_when_the_file_moved_on(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    async with Workspace.local(tmp_path, approve="changes") as ws:
        proposal, _ = await _held(ws, tmp_path)
        (tmp_path / "a.txt").write_text("one\ntwo\nthree\n")
        result = await ws.session().apply(proposal, Approval(approved=True))
    assert result.code == "FS_STALE_VERSION"
    assert result.text.endswith("— re-read the file, then retry")
    assert (tmp_path / "a.txt").read_text() == "one\ntwo\nthree\n"


async def test_a_tampered_or_foreign_or_rejected_proposal_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    other = tmp_path / "other"
    root.mkdir()
    other.mkdir()
    (root / "a.txt").write_text("one\ntwo\n")
    (other / "a.txt").write_text("one\ntwo\n")
    async with Workspace.sandbox(root, approve="changes") as ws:
        proposal, _ = await _held(ws, root)
        s = ws.session()
        (change,) = proposal.changes
        tampered = dataclasses.replace(
            proposal, changes=(dataclasses.replace(change, content="rm -rf /\n"),)
        )
        assert (await s.apply(tampered, Approval(approved=True))).code == "FS_NOT_APPROVED"
        outside = dataclasses.replace(
            proposal, changes=(dataclasses.replace(change, path=str(other / "a.txt")),)
        )
        refused = await s.apply(outside, Approval(approved=True))
        assert refused.is_error
        assert refused.code == "FS_SANDBOX_DENIED"
        rejected = await s.apply(proposal, Approval(approved=False, note="no"))
        assert rejected.code == "FS_REJECTED"
        assert rejected.text.endswith(": no")
    async with Workspace.sandbox(other, approve="changes") as foreign:
        result = await foreign.session().apply(proposal, Approval(approved=True))
        assert result.code == "FS_NOT_APPROVED"
    assert (root / "a.txt").read_text() == "one\ntwo\n"
    assert (other / "a.txt").read_text() == "one\ntwo\n"


def test_a_proposal_that_is_not_a_proposals_json_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="'id' must be a string"):
        Proposal.from_json('{"id": 1, "changes": [{}]}')
    with pytest.raises(ValueError, match="must be a JSON object"):
        Proposal.from_json("[]")


async def test_the_proposal_diff_cuts_lines_at_newlines_only(tmp_path: Path) -> None:
    # A form feed or a lone CR inside a line is part of it, as `read` and the journal's
    # diff take it: `splitlines` showed each such line as two, both "without a newline".
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_bytes(b"page one\x0cstill one\nx = 1\rcr inside\n")
    seen: list[Proposal] = []

    def approve(proposal: Proposal) -> Approval:
        seen.append(proposal)
        return Approval(approved=True)

    async with Workspace.sandbox(root, approve=approve) as ws:
        s = ws.session(label="agent")
        await s.call("read", {"file_path": "a.txt"})
        edit = {"file_path": "a.txt", "old_string": "x = 1", "new_string": "x = 2"}
        result = await s.call("edit", edit)
        assert not result.is_error, result.text
    (proposal,) = seen
    assert "No newline" not in proposal.diff
    assert "\n page one\x0cstill one\n-x = 1\rcr inside\n+x = 2\rcr inside\n" in proposal.diff


async def test_a_write_over_a_binary_file_is_proposed_with_its_size_and_lands(
    tmp_path: Path,
) -> None:
    # The proposal read the file as text and failed: "cannot read ...: binary file" on a
    # write, and the person was never asked.
    root = tmp_path / "root"
    root.mkdir()
    (root / "c.bin").write_bytes(b"\0\1\2binary")
    seen: list[Proposal] = []

    def approve(proposal: Proposal) -> Approval:
        seen.append(proposal)
        assert (root / "c.bin").read_bytes() == b"\0\1\2binary"  # nothing published yet
        return Approval(approved=True)

    async with Workspace.sandbox(root, approve=approve) as ws:
        s = ws.session(label="agent")
        refused = await s.call("read", {"file_path": "c.bin"})
        assert refused.code == "FS_NOT_TEXT"
        result = await s.call("write", {"file_path": "c.bin", "content": "text now\n"})
        assert not result.is_error, result.text
    (proposal,) = seen
    assert "(replaced: 9 bytes, not text)\n" in proposal.diff
    assert "+text now\n" in proposal.diff
    assert (root / "c.bin").read_text() == "text now\n"
