"""`read_head`: the first bytes of a file, however large it is (an image's header)."""

from __future__ import annotations

import pytest

from dsh_fs.errors import FsErrorCode

from .backends import ProviderUnderTest, fails

pytestmark = pytest.mark.anyio


async def test_read_head_gives_the_first_bytes_of_a_larger_file(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("big.bin", b"\x89PNG" + b"\x00" * 100_000)
    head = await put.fs.read_head(await put.fs.resolve("big.bin"), 8)
    assert head == b"\x89PNG\x00\x00\x00\x00"


async def test_read_head_of_a_shorter_file_is_the_whole_file(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("small.bin", b"abc")
    target = await put.fs.resolve("small.bin")
    assert await put.fs.read_head(target, 64) == b"abc"
    assert await put.fs.read_head(target, 0) == b""


async def test_read_head_of_a_missing_file_is_not_found(put: ProviderUnderTest) -> None:
    with fails(FsErrorCode.NOT_FOUND):
        await put.fs.read_head(await put.fs.resolve("missing.bin"), 8)
