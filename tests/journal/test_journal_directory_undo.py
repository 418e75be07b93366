"""The undo of a mkdir after real use (SPEC §9.1: the guard sees content, size, mode and
identity, not timestamps): a directory the change made is removed again while it is that
directory, with its mode, and empty, whatever was made in it and removed since; a directory
made at the same path since (on the inode number the first one freed), a `chmod` or a file
left in it refuse the undo and keep the directory."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dsh_fs import Workspace, _platform
from dsh_fs.journal import Journal

pytestmark = pytest.mark.anyio


def _generation(path: Path) -> int | None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        return _platform.inode_generation(fd)
    finally:
        os.close(fd)


def _needs_generations(path: Path) -> None:
    if _generation(path) is None:
        pytest.skip(f"the filesystem of {path} keeps no inode generations (FS_IOC_GETVERSION)")


async def _agent_mkdir(ws: Workspace, name: str) -> Journal:
    assert ws.journal is not None
    made = await ws.session(label="agent").call("mkdir", {"path": name})
    assert not made.is_error, made.text
    return ws.journal


async def test_a_session_that_made_a_directory_and_moved_a_file_into_it_undoes_whole(
    tmp_path: Path,
) -> None:
    """The undo of the move takes the file out again; the directory is then as mkdir left
    it but for its timestamps, and goes too (it was refused as changed since)."""
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    _needs_generations(root)
    (root / "a.txt").write_text("a\n")
    (root / "b.txt").write_text("b\n")
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        for name in ("a.txt", "b.txt"):
            assert not (await s.call("read", {"file_path": name})).is_error
        for tool, args in (
            ("delete", {"file_path": "a.txt"}),
            ("mkdir", {"path": "d"}),
            ("move", {"source_path": "b.txt", "destination_path": "d/b.txt"}),
        ):
            done = await s.call(tool, args)
            assert not done.is_error, done.text
        results = await ws.journal.undo(session="agent")
        assert [(Path(r.path).name, r.result, r.reason) for r in results] == [
            ("b.txt", "undone", None),
            ("d", "undone", None),
            ("a.txt", "undone", None),
        ]
        again = await ws.journal.undo(session="agent")
        assert all(r.result != "undone" for r in again)
    assert sorted(p.name for p in root.iterdir()) == ["a.txt", "b.txt"]
    assert (root / "b.txt").read_text() == "b\n"


async def test_a_directory_another_program_made_and_removed_a_file_in_is_removed(
    tmp_path: Path,
) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    _needs_generations(root)
    async with Workspace.sandbox(root, journal=store) as ws:
        journal = await _agent_mkdir(ws, "d")
        before = os.stat(root / "d")
        (root / "d" / "scratch.tmp").write_text("an editor's swap file\n")
        (root / "d" / "scratch.tmp").unlink()
        assert os.stat(root / "d").st_ctime_ns != before.st_ctime_ns
        dry = await journal.undo(session="agent", dry_run=True)
        assert [r.result for r in dry] == ["undone"]
        assert (root / "d").is_dir()
        results = await journal.undo(session="agent")
        assert [r.result for r in results] == ["undone"]
    assert not (root / "d").exists()


async def test_a_directory_made_again_at_the_path_on_the_same_inode_number_is_kept(
    tmp_path: Path,
) -> None:
    """The user removed the agent's directory and made their own: on ext4 the new one
    usually gets the inode number just freed, so only its generation tells them apart."""
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    _needs_generations(root)
    async with Workspace.sandbox(root, journal=store) as ws:
        journal = await _agent_mkdir(ws, "d")
        made = _generation(root / "d")
        (entry,) = await journal.entries()
        assert entry.after_generation == made
        (root / "d").rmdir()
        (root / "d").mkdir(mode=0o755)
        os.chmod(root / "d", 0o755)  # the umask may differ from the server's mkdir
        assert _generation(root / "d") != made
        results = await journal.undo(session="agent")
        assert [r.result for r in results] == ["refused"]
        assert "changed since" in str(results[0].reason)
    assert (root / "d").is_dir()


async def test_a_chmod_of_the_directory_refuses_its_undo(tmp_path: Path) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    _needs_generations(root)
    async with Workspace.sandbox(root, journal=store) as ws:
        journal = await _agent_mkdir(ws, "d")
        os.chmod(root / "d", 0o700)
        results = await journal.undo(session="agent")
        assert [r.result for r in results] == ["refused"]
        assert "changed since" in str(results[0].reason)
    assert (root / "d").is_dir()


async def test_a_file_left_in_the_directory_refuses_its_undo_and_stays(tmp_path: Path) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    async with Workspace.sandbox(root, journal=store) as ws:
        journal = await _agent_mkdir(ws, "d")
        (root / "d" / "user.txt").write_text("the user's file\n")
        for dry_run in (True, False):
            results = await journal.undo(session="agent", dry_run=dry_run)
            assert [r.result for r in results] == ["refused"], results
            assert "changed since" in str(results[0].reason)
    assert (root / "d" / "user.txt").read_text() == "the user's file\n"


async def test_a_record_without_the_generation_undoes_only_at_its_exact_version(
    tmp_path: Path,
) -> None:
    """An older store's mkdir record (no ``after_generation``) proves nothing about a
    directory whose timestamps moved: refused as before, and undone while untouched."""
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    async with Workspace.sandbox(root, journal=store) as ws:
        await _agent_mkdir(ws, "moved")
        await _agent_mkdir(ws, "untouched")
    for record in store.glob("*/*.json"):
        data = json.loads(record.read_text(encoding="utf-8"))
        data.pop("after_generation", None)
        record.write_text(json.dumps(data), encoding="utf-8")
    (root / "moved" / "x").write_text("x\n")
    (root / "moved" / "x").unlink()
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        results = {Path(r.path).name: r.result for r in await ws.journal.undo(session="agent")}
    assert results == {"moved": "refused", "untouched": "undone"}
    assert (root / "moved").is_dir()
    assert not (root / "untouched").exists()


async def test_without_generations_a_directory_whose_timestamps_moved_is_kept(
    tmp_path: Path,
) -> None:
    """Where the system has no generations (`DSH_FS_PLATFORM=portable`, macOS, tmpfs), the
    record carries none, and the undo keeps the stricter rule."""
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    with _platform.force(_platform.PORTABLE):
        async with Workspace.sandbox(root, journal=store) as ws:
            journal = await _agent_mkdir(ws, "d")
            (entry,) = await journal.entries()
            assert entry.after_generation is None
            (root / "d" / "x").write_text("x\n")
            (root / "d" / "x").unlink()
            results = await journal.undo(session="agent")
            assert [r.result for r in results] == ["refused"]
    assert (root / "d").is_dir()


async def test_an_impossible_generation_marks_the_record_damaged(tmp_path: Path) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    async with Workspace.sandbox(root, journal=store) as ws:
        await _agent_mkdir(ws, "d")
    (record,) = store.glob("*/*.json")
    data = json.loads(record.read_text(encoding="utf-8"))
    data["after_generation"] = 2**40
    record.write_text(json.dumps(data), encoding="utf-8")
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        entries, problems = await ws.journal.read()
        assert entries == []
        assert [p.reason for p in problems] == [f"after_generation {2**40} is out of range"]
        assert await ws.journal.undo(session="agent") == []
    assert (root / "d").is_dir()


async def test_a_directory_made_used_emptied_and_removed_undoes_whole_in_one_run(
    tmp_path: Path,
) -> None:
    """mkdir d, a file written in it and deleted, d deleted: the delete's undo makes d
    again (a new inode), the file's undos pass through it, and the mkdir's undo finds that
    d is the one its removal's undo made (it was refused, "changed since", until a second
    run). The dry run says the same."""
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    _needs_generations(root)
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        for tool, args in (
            ("mkdir", {"path": "d"}),
            ("write", {"file_path": "d/x.txt", "content": "x\n"}),
            ("delete", {"file_path": "d/x.txt"}),
            ("delete", {"file_path": "d"}),
        ):
            done = await s.call(tool, args)
            assert not done.is_error, done.text
        removal, _, _, mkdir = await ws.journal.entries()
        assert removal.before_generation is not None
        assert removal.before_generation == mkdir.after_generation
        dry = [(r.result, r.reason) for r in await ws.journal.undo(session="agent", dry_run=True)]
        real = [(r.result, r.reason) for r in await ws.journal.undo(session="agent")]
        assert dry == real == [("undone", None)] * 4
        assert await ws.journal.undo(session="agent") == []
    assert list(root.iterdir()) == []
