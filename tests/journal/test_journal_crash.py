"""A process killed around a journaled publication: right after it, the change is undoable;
right before it, there is no entry and no stray (SPEC §9). The child dies with `os._exit`
inside the provider's critical section, as a SIGKILL would leave it."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dsh_fs import Workspace
from dsh_fs.fs import FsChangeMeta, JournalEntry
from dsh_fs.providers import LocalJournalStore, SandboxFileSystem

pytestmark = pytest.mark.anyio

_CHILD = textwrap.dedent(
    """
    import os, sys, anyio
    from dsh_fs.fs import FsChangeMeta
    from dsh_fs.fs import FsCapture
    from dsh_fs.providers import LocalJournalStore, SandboxFileSystem

    root, store_dir, when = sys.argv[1], sys.argv[2], sys.argv[3]

    class Dying(FsCapture):
        def __init__(self, store, meta):
            self.inner = store.capture(meta)

        def abandon(self, ticket):
            self.inner.abandon(ticket)

        def prepare(self, start):
            ticket = self.inner.prepare(start)
            if when == "before":
                os._exit(9)
            return ticket

        def commit(self, ticket, after, content, digest=None):
            os._exit(9)

    async def main():
        fs = SandboxFileSystem([root])
        store = LocalJournalStore(store_dir, fs.roots[0])
        capture = Dying(store, FsChangeMeta(tool="write", session="child"))
        target = await fs.resolve("a.txt")
        await fs.write_text(target, "after\\n", capture=capture)

    anyio.run(main)
    """
)


def _run_child(root: Path, store: Path, when: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(root), str(store), when], check=False, timeout=60
    )
    assert done.returncode == 9


async def test_a_process_killed_after_publishing_leaves_an_entry_that_undoes_to_the_prior_bytes(
    tmp_path: Path,
) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    (root / "a.txt").write_bytes(b"before\r\n\x00binary too")
    _run_child(root, store, "after")
    assert (root / "a.txt").read_text() == "after\n"
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        (entry,) = await ws.journal.entries()
        assert entry.undoable
        assert entry.after is not None
        assert [r.result for r in await ws.journal.undo(ids=[entry.id])] == ["undone"]
    assert (root / "a.txt").read_bytes() == b"before\r\n\x00binary too"


async def test_a_process_killed_before_publishing_leaves_no_entry_and_no_stray(
    tmp_path: Path,
) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    (root / "a.txt").write_text("before\n")
    _run_child(root, store, "before")
    assert (root / "a.txt").read_text() == "before\n"
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        assert await ws.journal.entries() == []
        (sub,) = [p for p in store.iterdir() if p.is_dir()]
        assert set(os.listdir(sub)) - {"lock"} == {"root"}
    # The staging directory the dead writer left is swept by the next write there.
    async with Workspace.sandbox(root) as ws:
        s = ws.session()
        await s.call("read", {"file_path": "a.txt"})
        await s.call("write", {"file_path": "a.txt", "content": "next\n"})
    assert sorted(os.listdir(root)) == ["a.txt"]


async def _undo_the_one_entry_after_its_ctime_moved(root: Path, store: Path) -> None:
    """The store's one entry undone from a fresh workspace, the file's version having moved
    since it (a dead writer's hard link came and went: the ctime, not the bytes)."""
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        (entry,) = await ws.journal.entries()
        info = await ws.journal.fs.stat(await ws.journal.fs.resolve("a.txt"))
        assert info is not None
        assert info.version != entry.after  # the ctime moved
        assert [r.result for r in await ws.journal.undo(ids=[entry.id])] == ["undone"]


async def _write_later(root: Path, store: Path) -> tuple[list[JournalEntry], str]:
    """A journaled write of a.txt by a writer that opens no workspace (so nobody settled a
    dead writer's record first): the store's entries then, and its sub-store's folder."""
    fs = SandboxFileSystem([str(root)])
    journal = LocalJournalStore(str(store), fs.roots[0])
    try:
        target = await fs.resolve("a.txt")
        meta = FsChangeMeta(tool="write", session="later")
        await fs.write_text(target, "later\n", None, capture=journal.capture(meta))
        entries, problems = journal.entries()
    finally:
        journal.close()
    assert problems == []
    return entries, journal.location


async def test_a_change_killed_before_publishing_leaves_the_change_before_it_undoable(
    tmp_path: Path,
) -> None:
    # The dead change kept the file's inode by a hard link and its reader removed the link:
    # the inode's ctime moved, its bytes did not. An undo from another process still undoes
    # the change before it (guarded on the file as it is now, and journaled).
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    (root / "a.txt").write_text("first\n")
    async with Workspace.sandbox(root, journal=store) as ws:
        s = ws.session(label="agent")
        await s.call("read", {"file_path": "a.txt"})
        assert not (await s.call("write", {"file_path": "a.txt", "content": "before\n"})).is_error
    _run_child(root, store, "before")
    await _undo_the_one_entry_after_its_ctime_moved(root, store)
    assert (root / "a.txt").read_text() == "first\n"


async def test_a_change_killed_before_publishing_is_no_entry_though_its_file_changed_later(
    tmp_path: Path,
) -> None:
    # Nobody settled the dead writer's record before another writer (one that opens no
    # workspace) changed the file: the file is no longer the record's `before`, yet the
    # later change found it there, so the dead change was never published.
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    (root / "a.txt").write_text("before\n")
    _run_child(root, store, "before")
    entries, location = await _write_later(root, store)
    assert [(e.session, e.before != e.after) for e in entries] == [("later", True)]
    names = set(os.listdir(location)) - {"lock"}
    assert names == {"root", f"{entries[0].id}.json", f"{entries[0].id}.pre"}


async def test_a_change_killed_after_publishing_stays_undoable_after_a_later_killed_change(
    tmp_path: Path,
) -> None:
    # The first dead writer's record is settled by the next reader (the file's version
    # found); the second dead writer kept the file's inode by a hard link and was killed
    # before publishing: the inode's ctime moved, its bytes did not. The settled entry
    # still proves the file is what it published (content and mode), so it undoes.
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    (root / "a.txt").write_text("first\n")
    _run_child(root, store, "after")
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        (entry,) = await ws.journal.entries()
        assert entry.digest is not None
        assert entry.after_mode is not None
    _run_child(root, store, "before")
    await _undo_the_one_entry_after_its_ctime_moved(root, store)
    assert (root / "a.txt").read_text() == "first\n"


async def test_a_change_killed_after_publishing_is_completed_from_the_later_change_that_found_it(
    tmp_path: Path,
) -> None:
    # Nobody settled the dead writer's record before another writer (one that opens no
    # workspace) changed the file: the dead change's content is the later change's
    # pre-image, and its digest and mode are taken from there.
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    (root / "a.txt").write_text("before\n")
    _run_child(root, store, "after")
    (dead, later), _ = await _write_later(root, store)
    assert (dead.session, later.session) == ("child", "later")
    assert dead.after == later.before
    assert dead.digest == hashlib.sha256(b"after\n").hexdigest()
    assert dead.after_mode == later.mode
    assert (dead.added, dead.removed) == (1, 1)
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        results = await ws.journal.undo(since="1d")
        assert [r.result for r in results] == ["undone", "undone"]
    assert (root / "a.txt").read_text() == "before\n"


async def test_every_change_undoes_newest_first_after_a_kill_after_and_one_before_publishing(
    tmp_path: Path,
) -> None:
    # The torture's case: a change killed after publishing (completed by the next reader),
    # a change killed before publishing (the inode's ctime moved), then a change that found
    # the file with that ctime. Undoing both entries newest first brings the first bytes back:
    # the crashed entry proves the file the later change replaced is what it published.
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    (root / "a.txt").write_text("first\n")
    _run_child(root, store, "after")
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        (crashed,) = await ws.journal.entries()
    _run_child(root, store, "before")
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        await s.call("read", {"file_path": "a.txt"})
        assert not (await s.call("write", {"file_path": "a.txt", "content": "next\n"})).is_error
        later = max(await ws.journal.entries(), key=lambda e: e.id)
        assert later.id != crashed.id
        assert later.before != crashed.after  # the ctime moved between them
        results = await ws.journal.undo(since="1d")
        assert {r.id: r.result for r in results} == {later.id: "undone", crashed.id: "undone"}
    assert (root / "a.txt").read_text() == "first\n"
