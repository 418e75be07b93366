"""A file this provider published, then moved with `move`, keeps its proof of content: the
kept copy follows the inode (`RecentlyPublished.moved`). It was left under the source's key,
where the next publication at the source dropped it as superseded, deferred digest and all,
while the moved file was still at its version; a same-size rewrite of the moved file in the
same timestamp tick then passed for the version the session observed through the move, and
the session's write replaced the other program's change (red team, stop 52).

Coarse timestamps are faked with `timestamp_granularity_ns`, as in `test_versions.py`.
"""

from __future__ import annotations

import os
import time
from functools import partial
from pathlib import Path

import pytest

from dsh_fs import Workspace
from dsh_fs.fs import EncodedText, FsVersion
from dsh_fs.providers import LocalFileSystem
from dsh_fs.providers.local._versions import RecentlyPublished, VersionBook, digest

COARSE = 10**15  # an 11-day tick: every change below lands in the same tick


@pytest.mark.anyio
@pytest.mark.parametrize("tool", ["write", "edit"])
async def test_a_same_tick_rewrite_of_a_moved_file_is_stale_after_a_new_file_at_its_source(
    tmp_path: Path, tool: str
) -> None:
    fs = LocalFileSystem(tmp_path, timestamp_granularity_ns=COARSE)
    async with Workspace(fs, cwd=str(tmp_path)) as ws:
        s = ws.session()
        assert not (
            await s.call("write", {"file_path": "a.txt", "content": "hello world\n"})
        ).is_error
        moved = await s.call("move", {"source_path": "a.txt", "destination_path": "b.txt"})
        assert not moved.is_error, moved.text
        assert not (await s.call("write", {"file_path": "a.txt", "content": "another\n"})).is_error
        with (tmp_path / "b.txt").open("r+b") as f:
            f.write(b"HELLO")  # another program, in place: same inode, size and tick
        if tool == "write":
            result = await s.call("write", {"file_path": "b.txt", "content": "agent's text\n"})
        else:
            edit = {"file_path": "b.txt", "old_string": "world", "new_string": "there"}
            result = await s.call("edit", edit)
        assert result.code == "FS_STALE_VERSION", result.text
    assert (tmp_path / "b.txt").read_bytes() == b"HELLO world\n"


@pytest.mark.anyio
async def test_a_moved_file_is_still_edited_on_the_copy_kept(tmp_path: Path) -> None:
    fs = LocalFileSystem(tmp_path, timestamp_granularity_ns=COARSE)
    async with Workspace(fs, cwd=str(tmp_path)) as ws:
        s = ws.session()
        await s.call("write", {"file_path": "a.txt", "content": "hello world\n"})
        await s.call("move", {"source_path": "a.txt", "destination_path": "b.txt"})
        await s.call("write", {"file_path": "a.txt", "content": "another\n"})
        edit = {"file_path": "b.txt", "old_string": "world", "new_string": "there"}
        assert not (await s.call("edit", edit)).is_error
    assert (tmp_path / "b.txt").read_bytes() == b"hello there\n"
    assert (tmp_path / "a.txt").read_bytes() == b"another\n"


def _stat(ino: int, size: int) -> os.stat_result:
    """A stat of a racy regular file (changed now): its digest is kept deferred."""
    now = time.time_ns()
    seconds = now // 10**9
    return os.stat_result(
        (0o100644, ino, 1, 1, 0, 0, size, seconds, seconds, seconds)
        + (float(seconds),) * 3
        + (now,) * 3
    )


def test_the_kept_copy_follows_a_rename_at_its_version() -> None:
    book = VersionBook()
    recent = RecentlyPublished(release=book.release)
    data = b"alpha\n"
    version = book.remember(_stat(7, len(data)), partial(digest, data))
    assert recent.keep("a", version, EncodedText((data,))) is not None
    recent.keep("b", FsVersion("old-b"), EncodedText((b"beta\n",)))
    recent.moved("a", "b", version)  # the rename kept the version: kept for b now
    assert recent.match("b", version, lambda: data) is not None
    assert recent.match("a", version, lambda: data) is None
    recent.keep("a", FsVersion("new-a"), EncodedText((b"another\n",)))  # a new file at a
    seen = book.lookup(version)  # the moved file's digest outlived it
    assert seen is not None
    assert seen.digest == digest(data)


def test_a_kept_copy_renamed_to_another_version_is_let_go() -> None:
    book = VersionBook()
    recent = RecentlyPublished(release=book.release)
    data = b"alpha\n"
    version = book.remember(_stat(8, len(data)), partial(digest, data))
    recent.keep("a", version, EncodedText((data,)))
    recent.moved("a", "b", FsVersion("moved-ctime"))  # the rename moved the ctime
    assert recent.match("b", version, lambda: data) is None
    assert book.lookup(version) is None  # no file can be at it now: dropped, not hashed
