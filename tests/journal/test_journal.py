"""The change journal (SPEC §9) through the library: every mutation path recorded, undo
guarded by the version each change left, the store private and out of the fence."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from dsh_fs import Workspace
from dsh_fs.journal import JournalConfig


def _sub_store(store: Path) -> Path:
    (sub,) = [p for p in store.iterdir() if p.is_dir()]
    return sub


@pytest.mark.anyio
async def test_a_write_an_edit_an_insert_and_a_delete_are_each_recorded_and_undo_to_the_exact_bytes(
    tmp_path: Path,
) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    (root / "a.txt").write_bytes(b"one\r\ntwo\r\n")
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        assert not (await s.call("read", {"file_path": "a.txt"})).is_error
        assert not (
            await s.call("edit", {"file_path": "a.txt", "old_string": "two", "new_string": "2"})
        ).is_error
        assert not (
            await s.call(
                "insert", {"file_path": "a.txt", "insert_line": 0, "text": "zero"}, internal=True
            )
        ).is_error
        assert not (await s.call("write", {"file_path": "b.txt", "content": "new\n"})).is_error
        assert not (await s.call("delete_file", {"file_path": "b.txt"}, internal=True)).is_error
        entries = await ws.journal.entries()
        assert [e.tool for e in entries] == ["delete_file", "write", "insert", "edit"]
        assert [(e.added, e.removed) for e in entries] == [(0, 1), (1, 0), (1, 0), (1, 1)]
        assert all(e.session.startswith("agent-") for e in entries)
        assert entries[0].after is None
        assert entries[1].before is None
        results = await ws.journal.undo(session="agent")
        assert [r.result for r in results] == ["undone"] * 4
        assert (root / "a.txt").read_bytes() == b"one\r\ntwo\r\n"
        assert not (root / "b.txt").exists()
        after = await ws.journal.entries()
        assert [e.tool for e in after[:4]] == ["undo"] * 4
        assert {e.undoes for e in after[:4]} == {e.id for e in entries}


@pytest.mark.anyio
async def test_an_undo_is_refused_when_the_file_changed_since_and_nothing_of_it_changes(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        await s.call("write", {"file_path": "a.txt", "content": "agent\n"})
        (root / "a.txt").write_text("user's newer edit\n")
        (result,) = await ws.journal.undo(session="agent")
        assert result.result == "refused"
        assert result.reason is not None
        assert "changed since" in result.reason
        assert (root / "a.txt").read_text() == "user's newer edit\n"
        assert [e.tool for e in await ws.journal.entries()] == [
            "write"
        ]  # a refusal writes no entry
        dry = await ws.journal.undo(session="agent", dry_run=True)
        assert [r.result for r in dry] == ["refused"]


@pytest.mark.anyio
async def test_an_undone_change_cannot_be_undone_twice_and_an_undo_of_the_undo_redoes_it(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("before\n")
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        await s.call("read", {"file_path": "a.txt"})
        await s.call("write", {"file_path": "a.txt", "content": "after\n"})
        (change,) = await ws.journal.entries()
        assert [r.result for r in await ws.journal.undo(ids=[change.id])] == ["undone"]
        assert (root / "a.txt").read_text() == "before\n"
        (again,) = await ws.journal.undo(ids=[change.id])
        assert again.result == "refused"
        assert again.reason is not None
        assert "already undone" in again.reason
        undo_entry = (await ws.journal.entries())[0]
        assert [r.result for r in await ws.journal.undo(ids=[undo_entry.id])] == ["undone"]
        assert (root / "a.txt").read_text() == "after\n"


@pytest.mark.anyio
async def test_a_chain_of_changes_to_one_file_undoes_in_reverse_order_to_the_first_bytes(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("v0\n")
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        await s.call("read", {"file_path": "a.txt"})
        for n in range(1, 4):
            await s.call(
                "edit", {"file_path": "a.txt", "old_string": f"v{n - 1}", "new_string": f"v{n}"}
            )
        assert [r.result for r in await ws.journal.undo(since="1h")] == ["undone"] * 3
        assert (root / "a.txt").read_text() == "v0\n"


@pytest.mark.anyio
async def test_the_store_is_private_and_an_undo_restores_the_files_mode(tmp_path: Path) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    secret = root / "secret.txt"
    secret.write_text("token\n")
    secret.chmod(0o600)
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        await s.call("read", {"file_path": "secret.txt"})
        await s.call("delete_file", {"file_path": "secret.txt"}, internal=True)
        sub = _sub_store(store)
        assert stat.S_IMODE(store.stat().st_mode) == 0o700
        assert stat.S_IMODE(sub.stat().st_mode) == 0o700
        for item in sub.iterdir():
            assert stat.S_IMODE(item.stat().st_mode) & 0o077 == 0, item
        await ws.journal.undo(session="agent")
        assert secret.read_text() == "token\n"
        assert stat.S_IMODE(secret.stat().st_mode) == 0o600


@pytest.mark.anyio
async def test_a_named_store_inside_a_served_root_is_refused_at_start(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="inside a served root"):
        Workspace.sandbox(tmp_path, journal=tmp_path / "store")


@pytest.mark.anyio
async def test_the_default_store_inside_a_served_root_is_fenced_out_of_every_tool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / ".state"))
    (tmp_path / "f.txt").write_text("needle\n")
    async with Workspace.sandbox(tmp_path, journal=True) as ws:
        s = ws.session(label="agent")
        await s.call("read", {"file_path": "f.txt"})
        await s.call("write", {"file_path": "f.txt", "content": "needle 2\n"})
        sub = _sub_store(tmp_path / ".state" / "dsh-fs" / "journal")
        pre = next(p for p in sub.iterdir() if p.suffix == ".pre")
        # The store reads as absent (as a denied path does), whatever the mode.
        read = await s.call("read", {"file_path": str(pre)})
        assert read.is_error
        assert read.code == "FS_NOT_FOUND"
        write = await s.call("write", {"file_path": str(sub / "x.json"), "content": "{}"})
        assert write.is_error
        assert write.code == "FS_SANDBOX_DENIED"
        grep = await s.call("grep", {"pattern": "needle", "path": str(tmp_path)})
        assert ".pre" not in grep.text
        assert "f.txt" in grep.text
        glob = await s.call("glob", {"pattern": "**/*.pre", "path": str(tmp_path)})
        assert ".pre" not in glob.text.replace("**/*.pre", "")
        listing = await s.call("list", {"path": str(sub)})
        assert listing.is_error


@pytest.mark.anyio
async def test_a_corrupt_or_truncated_entry_is_reported_and_the_others_still_list(
    tmp_path: Path,
) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        await s.call("write", {"file_path": "a.txt", "content": "a\n"})
        await s.call("write", {"file_path": "b.txt", "content": "b\n"})
        first, second = sorted(p for p in _sub_store(store).iterdir() if p.suffix == ".json")
        first.write_bytes(first.read_bytes()[:20])
        entries, problems = await ws.journal.read()
        assert [e.id + ".json" for e in entries] == [second.name]
        assert [p.name for p in problems] == [first.name]
        assert "JSON" in problems[0].reason


@pytest.mark.anyio
async def test_a_tampered_entry_cannot_make_an_undo_write_outside_the_root(tmp_path: Path) -> None:
    root, store, outside = tmp_path / "root", tmp_path / "store", tmp_path / "outside.txt"
    root.mkdir()
    (root / "a.txt").write_text("mine\n")
    outside.write_text("precious\n")
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        await s.call("read", {"file_path": "a.txt"})
        await s.call("write", {"file_path": "a.txt", "content": "agent\n"})
        (entry_file,) = [p for p in _sub_store(store).iterdir() if p.suffix == ".json"]
        record = json.loads(entry_file.read_text())
        record["path"] = str(outside)
        entry_file.write_text(json.dumps(record))
        (result,) = await ws.journal.undo(session="agent")
        assert result.result == "refused"
        assert outside.read_text() == "precious\n"


@pytest.mark.anyio
async def test_pruning_keeps_the_entries_listed_but_not_undoable(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("x" * 1000)
    config = JournalConfig(location=str(tmp_path / "store"), max_bytes=10)
    async with Workspace.sandbox(root, journal=config) as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        await s.call("read", {"file_path": "a.txt"})
        await s.call("write", {"file_path": "a.txt", "content": "y"})
        assert (await ws.journal.entries())[0].undoable
        assert await ws.journal.prune() == 1
        (entry,) = await ws.journal.entries()
        assert not entry.undoable
        (result,) = await ws.journal.undo(ids=[entry.id])
        assert result.result == "refused"
        assert (root / "a.txt").read_text() == "y"


@pytest.mark.anyio
async def test_a_journal_that_cannot_keep_the_change_refuses_it_naming_the_journal(
    tmp_path: Path,
) -> None:
    # A store directory whose writes fail: it is removed under the open workspace.
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    (root / "a.txt").write_text("keep me\n")
    async with Workspace.sandbox(root, journal=store) as ws:
        s = ws.session(label="agent")
        await s.call("read", {"file_path": "a.txt"})
        sub = _sub_store(store)
        for item in sub.iterdir():
            item.unlink()
        sub.rmdir()
        result = await s.call("write", {"file_path": "a.txt", "content": "changed\n"})
        assert result.is_error
        assert result.code == "FS_IO_ERROR"
        assert "journal" in result.text
        assert (root / "a.txt").read_text() == "keep me\n"
        assert sorted(os.listdir(root)) == ["a.txt"]  # no staging residue


def test_a_sync_workspace_mirrors_entries_diff_and_undo(tmp_path: Path) -> None:
    from dsh_fs.adapters import SyncWorkspace

    root = tmp_path / "root"
    root.mkdir()
    with SyncWorkspace.sandbox(root, journal=tmp_path / "store") as ws:
        assert ws.journal is not None
        ws.session(label="sync").call("write", {"file_path": "a.txt", "content": "a\n"})
        (entry,) = ws.journal.entries()
        assert ws.journal.diff(entry.id).startswith("--- /dev/null\n+++ b/a.txt\n")
        assert [r.result for r in ws.journal.undo(session="sync")] == ["undone"]
        assert not (root / "a.txt").exists()


@pytest.mark.anyio
async def test_without_a_journal_nothing_is_recorded_and_the_workspace_has_none(
    tmp_path: Path,
) -> None:
    async with Workspace.sandbox(tmp_path) as ws:
        assert ws.journal is None
        assert not (await ws.session().call("write", {"file_path": "a", "content": ""})).is_error


@pytest.mark.anyio
async def test_the_delete_tool_journals_a_file_and_an_empty_directory_and_undo_brings_both_back(
    tmp_path: Path,
) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    (root / "gone.txt").write_bytes(b"keep me\n")
    (root / "empty").mkdir()
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        assert not (await s.call("read", {"file_path": "gone.txt"})).is_error
        assert not (await s.call("delete", {"file_path": "gone.txt"})).is_error
        assert not (await s.call("delete", {"file_path": "empty"})).is_error
        entries = await ws.journal.entries()
        assert [(e.tool, e.rel, e.after, e.directory) for e in entries] == [
            ("delete", "empty", None, True),
            ("delete", "gone.txt", None, False),
        ]
        assert not (root / "gone.txt").exists()
        results = await ws.journal.undo(session="agent")
        assert [r.result for r in results] == ["undone", "undone"]
        assert (root / "gone.txt").read_bytes() == b"keep me\n"
        assert (root / "empty").is_dir()


@pytest.mark.anyio
async def test_an_earlier_undo_run_leaves_the_older_change_undoable_in_a_later_one(
    tmp_path: Path,
) -> None:
    """Undoing the newest change in one run puts the file back at the older change's
    `after` (a new inode): a later run finds it there and undoes the older change too."""
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        assert not (await s.call("write", {"file_path": "a.txt", "content": "one\n"})).is_error
        edited = await s.call(
            "edit", {"file_path": "a.txt", "old_string": "one", "new_string": "2"}
        )
        assert not edited.is_error, edited.text
        edit, write = await ws.journal.entries()
        assert [r.result for r in await ws.journal.undo(ids=[edit.id])] == ["undone"]
        assert (root / "a.txt").read_text() == "one\n"
        results = {r.id: r for r in await ws.journal.undo(session="agent")}
        assert edit.id not in results  # already undone: a selection skips it (SPEC §9.1)
        assert results[write.id].result == "undone", results[write.id].reason
    assert not (root / "a.txt").exists()
