"""The local provider's `read_decoded_at` in a coarse timestamp tick, where the version alone
cannot tell a same-size rewrite: the bytes read are compared with what was known at the
version, and the read does not stand as a new observation of it (issue 42: a change set's
staging read vouched for content its session never saw).

Coarse timestamps are faked with `timestamp_granularity_ns`, as in `test_versions.py`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import ReplaceIfVersion
from dsh_fs.providers import LocalFileSystem

pytestmark = pytest.mark.anyio

COARSE = 10**15  # an 11-day tick: every change below lands in the same tick


def rewrite_in_place(path: Path) -> None:
    """Another program rewriting the file without dsh-fs: same inode, same size."""
    data = path.read_bytes()
    with path.open("r+b") as f:
        f.write(data.upper())


@pytest.mark.parametrize("size", [100, 200_000], ids=["inline", "worker-thread"])
async def test_a_same_tick_rewrite_is_not_at_the_version_and_stays_stale(
    tmp_path: Path, size: int
) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"x" * (size - 1) + b"\n")
    fs = LocalFileSystem(tmp_path, timestamp_granularity_ns=COARSE)
    target = await fs.resolve("a.txt")
    seen = await fs.read_small(target, 10**9)  # the session's read: what it knows
    assert seen is not None
    version = seen.info.version
    decoded = await fs.read_decoded_at(target, version)
    assert decoded is not None
    assert decoded.text == path.read_text()
    rewrite_in_place(path)
    again = await fs.stat(target)
    assert again is not None
    assert again.version == version  # the version alone cannot tell
    assert await fs.read_decoded_at(target, version) is None
    # Twice: the first did not take the new bytes as what was known at the version.
    assert await fs.read_decoded_at(target, version) is None
    with pytest.raises(FsError) as stale:
        await fs.write_text(target, "mine\n", ReplaceIfVersion(version))
    assert stale.value.code is FsErrorCode.STALE_VERSION
    # A plain read is a new observation: from then on the version stands for the new bytes.
    await fs.read_decoded(target)
    decoded = await fs.read_decoded_at(target, version)
    assert decoded is not None
    assert decoded.text == path.read_text()


@pytest.mark.parametrize("size", [100, 200_000], ids=["inline", "worker-thread"])
async def test_a_touch_or_an_identical_rewrite_still_holds_what_was_read_at_the_version(
    tmp_path: Path, size: int
) -> None:
    # As `VersionBook.is_current` judges every guarded mutation: the version moved, the
    # size and the bytes known at it did not (a change set's staging must agree with `edit`).
    path = tmp_path / "a.txt"
    path.write_bytes(b"x" * (size - 1) + b"\n")
    fs = LocalFileSystem(tmp_path)
    target = await fs.resolve("a.txt")
    seen = await fs.read_small(target, 10**9)
    assert seen is not None
    version = seen.info.version
    info = path.stat()
    os.utime(path, ns=(info.st_atime_ns + 10**9, info.st_mtime_ns + 10**9))
    touched = await fs.stat(target)
    assert touched is not None
    assert touched.version != version
    decoded = await fs.read_decoded_at(target, version)
    assert decoded is not None
    assert decoded.text == path.read_text()
    data = path.read_bytes()
    path.unlink()
    path.write_bytes(data)  # a new inode with the same bytes
    assert await fs.read_decoded_at(target, version) is not None
    path.write_bytes(data.upper())  # the same size, other bytes
    assert await fs.read_decoded_at(target, version) is None
