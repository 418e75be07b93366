"""Publication through an unnamed ``O_TMPFILE`` file (`TMPFILE_PUBLICATION`): no name before
publication, the same results as the staging directory, residue swept like it."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from dsh_fs import _platform
from dsh_fs.errors import FsError
from dsh_fs.fs import CreateIfAbsent, FsEditRequest, ReplaceIfVersion
from dsh_fs.providers import LocalFileSystem
from dsh_fs.providers.local import _publish
from dsh_fs.providers.local._staging import STAGE_PREFIX, stage_file_name

from .test_staging import dead_pid

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(
        sys.platform != "linux" or not hasattr(os, "O_TMPFILE"), reason="needs O_TMPFILE"
    ),
]


@pytest.fixture(autouse=True)
def unnamed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_publish, "TMPFILE_PUBLICATION", True)


def spy_on_content_fsync(monkeypatch: pytest.MonkeyPatch, seen: list[tuple[str, int]]) -> None:
    """Record (the kernel's path, mode) of every regular file fsynced."""
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        info = os.fstat(fd)
        if stat.S_ISREG(info.st_mode):
            seen.append((os.readlink(f"/proc/self/fd/{fd}"), stat.S_IMODE(info.st_mode)))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)


def names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


async def test_unnamed_content_has_no_name_until_published(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[str, int]] = []
    spy_on_content_fsync(monkeypatch, seen)
    fs = LocalFileSystem(tmp_path)
    created = await fs.write_text(await fs.resolve("a.txt"), "x\n", CreateIfAbsent())
    await fs.write_text(await fs.resolve("a.txt"), "y\n", ReplaceIfVersion(created.version))
    assert len(seen) == 2
    for path, _mode in seen:
        # An O_TMPFILE file's kernel path: "/dir/#<inode> (deleted)", in the target's folder.
        assert path.endswith("(deleted)"), path
        assert os.path.dirname(path) == str(tmp_path.resolve())  # noqa: ASYNC240
    assert seen[0][1] == 0o666 & ~_platform.process_umask()
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "y\n"
    assert names(tmp_path) == ["a.txt"]


async def test_unnamed_replace_keeps_the_mode_and_an_edit_publishes(tmp_path: Path) -> None:
    path = tmp_path / "run.sh"
    path.write_text("echo one\n", encoding="utf-8")
    path.chmod(0o751)
    fs = LocalFileSystem(tmp_path)
    target = await fs.resolve("run.sh")
    await fs.edit_text(target, FsEditRequest(old_string="one", new_string="two"))
    assert path.read_text(encoding="utf-8") == "echo two\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert names(tmp_path) == ["run.sh"]


async def test_unnamed_create_never_replaces_a_file_that_appeared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fs = LocalFileSystem(tmp_path)
    target = await fs.resolve("new.txt")
    real_fsync = os.fsync

    def appear_then_fsync(fd: int) -> None:
        real_fsync(fd)
        if stat.S_ISREG(os.fstat(fd).st_mode) and not (tmp_path / "new.txt").exists():
            (tmp_path / "new.txt").write_text("theirs\n", encoding="utf-8")

    monkeypatch.setattr(os, "fsync", appear_then_fsync)
    with pytest.raises(FsError) as caught:
        await fs.write_text(target, "ours\n", CreateIfAbsent())
    assert caught.value.code == "FS_NOT_OBSERVED"
    assert (tmp_path / "new.txt").read_text(encoding="utf-8") == "theirs\n"
    assert names(tmp_path) == ["new.txt"]


async def test_a_failed_rename_leaves_no_staging_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.txt").write_text("before\n", encoding="utf-8")
    fs = LocalFileSystem(tmp_path)
    target = await fs.resolve("a.txt")

    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "refused")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(FsError):
        await fs.write_text(target, "after\n")
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "before\n"
    assert names(tmp_path) == ["a.txt"]


async def test_a_filesystem_without_o_tmpfile_falls_back_to_the_staging_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_open = os.open
    staged_in: list[str] = []

    def no_tmpfile(path: str, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        if flags & os.O_TMPFILE == os.O_TMPFILE:
            raise OSError(95, "Operation not supported")  # EOPNOTSUPP
        if flags & os.O_CREAT:
            staged_in.append(os.readlink(f"/proc/self/fd/{dir_fd}"))
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", no_tmpfile)
    fs = LocalFileSystem(tmp_path)
    await fs.write_text(await fs.resolve("a.txt"), "x\n", CreateIfAbsent())
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "x\n"
    assert [os.path.basename(p).startswith(STAGE_PREFIX) for p in staged_in] == [True]
    assert names(tmp_path) == ["a.txt"]


async def test_sweep_removes_a_dead_owners_staging_file_only(tmp_path: Path) -> None:
    host = stage_file_name()[len(STAGE_PREFIX) :].split("-")[0]
    dead = tmp_path / f"{STAGE_PREFIX}{host}-{dead_pid()}-abc123"
    live = tmp_path / f"{STAGE_PREFIX}{host}-{os.getppid()}-abc123"
    foreign = tmp_path / f"{STAGE_PREFIX}not-ours"
    for leftover in (dead, live, foreign):
        leftover.write_bytes(b"a whole staged file")
    removed = await LocalFileSystem(tmp_path).sweep_staging(tmp_path)
    assert removed == 1
    assert not dead.exists()
    assert live.exists()
    assert foreign.exists()
