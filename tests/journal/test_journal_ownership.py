"""Ownership (SPEC §9.1): an undo that recreates a file gives it back its recorded owner and
mode when the process may, never recreates set-user-ID or set-group-ID bits on a file it
could not give back, and never writes through a link now at the path. The suite runs as
root: "another user's file" is one chowned to another uid; "the process may not" is a
refused `fchown`."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from dsh_fs import Workspace

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(os.geteuid() != 0, reason="chowns a file to another user"),
]

_OTHER = 4242
"""Another user's uid (and gid): nobody on this machine."""


def _owned(path: Path, mode: int) -> None:
    path.write_text("theirs\n", encoding="utf-8")
    os.chown(path, _OTHER, _OTHER)
    os.chmod(path, mode)


def _owner_and_mode(path: Path) -> tuple[int, int, int]:
    info = path.stat()
    return info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)


async def _delete_and_undo(root: Path, store: Path) -> list[str | None]:
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        await s.call("read", {"file_path": "a.txt"})
        assert not (await s.call("delete", {"file_path": "a.txt"})).is_error
        assert not (root / "a.txt").exists()
        return [r.reason for r in await ws.journal.undo(session="agent")]


async def test_undo_of_a_delete_gives_another_users_file_back_its_owner_and_mode(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    _owned(root / "a.txt", 0o4750)
    assert await _delete_and_undo(root, tmp_path / "store") == [None]
    assert _owner_and_mode(root / "a.txt") == (_OTHER, _OTHER, 0o4750)
    assert (root / "a.txt").read_text(encoding="utf-8") == "theirs\n"


async def test_undo_of_a_delete_never_recreates_set_id_bits_on_a_file_it_could_not_give_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    _owned(root / "a.txt", 0o6755)

    def refused(fd: int, uid: int, gid: int) -> None:
        raise PermissionError(errno.EPERM, os.strerror(errno.EPERM))

    monkeypatch.setattr(os, "fchown", refused)  # the process may not give files away
    assert await _delete_and_undo(root, tmp_path / "store") == [None]
    assert _owner_and_mode(root / "a.txt") == (os.geteuid(), os.getegid(), 0o755)


async def test_undo_of_a_delete_never_writes_through_a_dangling_link_now_at_the_path(
    tmp_path: Path,
) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / "a.txt").write_text("#!/bin/sh\necho hi\n", encoding="utf-8")
    hook = root / ".git" / "hooks" / "pre-commit"
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        await s.call("read", {"file_path": "a.txt"})
        assert not (await s.call("delete", {"file_path": "a.txt"})).is_error
        (root / "a.txt").symlink_to(hook)  # dangling: the hook does not exist
        (result,) = await ws.journal.undo(session="agent")
    assert result.result == "refused"
    assert result.reason is not None
    assert result.reason.startswith("a file exists there now")
    assert not hook.exists()
    assert (root / "a.txt").is_symlink()


def _other_filesystem(root: Path, name: str) -> Path:
    """A fresh directory on /dev/shm (tmpfs), when that is another filesystem than `root`'s."""
    shm = Path("/dev/shm")
    if not shm.is_dir() or os.stat(shm).st_dev == os.stat(root).st_dev:
        pytest.skip("needs /dev/shm on another filesystem")
    return Path(os.path.realpath(shm)) / f"dsh-fs-test-{os.getpid()}-{name}"


async def test_a_move_across_filesystems_and_its_undo_keep_another_users_file_theirs(
    tmp_path: Path,
) -> None:
    root = (tmp_path / "root").resolve()
    root.mkdir()
    other = _other_filesystem(root, "owner")
    other.mkdir()
    try:
        _owned(root / "a.txt", 0o4750)
        async with Workspace.sandbox(root, other, journal=tmp_path / "store") as ws:
            assert ws.journal is not None
            s = ws.session(label="agent")
            await s.call("read", {"file_path": str(root / "a.txt")})
            moved = await s.call(
                "move",
                {"source_path": str(root / "a.txt"), "destination_path": str(other / "a.txt")},
            )
            assert not moved.is_error, moved.text
            assert _owner_and_mode(other / "a.txt") == (_OTHER, _OTHER, 0o4750)
            (result,) = await ws.journal.undo(session="agent")
            assert result.result == "undone", result.reason
        assert _owner_and_mode(root / "a.txt") == (_OTHER, _OTHER, 0o4750)
    finally:
        for child in other.iterdir():
            child.unlink()
        other.rmdir()
