"""The local `stream_text_from`: versions vouched only once settled, taken from the opened
descriptor, withdrawn when the file changes while it is read; the sandbox fences it."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import FsTarget, FsTargetKey, FsVersion
from dsh_fs.providers import LocalFileSystem, SandboxFileSystem
from dsh_fs.providers.local._stream import STREAM_CHUNK_SIZE

pytestmark = pytest.mark.anyio

LATER = 3_600 * 10**9
"""An hour: a clock this far ahead sees every file as changed long ago (settled)."""


def ahead() -> int:
    return time.time_ns() + LATER


async def vouched(fs: LocalFileSystem | SandboxFileSystem, target: FsTarget) -> FsVersion | None:
    async with fs.stream_text_from(target) as stream:
        async for _ in stream:
            pass
        return stream.version


async def test_a_settled_file_is_vouched_at_the_version_stat_reports(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n", encoding="utf-8")
    fs = LocalFileSystem(tmp_path, clock=ahead)
    target = await fs.resolve("a.txt")
    info = await fs.stat(target)
    assert info is not None
    assert await vouched(fs, target) == info.version


async def test_a_file_changed_moments_ago_is_not_vouched(tmp_path: Path) -> None:
    """Its stat tuple could still be shared by a same-size rewrite in the same tick."""
    (tmp_path / "a.txt").write_text("alpha\n", encoding="utf-8")
    fs = LocalFileSystem(tmp_path)
    assert await vouched(fs, await fs.resolve("a.txt")) is None


async def test_a_coarse_filesystem_needs_two_ticks_before_vouching(tmp_path: Path) -> None:
    tick = 10 * 10**9
    (tmp_path / "a.txt").write_text("alpha\n", encoding="utf-8")
    one_tick = LocalFileSystem(
        tmp_path, timestamp_granularity_ns=tick, clock=lambda: time.time_ns() + tick
    )
    assert await vouched(one_tick, await one_tick.resolve("a.txt")) is None
    two_ticks = LocalFileSystem(
        tmp_path, timestamp_granularity_ns=tick, clock=lambda: time.time_ns() + 2 * tick + 1
    )
    assert await vouched(two_ticks, await two_ticks.resolve("a.txt")) is not None


async def test_the_version_is_the_opened_files_not_the_paths(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("alpha\n", encoding="utf-8")
    fs = LocalFileSystem(tmp_path, clock=ahead)
    target = await fs.resolve("a.txt")
    async with fs.stream_text_from(target) as stream:
        opened = stream.version
        path.unlink()
        path.write_text("other\n", encoding="utf-8")
        assert [c.text async for c in stream] == ["alpha\n"]
        # The unlink changed the opened inode's ctime: withdrawn, never the new file's.
        ended = stream.version
    info = await fs.stat(target)
    assert info is not None
    assert opened is not None
    assert info.version != opened
    assert ended in (opened, None)


async def test_a_file_written_while_it_streams_is_not_vouched(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    path.write_bytes(b"x" * (STREAM_CHUNK_SIZE + 10) + b"\n")
    fs = LocalFileSystem(tmp_path, clock=ahead)
    async with fs.stream_text_from(await fs.resolve("big.txt")) as stream:
        at_open = stream.version
        first = await anext(stream)
        with path.open("ab") as tail:
            tail.write(b"appended\n")
        rest = [c.text async for c in stream]
        at_end = stream.version
    assert at_open is not None
    assert first.offset == 0
    assert at_end is None
    assert "".join(rest).endswith("appended\n")


async def test_a_stream_from_a_later_chunk_starts_there(tmp_path: Path) -> None:
    data = ("é" * STREAM_CHUNK_SIZE + "\n").encode()
    (tmp_path / "big.txt").write_bytes(data)
    fs = LocalFileSystem(tmp_path, clock=ahead)
    target = await fs.resolve("big.txt")
    async with fs.stream_text_from(target) as stream:
        offsets = [c.offset async for c in stream]
    assert offsets[0] == 0
    assert len(offsets) > 1
    async with fs.stream_text_from(target, offsets[1]) as stream:
        text = "".join([c.text async for c in stream])
        assert stream.version is not None
    assert text == data[offsets[1] :].decode()


async def test_the_sandbox_fences_ranged_reads(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n", encoding="utf-8")
    (root / "inside.txt").write_text("inside\n", encoding="utf-8")
    fs = SandboxFileSystem([root])
    inside = await fs.resolve("inside.txt")
    async with fs.stream_text_from(inside, 2) as stream:
        assert [c.text async for c in stream] == ["side\n"]
    forged = FsTarget(
        target_key=FsTargetKey(os.fspath(outside / "secret.txt")), display_path="inside.txt"
    )
    with pytest.raises(FsError) as refused:
        await vouched(fs, forged)
    assert refused.value.code is FsErrorCode.SANDBOX_DENIED
