"""A read refused because the file is not text (binary, or invalid UTF-8 with no encoding
that reads it) still tells the caller what is there, so it observes the file at the version
the refusal judged: a delete, move or write of it then needs no read that can never succeed
(`FS_NOT_OBSERVED` said "read the file, then retry", and the read said "binary file" each
time). Never a newer version: a file changed after the refusal is stale."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from dsh_fs import Session, ToolResult, Workspace
from dsh_fs.tools._read import CONFIRM_BYTES

from ..images import png

pytestmark = pytest.mark.anyio

BINARY = b"\x89PNG but not one\0\x01\x02"
LATIN1 = "caf\u00e9 cr\u00e8me\n".encode("latin-1")


def ok(result: ToolResult) -> ToolResult:
    assert not result.is_error, result.text
    return result


async def refused_read(session: Session, path: Path) -> None:
    result = await session.call("read", {"file_path": str(path)})
    assert result.code == "FS_NOT_TEXT", result.text


@pytest.mark.parametrize("content", [BINARY, LATIN1, BINARY * 10_000])
async def test_a_file_refused_as_not_text_can_then_be_deleted(
    tmp_path: Path, content: bytes
) -> None:
    (tmp_path / "a.dat").write_bytes(content)
    async with Workspace.sandbox(tmp_path) as ws:
        s = ws.session()
        refused = await s.call("delete", {"file_path": "a.dat"})
        assert refused.code == "FS_NOT_OBSERVED"
        await refused_read(s, tmp_path / "a.dat")
        ok(await s.call("delete", {"file_path": "a.dat"}))
    assert not (tmp_path / "a.dat").exists()


async def test_a_file_refused_as_binary_can_then_be_moved_and_replaced(tmp_path: Path) -> None:
    (tmp_path / "a.bin").write_bytes(BINARY)
    (tmp_path / "b.bin").write_bytes(BINARY + b"2")
    async with Workspace.sandbox(tmp_path) as ws:
        s = ws.session()
        await refused_read(s, tmp_path / "a.bin")
        ok(await s.call("move", {"source_path": "a.bin", "destination_path": "c.bin"}))
        await refused_read(s, tmp_path / "b.bin")
        ok(await s.call("write", {"file_path": "b.bin", "content": "text now\n"}))
    assert (tmp_path / "c.bin").read_bytes() == BINARY
    assert (tmp_path / "b.bin").read_text() == "text now\n"


async def test_a_file_changed_after_the_refusal_is_stale(tmp_path: Path) -> None:
    (tmp_path / "a.bin").write_bytes(BINARY)
    async with Workspace.sandbox(tmp_path) as ws:
        s = ws.session()
        await refused_read(s, tmp_path / "a.bin")
        (tmp_path / "a.bin").write_bytes(BINARY + b"changed by another program")
        stale = await s.call("delete", {"file_path": "a.bin"})
        assert stale.code == "FS_STALE_VERSION", stale.text
    assert (tmp_path / "a.bin").exists()


async def test_a_large_binary_file_is_observed_through_a_stream_of_its_version(
    tmp_path: Path,
) -> None:
    # Past the bound the read at a version (the file whole) is not made: a stream the
    # provider vouches is of the version judges it. The local provider vouches for a file
    # unchanged for 3 s (a same-size rewrite could hide in a fresher timestamp's tick).
    with (tmp_path / "big.bin").open("wb") as f:
        f.truncate(CONFIRM_BYTES + 1)  # sparse: all NULs
    (tmp_path / "fresh.bin").write_bytes(b"\0" * (CONFIRM_BYTES + 1))
    await anyio.sleep(3.1)
    (tmp_path / "fresh.bin").write_bytes(b"\1" + b"\0" * CONFIRM_BYTES)  # changed just now
    async with Workspace.sandbox(tmp_path) as ws:
        s = ws.session()
        await refused_read(s, tmp_path / "big.bin")
        ok(await s.call("delete", {"file_path": "big.bin"}))
        await refused_read(s, tmp_path / "fresh.bin")
        refused = await s.call("delete", {"file_path": "fresh.bin"})
        assert refused.code == "FS_NOT_OBSERVED"  # not vouched for: not observed
    assert not (tmp_path / "big.bin").exists()
    assert (tmp_path / "fresh.bin").stat().st_size == CONFIRM_BYTES + 1


async def test_an_image_over_the_cap_can_then_be_deleted(tmp_path: Path) -> None:
    # "image of N bytes is over the limit" told the model what is there, and every read
    # fails the same way: the refusal observes it, as a binary file's does.
    (tmp_path / "big.png").write_bytes(png(padding=4096))
    async with Workspace.sandbox(tmp_path, max_image_bytes=1024) as ws:
        s = ws.session()
        refused = await s.call("read", {"file_path": "big.png"})
        assert refused.code == "FS_TOO_LARGE", refused.text
        ok(await s.call("delete", {"file_path": "big.png"}))
    assert not (tmp_path / "big.png").exists()
