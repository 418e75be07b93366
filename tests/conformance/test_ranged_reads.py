"""`stream_text_from`: ranged text streams with byte offsets, and honest versions."""

from __future__ import annotations

import pytest

from dsh_fs.errors import FsErrorCode
from dsh_fs.fs import FsTarget, FsTextChunk, FsVersion

from .backends import ProviderUnderTest, fails
from .test_reads import MULTIBYTE_BIG

pytestmark = pytest.mark.anyio


async def ranged(
    put: ProviderUnderTest, target: FsTarget, start: int = 0
) -> tuple[list[FsTextChunk], FsVersion | None]:
    async with put.fs.stream_text_from(target, start) as stream:
        chunks = [chunk async for chunk in stream]
        return chunks, stream.version


async def test_chunks_carry_the_byte_offset_of_their_first_character(
    put: ProviderUnderTest,
) -> None:
    put.outside.write_bytes("big.txt", MULTIBYTE_BIG.encode())
    chunks, _ = await ranged(put, await put.fs.resolve("big.txt"))
    assert len(chunks) > 1, "a 10 MiB file must not arrive as one chunk"
    assert "".join(c.text for c in chunks) == MULTIBYTE_BIG
    offset = 0
    for chunk in chunks:
        assert chunk.offset == offset
        assert chunk.text
        offset += len(chunk.text.encode())


async def test_a_stream_from_a_chunk_offset_yields_the_rest_of_the_text(
    put: ProviderUnderTest,
) -> None:
    put.outside.write_bytes("big.txt", MULTIBYTE_BIG.encode())
    target = await put.fs.resolve("big.txt")
    raw = MULTIBYTE_BIG.encode()
    whole, _ = await ranged(put, target)
    # The first chunks, two in the middle and the last two: boundaries after an odd and an
    # even number of chunks (every other one falls inside a two-byte character). Every one
    # of a 10 MiB file's 160 local chunks would read ~800 MiB a provider for no more cases.
    last = len(whole) - 1
    picked = {1, 2, 3, last // 2, last // 2 + 1, last - 1, last}
    for index in sorted(index for index in picked if 0 < index <= last):
        offset = whole[index].offset
        rest, _ = await ranged(put, target, offset)
        assert rest[0].offset == offset
        assert "".join(c.text for c in rest).encode() == raw[offset:]


async def test_a_stream_from_any_character_boundary_yields_the_rest(
    put: ProviderUnderTest,
) -> None:
    raw = "héllo\nwörld\r\n€😀 end\n".encode()
    put.outside.write_bytes("small.txt", raw)
    target = await put.fs.resolve("small.txt")
    for start in (0, 1, 3, 7, len(raw) - 1):
        chunks, _ = await ranged(put, target, start)
        assert "".join(c.text for c in chunks) == raw[start:].decode()
        assert not chunks or chunks[0].offset == start


async def test_a_stream_from_past_the_end_yields_nothing(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("a.txt", b"abc\n")
    chunks, _ = await ranged(put, await put.fs.resolve("a.txt"), 100)
    assert chunks == []


async def test_a_stream_from_inside_a_character_is_not_text(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("a.txt", "é\n".encode())
    message = f'cannot read "{put.display("a.txt")}": invalid UTF-8 text'
    with fails(FsErrorCode.NOT_TEXT, message):
        await ranged(put, await put.fs.resolve("a.txt"), 1)


async def test_ranged_reads_fail_like_reads(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("bin.dat", b"abc\0def")
    with fails(FsErrorCode.NOT_TEXT, f'cannot read "{put.display("bin.dat")}": binary file'):
        await ranged(put, await put.fs.resolve("bin.dat"))
    message = f'cannot read "{put.display("missing.txt")}": not found'
    with fails(FsErrorCode.NOT_FOUND, message):
        await ranged(put, await put.fs.resolve("missing.txt"))


async def test_a_negative_start_is_a_programming_error(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("a.txt", b"abc\n")
    with pytest.raises(ValueError, match="start"):
        await ranged(put, await put.fs.resolve("a.txt"), -1)


async def test_a_vouched_version_is_the_version_stat_reports(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("a.txt", b"first\n")
    target = await put.fs.resolve("a.txt")
    info = await put.fs.stat(target)
    assert info is not None
    _, version = await ranged(put, target)
    if not put.capabilities.content_versions:
        assert version is None
    assert version in (None, info.version)


async def test_a_changed_file_is_never_vouched_at_its_old_version(
    put: ProviderUnderTest,
) -> None:
    put.outside.write_bytes("a.txt", b"first\n")
    target = await put.fs.resolve("a.txt")
    _, before = await ranged(put, target)
    put.outside.write_bytes("a.txt", b"other\n")
    chunks, after = await ranged(put, target)
    assert "".join(c.text for c in chunks) == "other\n"
    assert after is None or after != before
