"""The file management tools in the journal (SPEC §9, §10): a file's move is one entry
(`path` the destination, `from` the source, the replaced destination its pre-image) and
its undo moves the file back, guarded, and brings the replaced file back; a made
directory undoes only while it is as mkdir left it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dsh_fs import Workspace

pytestmark = pytest.mark.anyio


async def test_a_move_is_one_entry_and_its_undo_moves_the_file_back(tmp_path: Path) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    (root / "a.txt").write_bytes(b"the bytes\r\n")
    os.chmod(root / "a.txt", 0o640)
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        assert not (await s.call("read", {"file_path": "a.txt"})).is_error
        moved = await s.call("move", {"source_path": "a.txt", "destination_path": "sub/b.txt"})
        assert not moved.is_error, moved.text
        (entry,) = await ws.journal.entries()
        assert entry.tool == "move"
        assert entry.rel == "sub/b.txt"
        assert entry.source is not None
        assert Path(entry.source).name == "a.txt"
        assert entry.to_json()["from"] == entry.source
        assert entry.before is None
        assert entry.after is not None
        assert entry.undoable
        dry = await ws.journal.undo(ids=[entry.id], dry_run=True)
        assert [r.result for r in dry] == ["undone"]
        assert (root / "sub" / "b.txt").exists()
        (result,) = await ws.journal.undo(ids=[entry.id])
        assert result.result == "undone", result.reason
    assert (root / "a.txt").read_bytes() == b"the bytes\r\n"
    assert (root / "a.txt").stat().st_mode & 0o777 == 0o640
    assert not (root / "sub" / "b.txt").exists()


async def test_a_move_that_replaced_a_file_undoes_to_both_files_exact_bytes(
    tmp_path: Path,
) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    (root / "a.txt").write_bytes(b"moved\n")
    (root / "b.txt").write_bytes(b"replaced\r\nbytes")
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        await s.call("read", {"file_path": "a.txt"})
        await s.call("read", {"file_path": "b.txt"})
        moved = await s.call("move", {"source_path": "a.txt", "destination_path": "b.txt"})
        assert not moved.is_error, moved.text
        (entry,) = await ws.journal.entries()
        assert entry.before is not None
        assert ws.journal.store.pre_image_bytes(entry.id, 1 << 20) == b"replaced\r\nbytes"
        (result,) = await ws.journal.undo(session="agent")
        assert result.result == "undone", result.reason
        undos = [e for e in await ws.journal.entries() if e.tool == "undo"]
        assert {e.undoes for e in undos} == {entry.id}
        assert len(undos) == 2  # the move back, the replaced file recreated
    assert (root / "a.txt").read_bytes() == b"moved\n"
    assert (root / "b.txt").read_bytes() == b"replaced\r\nbytes"


async def test_a_moves_undo_is_refused_when_the_source_is_taken_or_the_file_changed(
    tmp_path: Path,
) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    (root / "c.txt").write_text("c\n")
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        for name in ("a.txt", "c.txt"):
            await s.call("read", {"file_path": name})
        await s.call("move", {"source_path": "a.txt", "destination_path": "b.txt"})
        await s.call("move", {"source_path": "c.txt", "destination_path": "d.txt"})
        (root / "a.txt").write_text("the user's new a\n")  # the source is taken
        (root / "d.txt").write_text("the user's edit\n")  # the moved file changed
        results = {Path(r.path).name: r for r in await ws.journal.undo(session="agent")}
        assert {n: r.result for n, r in results.items()} == {"b.txt": "refused", "d.txt": "refused"}
        assert "exists at" in str(results["b.txt"].reason)
        assert "changed since" in str(results["d.txt"].reason)
    assert (root / "a.txt").read_text() == "the user's new a\n"
    assert (root / "b.txt").read_text() == "a\n"
    assert (root / "d.txt").read_text() == "the user's edit\n"
    assert not (root / "c.txt").exists()


async def test_a_created_directory_is_an_entry_and_its_undo_removes_it_only_if_unchanged(
    tmp_path: Path,
) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        assert not (await s.call("mkdir", {"path": "empty"})).is_error
        assert not (await s.call("mkdir", {"path": "full"})).is_error
        assert not (await s.call("mkdir", {"path": "full"})).is_error  # exists: no entry
        (root / "full" / "user.txt").write_text("the user's file\n")
        entries = await ws.journal.entries()
        assert [(e.tool, e.rel) for e in entries] == [("mkdir", "full"), ("mkdir", "empty")]
        dry = {r.path: r.result for r in await ws.journal.undo(session="agent", dry_run=True)}
        results = {Path(r.path).name: r for r in await ws.journal.undo(session="agent")}
        assert {Path(p).name: r for p, r in dry.items()} == {
            "empty": "undone",
            "full": "refused",
        }
        assert results["empty"].result == "undone"
        assert results["full"].result == "refused"
        # A name made in it moved the directory's version: refused as changed since.
        assert "changed since" in str(results["full"].reason)
        undo = [e for e in await ws.journal.entries() if e.tool == "undo"]
        assert [e.undoes for e in undo] == [entries[1].id]
    assert not (root / "empty").exists()
    assert (root / "full" / "user.txt").read_text() == "the user's file\n"
