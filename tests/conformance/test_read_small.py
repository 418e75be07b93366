"""`read_small`: a small file's `stat` and text in one call, answered as `stat` then
`read_decoded` answer them."""

from __future__ import annotations

import pytest

from dsh_fs.errors import FsErrorCode
from dsh_fs.fs import FsFileType

from .backends import ProviderUnderTest, fails, require

pytestmark = pytest.mark.anyio


async def test_a_small_file_comes_with_the_stat_and_the_text_read_decoded_gives(
    put: ProviderUnderTest,
) -> None:
    put.outside.write_bytes("a.txt", b"one\ntwo\n")
    target = await put.fs.resolve("a.txt")
    small = await put.fs.read_small(target, 64)
    assert small is not None
    assert small.info == await put.fs.stat(target)
    assert small.decoded == await put.fs.read_decoded(target)
    assert small.decoded.text == "one\ntwo\n"


async def test_a_file_at_the_size_asked_for_is_read_and_a_larger_one_only_stat_ed(
    put: ProviderUnderTest,
) -> None:
    put.outside.write_bytes("eight.txt", b"12345678")
    target = await put.fs.resolve("eight.txt")
    at = await put.fs.read_small(target, 8)
    over = await put.fs.read_small(target, 7)
    assert at is not None
    assert at.decoded is not None
    assert at.decoded.text == "12345678"
    assert over is not None
    assert over.decoded is None
    assert (over.info.type, over.info.size) == (FsFileType.FILE, 8)


async def test_a_missing_file_is_none(put: ProviderUnderTest) -> None:
    assert await put.fs.read_small(await put.fs.resolve("missing.txt"), 64) is None


async def test_a_directory_is_stat_ed_and_not_read(put: ProviderUnderTest) -> None:
    require(put, "directories")
    put.outside.mkdir("d")
    small = await put.fs.read_small(await put.fs.resolve("d"), 1 << 20)
    assert small is not None
    assert small.info.type is FsFileType.DIRECTORY
    assert small.decoded is None


async def test_a_fifo_is_stat_ed_and_never_opened(put: ProviderUnderTest) -> None:
    require(put, "special_files")
    put.outside.mkfifo("pipe")
    # Opened for reading without a writer, a FIFO would block the call: it must not be.
    small = await put.fs.read_small(await put.fs.resolve("pipe"), 1 << 20)
    assert small is not None
    assert small.info.type is FsFileType.OTHER
    assert small.decoded is None


async def test_binary_content_is_not_text_as_read_decoded_says(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("b.bin", b"\x00\x01\x02")
    target = await put.fs.resolve("b.bin")
    with fails(FsErrorCode.NOT_TEXT):
        await put.fs.read_small(target, 64)


async def test_the_version_read_is_the_version_stat_reports_after_a_rewrite(
    put: ProviderUnderTest,
) -> None:
    put.outside.write_bytes("a.txt", b"first\n")
    target = await put.fs.resolve("a.txt")
    before = await put.fs.read_small(target, 64)
    put.outside.write_bytes("a.txt", b"second, longer\n")
    after = await put.fs.read_small(target, 64)
    assert before is not None
    assert after is not None
    assert after.decoded is not None
    assert after.decoded.text == "second, longer\n"
    assert after.info.version != before.info.version
    assert after.info == await put.fs.stat(target)
