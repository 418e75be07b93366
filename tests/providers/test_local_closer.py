"""A write or an edit keeps the replaced file open across its rename and closes it in the
closer thread (`_closer`): the kernel frees the old file there, after the caller has its
answer, not inside the rename. Nothing leaks: every descriptor handed over is closed, and
a refused mutation closes the prior's at once."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import FsEditRequest, ReplaceIfVersion
from dsh_fs.providers import LocalFileSystem
from dsh_fs.providers.local import _closer, _mutations
from dsh_fs.providers.local._open import Opened

pytestmark = pytest.mark.anyio


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def settled(baseline: int, timeout: float = 10.0) -> bool:
    """Whether the process's descriptors come back to `baseline` within `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if open_descriptors() <= baseline:
            return True
        time.sleep(0.01)
    return False


@pytest.fixture
def handed(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int, int]]:
    """Every descriptor handed to the closer, as (inode, link count) when handed over."""
    seen: list[tuple[int, int, int]] = []
    close_later = _closer.close_later

    def spied(fd: int) -> None:
        info = os.fstat(fd)
        seen.append((fd, info.st_ino, info.st_nlink))
        close_later(fd)

    monkeypatch.setattr(_mutations, "close_later", spied)
    return seen


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")
async def test_the_replaced_file_is_handed_to_the_closer_unlinked(
    tmp_path: Path, handed: list[tuple[int, int, int]]
) -> None:
    fs = LocalFileSystem(tmp_path)
    target = await fs.resolve("a.txt")
    (tmp_path / "a.txt").write_text("old\n" * 100_000)
    old = (tmp_path / "a.txt").stat().st_ino
    await fs.write_text(target, "new\n")
    assert [(ino, links) for _, ino, links in handed] == [(old, 0)]
    edited_from = (tmp_path / "a.txt").stat().st_ino
    await fs.edit_text(target, FsEditRequest(old_string="new", new_string="newer"))
    assert [(ino, links) for _, ino, links in handed[1:]] == [(edited_from, 0)]
    assert (tmp_path / "a.txt").read_text() == "newer\n"


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")
async def test_every_handed_descriptor_is_closed(tmp_path: Path) -> None:
    fs = LocalFileSystem(tmp_path)
    target = await fs.resolve("a.txt")
    await fs.write_text(target, "0\n")
    assert settled(open_descriptors())  # the closer thread, started, has nothing left
    baseline = open_descriptors()
    for n in range(1, 200):
        await fs.write_text(target, f"{n}\n" * 1000)
        await fs.edit_text(
            target, FsEditRequest(old_string=f"{n}\n", new_string="x\n", replace_all=True)
        )
    assert settled(baseline)


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")
async def test_a_refused_mutation_closes_the_prior_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    handed: list[int] = []

    def closed_now(fd: int) -> None:  # the successful writes' priors: no closer to wait for
        handed.append(fd)
        os.close(fd)

    monkeypatch.setattr(_mutations, "close_later", closed_now)
    fs = LocalFileSystem(tmp_path)
    target = await fs.resolve("a.txt")
    first = await fs.write_text(target, "one\n")
    await fs.write_text(target, "two\n")
    assert len(handed) == 1
    baseline = open_descriptors()
    with pytest.raises(FsError) as info:
        await fs.write_text(target, "three\n", ReplaceIfVersion(first.version))
    assert info.value.code is FsErrorCode.STALE_VERSION
    with pytest.raises(FsError) as info:
        await fs.edit_text(target, FsEditRequest(old_string="absent", new_string="x"))
    assert info.value.code is FsErrorCode.EDIT_NOT_FOUND
    assert len(handed) == 1
    assert open_descriptors() == baseline  # closed before the call returned
    assert (tmp_path / "a.txt").read_text() == "two\n"


def test_a_file_on_an_anonymous_device_is_closed_before_its_replacement(tmp_path: Path) -> None:
    # NFS and SMB (anonymous device numbers, as tmpfs and FUSE have) must not see the file
    # held open as it is replaced: NFS renames it out of the way, SMB refuses.
    path = tmp_path / "a.txt"
    path.write_text("x\n")
    for major, held in ((0, False), (os.major(path.stat().st_dev) or 8, True)):
        fd = os.open(path, os.O_RDONLY)
        real = os.fstat(fd)
        fields = list(real)
        fields[2] = os.makedev(major, 42)  # st_dev
        opened = Opened(fd, os.stat_result(fields), str(path))
        assert (LocalFileSystem(tmp_path)._mutations._held(opened) == fd) is held
        if held:
            os.close(fd)
        else:
            with pytest.raises(OSError, match="Bad file descriptor"):
                os.fstat(fd)  # closed already


@pytest.mark.skipif(
    not os.path.isdir("/dev/shm") or os.major(os.stat("/dev/shm").st_dev) != 0,
    reason="needs a tmpfs at /dev/shm",
)
async def test_a_write_on_tmpfs_hands_nothing_to_the_closer(
    handed: list[tuple[int, int, int]],
) -> None:
    import tempfile

    with tempfile.TemporaryDirectory(dir="/dev/shm") as where:
        fs = LocalFileSystem(where)
        target = await fs.resolve("a.txt")
        await fs.write_text(target, "one\n")
        await fs.write_text(target, "two\n")
        await fs.edit_text(target, FsEditRequest(old_string="two", new_string="three"))
        assert (Path(where) / "a.txt").read_bytes() == b"three\n"
    assert handed == []


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")
async def test_a_closer_behind_makes_the_caller_close(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Past MOST_PENDING waiting, a replaced file is closed by its mutation: descriptors
    # never pile up toward the process's limit when the closer falls behind.
    monkeypatch.setattr(_closer, "MOST_PENDING", 0)
    fs = LocalFileSystem(tmp_path)
    target = await fs.resolve("a.txt")
    await fs.write_text(target, "one\n")
    baseline = open_descriptors()
    await fs.write_text(target, "two\n")
    assert open_descriptors() == baseline  # closed before the call returned


async def test_a_file_over_hold_bytes_is_closed_before_its_replacement(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, handed: list[tuple[int, int, int]]
) -> None:
    # Freeing a large file is a long burst of journal work the next change would meet:
    # it stays on the mutation's own path.
    monkeypatch.setattr(_mutations, "HOLD_BYTES", 1000)
    fs = LocalFileSystem(tmp_path)
    target = await fs.resolve("a.txt")
    await fs.write_text(target, "x" * 1000)
    await fs.write_text(target, "y" * 1001)
    assert len(handed) == 1  # the 1000-byte prior
    await fs.write_text(target, "z\n")
    assert len(handed) == 1  # not the 1001-byte one
