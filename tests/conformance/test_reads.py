"""`read_text`, `stream_text`, `read_bytes`: strict UTF-8, exact messages, never a hang."""

from __future__ import annotations

import anyio
import pytest

from dsh_fs.errors import FsErrorCode
from dsh_fs.fs import FsTarget

from .backends import ProviderUnderTest, fails, require

pytestmark = pytest.mark.anyio

MULTIBYTE_BIG = "a" + "é" * (5 * 1024 * 1024) + "€😀\n"
"""~10 MiB; the odd one-byte prefix puts every even chunk boundary inside a two-byte char."""


async def stream(put: ProviderUnderTest, target: FsTarget) -> list[str]:
    async with put.fs.stream_text(target) as chunks:
        return [chunk async for chunk in chunks]


async def test_read_text_returns_the_content_exactly(put: ProviderUnderTest) -> None:
    raw = "\ufeffBOM line\r\nmixed\nno final newline — ünïcödé".encode()
    put.outside.write_bytes("a.txt", raw)
    assert (await put.fs.read_text(await put.fs.resolve("a.txt"))).encode() == raw


async def test_read_text_of_an_empty_file_is_empty(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("empty.txt", b"")
    assert await put.fs.read_text(await put.fs.resolve("empty.txt")) == ""


async def test_read_of_a_missing_file_is_not_found(put: ProviderUnderTest) -> None:
    target = await put.fs.resolve("missing.txt")
    message = f'cannot read "{put.display("missing.txt")}": not found'
    with fails(FsErrorCode.NOT_FOUND, message):
        await put.fs.read_text(target)
    with fails(FsErrorCode.NOT_FOUND, message):
        await put.fs.read_bytes(target, 100)
    with fails(FsErrorCode.NOT_FOUND, message):
        await stream(put, target)


async def test_read_of_a_file_with_nul_is_binary(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("bin.dat", b"abc\0def")
    target = await put.fs.resolve("bin.dat")
    with fails(FsErrorCode.NOT_TEXT, f'cannot read "{put.display("bin.dat")}": binary file'):
        await put.fs.read_text(target)
    assert await put.fs.read_bytes(target, 100) == b"abc\0def"


async def test_read_of_invalid_utf8_is_not_text(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("latin1.txt", "café".encode("latin-1"))
    message = f'cannot read "{put.display("latin1.txt")}": invalid UTF-8 text'
    with fails(FsErrorCode.NOT_TEXT, message):
        await put.fs.read_text(await put.fs.resolve("latin1.txt"))


async def test_read_of_a_truncated_multibyte_char_is_not_text(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("cut.txt", "ok €".encode()[:-1])
    target = await put.fs.resolve("cut.txt")
    message = f'cannot read "{put.display("cut.txt")}": invalid UTF-8 text'
    with fails(FsErrorCode.NOT_TEXT, message):
        await put.fs.read_text(target)
    with fails(FsErrorCode.NOT_TEXT, message):
        await stream(put, target)


async def test_read_of_a_directory_is_not_a_regular_file(put: ProviderUnderTest) -> None:
    require(put, "directories")
    put.outside.mkdir("d")
    target = await put.fs.resolve("d")
    message = f'cannot read "{put.display("d")}": not a regular file'
    with fails(FsErrorCode.NOT_REGULAR_FILE, message):
        await put.fs.read_text(target)
    with fails(FsErrorCode.NOT_REGULAR_FILE, message):
        await put.fs.read_bytes(target, 100)
    with fails(FsErrorCode.NOT_REGULAR_FILE, message):
        await stream(put, target)


async def test_read_of_a_fifo_without_writer_is_refused_promptly(put: ProviderUnderTest) -> None:
    require(put, "special_files")
    put.outside.mkfifo("pipe")
    target = await put.fs.resolve("pipe")
    message = f'cannot read "{put.display("pipe")}": not a regular file'
    with anyio.fail_after(60):
        with fails(FsErrorCode.NOT_REGULAR_FILE, message):
            await put.fs.read_text(target)
        with fails(FsErrorCode.NOT_REGULAR_FILE, message):
            await put.fs.read_bytes(target, 100)
        with fails(FsErrorCode.NOT_REGULAR_FILE, message):
            await stream(put, target)


async def test_read_through_a_symlink_reads_the_target(put: ProviderUnderTest) -> None:
    require(put, "symlinks")
    put.outside.write_bytes("real.txt", b"through the link\n")
    put.outside.symlink("link.txt", "real.txt")
    assert await put.fs.read_text(await put.fs.resolve("link.txt")) == "through the link\n"


async def test_read_of_a_dangling_symlink_is_not_found(put: ProviderUnderTest) -> None:
    require(put, "symlinks")
    put.outside.symlink("dangling.txt", "nowhere.txt")
    message = f'cannot read "{put.display("dangling.txt")}": not found'
    with fails(FsErrorCode.NOT_FOUND, message):
        await put.fs.read_text(await put.fs.resolve("dangling.txt"))


async def test_stream_text_decodes_multibyte_chars_split_across_chunks(
    put: ProviderUnderTest,
) -> None:
    put.outside.write_bytes("big.txt", MULTIBYTE_BIG.encode())
    chunks = await stream(put, await put.fs.resolve("big.txt"))
    assert len(chunks) > 1, "a 10 MiB file must not arrive as one chunk"
    assert "".join(chunks) == MULTIBYTE_BIG


async def test_stream_text_of_an_empty_file_yields_nothing(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("empty.txt", b"")
    assert "".join(await stream(put, await put.fs.resolve("empty.txt"))) == ""


async def test_stream_text_reports_invalid_utf8_found_mid_stream(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("late.txt", MULTIBYTE_BIG.encode() + b"\xff tail\n")
    received: list[str] = []
    message = f'cannot read "{put.display("late.txt")}": invalid UTF-8 text'
    with fails(FsErrorCode.NOT_TEXT, message):
        async with put.fs.stream_text(await put.fs.resolve("late.txt")) as chunks:
            async for chunk in chunks:
                received.append(chunk)
    assert received, "the valid prefix is delivered before the error"
    assert MULTIBYTE_BIG.startswith("".join(received))


async def test_stream_text_reports_nul_found_mid_stream(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("late.bin", MULTIBYTE_BIG.encode() + b"\0")
    message = f'cannot read "{put.display("late.bin")}": binary file'
    with fails(FsErrorCode.NOT_TEXT, message):
        await stream(put, await put.fs.resolve("late.bin"))


async def test_read_bytes_returns_a_file_of_exactly_max_bytes(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("a.bin", b"0123456789")
    assert await put.fs.read_bytes(await put.fs.resolve("a.bin"), 10) == b"0123456789"


async def test_read_bytes_over_the_limit_is_too_large_never_truncated(
    put: ProviderUnderTest,
) -> None:
    put.outside.write_bytes("a.bin", b"0123456789")
    with fails(FsErrorCode.TOO_LARGE) as info:
        await put.fs.read_bytes(await put.fs.resolve("a.bin"), 9)
    assert put.display("a.bin") in info.value.message
