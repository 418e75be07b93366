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


async def test_a_directorys_move_is_an_entry_and_undoes_with_what_changed_in_it(
    tmp_path: Path,
) -> None:
    """A moved directory is found again by its identity, not its version: files made and
    edited in it after the move move back with it; the whole run undoes in reverse."""
    root, store = tmp_path / "root", tmp_path / "store"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").write_bytes(b"a = 1\n")
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        moved = await s.call("move", {"source_path": "pkg", "destination_path": "lib/pkg"})
        assert not moved.is_error, moved.text
        (entry,) = await ws.journal.entries()
        assert (entry.tool, entry.rel, entry.directory, entry.link) == (
            "move",
            "lib/pkg",
            True,
            False,
        )
        assert entry.source is not None
        assert Path(entry.source).name == "pkg"
        assert entry.before is None
        assert entry.after is not None
        assert entry.undoable
        assert "a directory moved from" in await ws.journal.diff(entry.id)
        (root / "lib" / "pkg" / "user.txt").write_text("made by the user after the move\n")
        await s.call("read", {"file_path": "lib/pkg/a.py"})
        edited = await s.call(
            "edit", {"file_path": "lib/pkg/a.py", "old_string": "1", "new_string": "2"}
        )
        assert not edited.is_error, edited.text
        dry = await ws.journal.undo(session="agent", dry_run=True)
        assert [r.result for r in dry] == ["undone", "undone"]
        assert (root / "lib" / "pkg").is_dir()
        results = await ws.journal.undo(session="agent")
        assert [r.result for r in results] == ["undone", "undone"], results
        (again,) = await ws.journal.undo(ids=[entry.id])
        assert again.result == "refused"
        assert "already undone" in str(again.reason)
        undo = next(e for e in await ws.journal.entries() if e.undoes == entry.id)
        assert undo.directory
        assert undo.rel == "pkg"
    assert (root / "pkg" / "a.py").read_bytes() == b"a = 1\n"
    assert (root / "pkg" / "user.txt").read_text() == "made by the user after the move\n"
    assert not (root / "lib" / "pkg").exists()


async def test_a_moved_directorys_undo_is_refused_for_another_directory_or_a_taken_source(
    tmp_path: Path,
) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    for name in ("one", "two"):
        (root / name).mkdir(parents=True)
        (root / name / "f.txt").write_text(f"{name}\n")
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        await s.call("move", {"source_path": "one", "destination_path": "one-moved"})
        await s.call("move", {"source_path": "two", "destination_path": "two-moved"})
        # Another directory takes the first one's place; the second's source is taken.
        os.rename(root / "one-moved", root / "elsewhere")
        (root / "one-moved").mkdir()
        (root / "two").mkdir()
        results = {Path(r.path).name: r for r in await ws.journal.undo(session="agent")}
        assert {n: r.result for n, r in results.items()} == {
            "one-moved": "refused",
            "two-moved": "refused",
        }
        assert "another directory" in str(results["one-moved"].reason)
        assert "exists at" in str(results["two-moved"].reason)
        assert not [e for e in await ws.journal.entries() if e.tool == "undo"]
    assert (root / "elsewhere" / "f.txt").read_text() == "one\n"
    assert (root / "two-moved" / "f.txt").read_text() == "two\n"


async def test_a_links_move_is_an_entry_and_its_undo_moves_the_link_itself_back(
    tmp_path: Path,
) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    (root / "target.txt").write_text("pointed at\n")
    os.symlink("target.txt", root / "link")
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        moved = await s.call("move", {"source_path": "link", "destination_path": "renamed"})
        assert not moved.is_error, moved.text
        (entry,) = await ws.journal.entries()
        assert (entry.rel, entry.link, entry.directory) == ("renamed", True, False)
        assert "a symbolic link moved from" in await ws.journal.diff(entry.id)
        (result,) = await ws.journal.undo(ids=[entry.id])
        assert result.result == "undone", result.reason
    assert os.readlink(root / "link") == "target.txt"
    assert not (root / "renamed").is_symlink()
    assert (root / "target.txt").read_text() == "pointed at\n"


async def test_a_replaced_link_is_refused_and_the_new_one_kept(tmp_path: Path) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    os.symlink("a", root / "link")
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        await s.call("move", {"source_path": "link", "destination_path": "moved"})
        os.unlink(root / "moved")
        os.symlink("b", root / "moved")  # the same name, another link
        (result,) = await ws.journal.undo(session="agent")
        assert result.result == "refused"
        assert "another link" in str(result.reason)
    assert os.readlink(root / "moved") == "b"
    assert not (root / "link").is_symlink()


async def test_an_empty_directorys_delete_is_an_entry_and_its_undo_makes_it_again(
    tmp_path: Path,
) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    (root / "gone").mkdir(parents=True)
    (root / "taken").mkdir()
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        for name in ("gone", "taken"):
            deleted = await s.call("delete", {"file_path": name})
            assert not deleted.is_error, deleted.text
        entries = await ws.journal.entries()
        assert [(e.tool, e.rel, e.directory, e.after) for e in entries] == [
            ("delete", "taken", True, None),
            ("delete", "gone", True, None),
        ]
        assert all(e.before is not None and e.undoable for e in entries)
        (root / "taken").write_text("a file now\n")
        results = {Path(r.path).name: r for r in await ws.journal.undo(session="agent")}
        assert results["gone"].result == "undone", results["gone"].reason
        assert results["taken"].result == "refused"
        assert "exists there now" in str(results["taken"].reason)
    assert (root / "gone").is_dir()
    assert (root / "taken").read_text() == "a file now\n"
