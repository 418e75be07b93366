"""The undo guard sees every change (SPEC §9.1): a file is as a change left it only if its
content, size, mode and identity all match what the change published; a crashed entry
recovered later never takes the version of a later change."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from dsh_fs import Workspace
from dsh_fs.fs import FsCapture, FsChangeMeta, FsPreImage, FsTarget, FsVersion, ReplaceIfVersion
from dsh_fs.journal import Journal
from dsh_fs.journal._plugin import capture
from dsh_fs.providers import LocalJournalStore, SandboxFileSystem

from .test_journal_crash import _run_child

pytestmark = pytest.mark.anyio


def _rewrite_in_place(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


async def test_a_same_size_rewrite_in_place_with_its_mtime_put_back_is_a_change(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("before\n")
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        await s.call("read", {"file_path": "a.txt"})
        assert not (await s.call("write", {"file_path": "a.txt", "content": "agent!\n"})).is_error
        info = os.stat(root / "a.txt")
        _rewrite_in_place(root / "a.txt", b"AGENT?\n")  # another program: same inode, size
        os.utime(root / "a.txt", ns=(info.st_atime_ns, info.st_mtime_ns))
        (result,) = await ws.journal.undo(session="agent")
        assert result.result == "refused"
        assert result.reason is not None
        assert "changed since" in result.reason
    assert (root / "a.txt").read_text() == "AGENT?\n"


async def test_a_chmod_after_the_change_is_a_change_undo_does_not_undo_past(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("before\n")
    (root / "a.txt").chmod(0o644)
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        await s.call("read", {"file_path": "a.txt"})
        assert not (await s.call("write", {"file_path": "a.txt", "content": "secret\n"})).is_error
        (root / "a.txt").chmod(0o600)
        (result,) = await ws.journal.undo(session="agent")
        assert result.result == "refused"
    assert stat.S_IMODE(os.stat(root / "a.txt").st_mode) == 0o600
    assert (root / "a.txt").read_text() == "secret\n"


async def test_the_journals_own_pre_image_link_still_leaves_the_file_undoable(
    tmp_path: Path,
) -> None:
    # Only the ctime moved (a change kept the inode by a hard link and was abandoned): the
    # content and the mode prove the file still as the change left it.
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    (root / "a.txt").write_text("first\n")
    async with Workspace.sandbox(root, journal=store) as ws:
        s = ws.session(label="agent")
        await s.call("read", {"file_path": "a.txt"})
        assert not (await s.call("write", {"file_path": "a.txt", "content": "second\n"})).is_error
    _run_child(root, store, "before")
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        (entry,) = await ws.journal.entries()
        # No digest kept: the pre-image and the delta make the bytes the guard compares.
        assert (entry.digest, entry.delta) == (None, (0, 0, "second\n"))
        assert entry.after_mode is not None
        assert [r.result for r in await ws.journal.undo(session="agent")] == ["undone"]
    assert (root / "a.txt").read_text() == "first\n"


async def test_a_crashed_entry_never_takes_the_version_of_a_later_change_from_another_server(
    tmp_path: Path,
) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    (root / "a.txt").write_text("before\n")
    _run_child(root, store, "after")  # published "after\n", died before the commit
    # Another server writes the file on, journaled in the same store, before anyone reads
    # the store (which is when the crashed record is completed).
    fs = SandboxFileSystem([str(root)])
    kept = LocalJournalStore(str(store), fs.roots[0])
    target = await fs.resolve("a.txt")
    info = await fs.stat(target)
    assert info is not None
    meta = FsChangeMeta(tool="write", session="other-1")
    await fs.write_text(
        target, "later\n", ReplaceIfVersion(info.version), capture=capture(kept, meta)
    )
    kept.close()
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        crashed, later = sorted(await ws.journal.entries(), key=lambda e: e.id)
        assert crashed.after == later.before
        assert crashed.after != later.after
        (result,) = await ws.journal.undo(ids=[crashed.id])
        assert result.result == "refused"
        assert result.reason is not None
        assert later.id in result.reason
    assert (root / "a.txt").read_text() == "later\n"


class _Racing(SandboxFileSystem):
    """Another program rewrites the file between the undo's look and its restore."""

    async def restore(
        self,
        target: FsTarget,
        pre_image: FsPreImage | None,
        expected: FsVersion | None,
        *,
        mode: int | None = None,
        capture: FsCapture | None = None,
    ) -> FsVersion | None:
        _rewrite_in_place(Path(target.target_key), b"raced in\n")
        return await super().restore(target, pre_image, expected, mode=mode, capture=capture)


async def test_an_undo_that_loses_a_race_says_the_file_changed_not_that_it_is_gone(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("v0\n")
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        await s.call("read", {"file_path": "a.txt"})
        await s.call("write", {"file_path": "a.txt", "content": "v1\n"})
        racing = Journal(_Racing([str(root)]), ws.journal.store)
        (result,) = await racing.undo(session="agent")
        assert result.result == "refused"
        assert result.reason is not None
        assert result.reason.startswith("the file changed since"), result.reason
    assert (root / "a.txt").read_text() == "raced in\n"


async def test_a_refusal_while_the_file_exists_never_says_it_is_gone(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("v0\n")
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        await s.call("read", {"file_path": "a.txt"})
        await s.call("write", {"file_path": "a.txt", "content": "v1\n"})
        await s.call("read", {"file_path": "a.txt"})
        await s.call("write", {"file_path": "a.txt", "content": "v2\n"})
        older = (await ws.journal.entries())[1]
        (result,) = await ws.journal.undo(ids=[older.id])
        assert result.result == "refused"
        assert result.reason is not None
        assert "gone" not in result.reason
        assert "by agent-" in result.reason
