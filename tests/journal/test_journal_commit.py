"""How the local store commits an entry (issue 36): the pending record becomes the entry in
place, one inode a change; whatever a kill or a power loss leaves on the way is completed
by the next reader (SPEC §9: a crash right after publishing leaves an undoable entry)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dsh_fs import Workspace
from dsh_fs.fs import FsChangeMeta
from dsh_fs.providers import LocalJournalStore, SandboxFileSystem

pytestmark = pytest.mark.anyio

_CHILD = textwrap.dedent(
    """
    import os, sys, anyio
    from dsh_fs.fs import FsChangeMeta
    from dsh_fs.providers import LocalJournalStore, SandboxFileSystem

    root, store_dir, when = sys.argv[1], sys.argv[2], sys.argv[3]
    if when == "commit":
        # Killed as the commit begins: its pending record stays, as `prepare` wrote it.
        LocalJournalStore._commit = lambda *args, **kwargs: os._exit(9)
    else:
        # Killed between the commit's write over the pending record and its new name.
        link = os.link

        def dying_link(source, name, *args, **kwargs):
            if str(name).endswith(".json"):
                os._exit(9)
            return link(source, name, *args, **kwargs)

        os.link = dying_link

    async def main():
        fs = SandboxFileSystem([root])
        store = LocalJournalStore(store_dir, fs.roots[0])
        target = await fs.resolve("a.txt")
        meta = FsChangeMeta(tool="write", session="child")
        await fs.write_text(target, "after\\n", capture=store.capture(meta))

    anyio.run(main)
    """
)


def _run_child(root: Path, store: Path, when: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(root), str(store), when], check=False, timeout=60
    )
    assert done.returncode == 9


def _sub_store(store: Path) -> Path:
    (sub,) = [p for p in store.iterdir() if p.is_dir()]
    return sub


def _records(sub: Path) -> list[str]:
    return sorted(p.name for p in sub.iterdir() if p.suffix in (".pending", ".json", ".tmp"))


@pytest.mark.parametrize(("size", "in_place"), [(10, True), (20_000, False)])
async def test_a_commit_makes_the_pending_record_its_entry_when_it_fits_a_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int, in_place: bool
) -> None:
    # A change whose entry fits a page creates one store inode: its pending record, its
    # entry's bytes written over. A larger entry (a forward delta of 20,000 characters) is
    # staged in a file of its own, as before; both leave the entry alone, unmarked.
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    (root / "a.txt").write_text("first\n")
    inodes: list[int] = []
    pending = LocalJournalStore._pending

    def spied(this: LocalJournalStore, entry_id: str, data: bytes) -> int:
        fd = pending(this, entry_id, data)
        inodes.append(os.fstat(fd).st_ino)
        return fd

    monkeypatch.setattr(LocalJournalStore, "_pending", spied)
    content = "x" * size + "\n"
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        await s.call("read", {"file_path": "a.txt"})
        assert not (await s.call("write", {"file_path": "a.txt", "content": content})).is_error
        (entry,) = await ws.journal.entries()
    sub = _sub_store(store)
    assert _records(sub) == [f"{entry.id}.json"]
    record_file = sub / f"{entry.id}.json"
    assert (record_file.stat().st_ino == inodes[0]) is in_place
    record = json.loads(record_file.read_bytes())
    assert "pending" not in record
    assert record["after"] == entry.after is not None
    assert (entry.added, entry.removed) == (1, 1)
    assert entry.digest == hashlib.sha256(content.encode()).hexdigest() or entry.delta


async def test_an_entry_whose_written_bytes_a_power_loss_lost_is_completed_by_its_reader(
    tmp_path: Path,
) -> None:
    # A commit in place is not fsynced (its pending record is durable): after a power loss
    # the entry's name may hold the pending record's bytes, marked. Its reader completes
    # it from the disk (the change was published before its commit) and keeps it so.
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    (root / "a.txt").write_text("before\n")
    _run_child(root, store, "commit")
    sub = _sub_store(store)
    (left,) = _records(sub)
    assert json.loads((sub / left).read_bytes())["pending"] is True
    stem = left.removesuffix(".pending")
    os.rename(sub / left, sub / f"{stem}.json")
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        (entry,) = await ws.journal.entries()
        assert entry.after is not None
        assert entry.digest == hashlib.sha256(b"after\n").hexdigest()
        assert "pending" not in json.loads((sub / f"{stem}.json").read_bytes())
        assert [r.result for r in await ws.journal.undo(ids=[entry.id])] == ["undone"]
    assert (root / "a.txt").read_text() == "before\n"


async def test_a_process_killed_between_the_commits_write_and_its_name_leaves_an_undoable_entry(
    tmp_path: Path,
) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    (root / "a.txt").write_text("before\n")
    _run_child(root, store, "name")
    sub = _sub_store(store)
    (left,) = _records(sub)
    assert left.endswith(".pending")
    assert "pending" not in json.loads((sub / left).read_bytes())  # the entry's bytes
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        (entry,) = await ws.journal.entries()
        assert entry.after is not None
        assert _records(sub) == [f"{entry.id}.json"]
        assert [r.result for r in await ws.journal.undo(ids=[entry.id])] == ["undone"]
    assert (root / "a.txt").read_text() == "before\n"


async def test_a_short_write_of_an_entry_puts_its_pending_record_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Were a write of one page ever short, the pending record would be torn, and a torn
    # record is dropped with its pre-image: the commit puts it back whole, and the next
    # reader completes the change's entry from it.
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    (root / "a.txt").write_text("before\n")
    pwrite = os.pwrite
    shortened: list[int] = []

    def short(fd: int, data: bytes, offset: int) -> int:
        if not shortened:
            shortened.append(fd)
            return pwrite(fd, data[:10], offset)
        return pwrite(fd, data, offset)

    fs = SandboxFileSystem([str(root)])
    journal = LocalJournalStore(str(store), fs.roots[0])
    try:
        target = await fs.resolve("a.txt")
        with monkeypatch.context() as patched:
            patched.setattr(os, "pwrite", short)
            meta = FsChangeMeta(tool="write", session="agent")
            await fs.write_text(target, "after\n", None, capture=journal.capture(meta))
        assert shortened
    finally:
        journal.close()
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        (entry,) = await ws.journal.entries()
        assert entry.after is not None
        assert [r.result for r in await ws.journal.undo(ids=[entry.id])] == ["undone"]
    assert (root / "a.txt").read_text() == "before\n"


async def test_a_dead_writers_record_is_completed_from_a_later_record_committed_meanwhile(
    tmp_path: Path,
) -> None:
    # The reader listed the later change's pending record; its writer committed it in place
    # before the reader read it (the pending name gone, the entry's name new). The later
    # record is read under its entry's name: the dead change takes the later change's
    # `before`, never the later change's own version.
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    (root / "a.txt").write_text("before\n")
    _run_child(root, store, "commit")
    sub = _sub_store(store)
    (dead,) = _records(sub)
    fs = SandboxFileSystem([str(root)])
    journal = LocalJournalStore(str(store), fs.roots[0])
    try:
        target = await fs.resolve("a.txt")
        meta = FsChangeMeta(tool="write", session="later")
        await fs.write_text(target, "later\n", None, capture=journal.capture(meta))
        (later,) = [n for n in _records(sub) if n.endswith(".json")]
        names = journal._names()
        names[later.replace(".json", ".pending")] = names.pop(later)
        settled = journal._settle(dead.removesuffix(".pending"), names)
    finally:
        journal.close()
    assert settled is not None
    later_record = json.loads((sub / later).read_bytes())
    assert settled["after"] == later_record["before"] != later_record["after"]
    assert settled["digest"] == hashlib.sha256(b"after\n").hexdigest()
