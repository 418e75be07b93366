"""`LocalFileSystem.batch`: the writes of a batch leave their directory's fsync to its end,
one per directory, and are published (visible, guarded, unlocked) as each call returns."""

from __future__ import annotations

import fcntl
import os
import stat
from pathlib import Path

import anyio
import pytest

from dsh_fs.errors import FsError
from dsh_fs.fs import CreateIfAbsent, ReplaceIfVersion
from dsh_fs.providers import LocalFileSystem

pytestmark = pytest.mark.anyio


def spy_on_directory_fsync(monkeypatch: pytest.MonkeyPatch, seen: list[tuple[int, int]]) -> None:
    """Record (device, inode) of every directory fsynced (the real fsync still runs)."""
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            seen.append((info.st_dev, info.st_ino))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)


def identity(path: Path) -> tuple[int, int]:
    info = path.stat()
    return info.st_dev, info.st_ino


async def test_a_batch_fsyncs_each_directory_it_wrote_in_once_at_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "1.txt").write_text("one\n")
    fs = LocalFileSystem(tmp_path)
    seen: list[tuple[int, int]] = []
    spy_on_directory_fsync(monkeypatch, seen)
    first = await fs.resolve("a/1.txt")
    version = (await fs.stat(first)).version  # type: ignore[union-attr]
    async with fs.batch():
        await fs.write_text(first, "uno\n", ReplaceIfVersion(version))
        for path in ("a/2.txt", "a/3.txt", "b/1.txt"):
            await fs.write_text(await fs.resolve(path), "new\n", CreateIfAbsent())
        assert seen == []  # none yet: each write left its directory's fsync to the end
    assert sorted(seen) == sorted([identity(tmp_path / "a"), identity(tmp_path / "b")])
    # Outside a batch a write makes its directory durable itself, as always.
    await fs.write_text(await fs.resolve("a/4.txt"), "four\n", CreateIfAbsent())
    assert seen[2:] == [identity(tmp_path / "a")]


async def test_a_write_in_a_batch_is_published_guarded_and_unlocked_when_it_returns(
    tmp_path: Path,
) -> None:
    fs = LocalFileSystem(tmp_path)
    target = await fs.resolve("f.txt")
    async with fs.batch():
        created = await fs.write_text(target, "one\n", CreateIfAbsent())
        assert (tmp_path / "f.txt").read_text() == "one\n"
        # The directory's lock went with the write (the fsync to come holds a descriptor
        # of the directory of its own, not the locked one): another writer is not blocked.
        fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
        with anyio.fail_after(60):  # a guard against a hang, not a measurement
            again = await fs.write_text(target, "two\n", ReplaceIfVersion(created.version))
        stale = fs.write_text(target, "three\n", ReplaceIfVersion(created.version))
        with pytest.raises(FsError, match="changed since it was read"):
            await stale
    assert again.version == (await fs.stat(target)).version  # type: ignore[union-attr]
    assert (tmp_path / "f.txt").read_text() == "two\n"


async def test_batches_nest_and_the_outermost_settles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fs = LocalFileSystem(tmp_path)
    seen: list[tuple[int, int]] = []
    spy_on_directory_fsync(monkeypatch, seen)
    async with fs.batch():
        async with fs.batch():
            await fs.write_text(await fs.resolve("x.txt"), "x\n", CreateIfAbsent())
        assert seen == []
        await fs.write_text(await fs.resolve("y.txt"), "y\n", CreateIfAbsent())
    assert seen == [identity(tmp_path)]


async def test_a_cancelled_batch_still_makes_its_writes_durable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fs = LocalFileSystem(tmp_path)
    seen: list[tuple[int, int]] = []
    spy_on_directory_fsync(monkeypatch, seen)
    with anyio.CancelScope() as scope:
        async with fs.batch():
            await fs.write_text(await fs.resolve("x.txt"), "x\n", CreateIfAbsent())
            scope.cancel()
            await anyio.sleep_forever()
    assert seen == [identity(tmp_path)]
