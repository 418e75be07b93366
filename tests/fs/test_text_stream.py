"""The contract's default `stream_text_from`, built on `stream_text` for providers without
ranged reads: right offsets, the text from `start` on, and never a vouched version."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import FileSystem, FsTextChunk
from dsh_fs.providers import LocalFileSystem
from dsh_fs.providers.local import _filesystem as _local

pytestmark = pytest.mark.anyio

TEXT = "héllo\nwörld €\n😀 end\n" * 3


async def derived(fs: LocalFileSystem, start: int) -> list[FsTextChunk]:
    target = await fs.resolve("a.txt")
    async with FileSystem.stream_text_from(fs, target, start) as stream:
        chunks = [chunk async for chunk in stream]
        assert stream.version is None
        return chunks


@pytest.fixture
def fs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LocalFileSystem:
    (tmp_path / "a.txt").write_text(TEXT, encoding="utf-8")
    monkeypatch.setattr(_local, "STREAM_CHUNK_SIZE", 7)  # many chunks from a small file
    return LocalFileSystem(tmp_path, clock=lambda: 2**62)


async def test_the_default_tags_chunks_with_byte_offsets(fs: LocalFileSystem) -> None:
    chunks = await derived(fs, 0)
    assert len(chunks) > 5
    assert "".join(c.text for c in chunks) == TEXT
    offset = 0
    for chunk in chunks:
        assert chunk.offset == offset
        offset += len(chunk.text.encode())


async def test_the_default_starts_at_any_character_boundary(fs: LocalFileSystem) -> None:
    data = TEXT.encode()
    for start in (1, 3, 10, 25, len(data) - 1, len(data), len(data) + 5):
        chunks = await derived(fs, start)
        assert "".join(c.text for c in chunks) == data[start:].decode()
        assert not chunks or chunks[0].offset == start


async def test_the_default_refuses_a_start_inside_a_character(fs: LocalFileSystem) -> None:
    with pytest.raises(FsError) as inside:
        await derived(fs, 2)  # the second byte of "é"
    assert inside.value.code is FsErrorCode.NOT_TEXT
    with pytest.raises(ValueError, match="start"):
        await derived(fs, -1)
