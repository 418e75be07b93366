"""`stream_text_from` of the fsspec provider: a ranged read, and the version it is pinned to
on the families that pin reads (S3's ``If-Match``, memory's snapshot)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import IO

import anyio

from dsh_fs.fs import FsEncoding, FsTextChunk, FsTextStream, FsVersion

from .._text import FallbackBook
from ._store import Store
from ._stream import BackendCall, Declared, TextChunks

__all__ = ["RangedText", "stream_text_from"]


@asynccontextmanager
async def stream_text_from(
    call: BackendCall,
    store: Store,
    path: str,
    display: str,
    start: int,
    chunk_size: int,
    declared: Declared | None = None,
    read_head: Callable[[], bytes] | None = None,
    fallbacks: FallbackBook | None = None,
) -> AsyncIterator[FsTextStream]:
    """Open `path` at byte `start` through `call` (worker thread, errors mapped) and stream
    its text; leaving the block closes the backend file. Past byte 0, `read_head` gives the
    file's first bytes (its BOM, SPEC §12); `fallbacks` keeps the fallback codec a stream
    from byte 0 settled on per version, for the ranged reads of that version."""
    if start < 0:
        raise ValueError("start must be at least 0")
    head = None
    if start > 0 and read_head is not None:
        head = await call("read", display, read_head)
    opened: tuple[IO[bytes], FsVersion | None] = await call(
        "read", display, store.open_from, path, chunk_size, start
    )
    stream, version = opened
    if declared is not None and fallbacks is not None and version is not None:
        if start > 0:
            settled = fallbacks.known(version)
            if settled is not None:
                declared = Declared(settled, ())
        else:
            pinned = version
            declared = Declared(
                declared.rule,
                declared.fallback,
                lambda codec: fallbacks.remember(pinned, codec),
            )
    chunks = TextChunks(call, stream, display, chunk_size, start, declared=declared, head=head)
    try:
        yield RangedText(chunks, version)
    finally:
        with anyio.CancelScope(shield=True):
            await chunks.aclose()


class RangedText(FsTextStream):
    """`TextChunks` as an `FsTextStream`: offsets from the reader, the pinned version."""

    def __init__(self, chunks: TextChunks, version: FsVersion | None) -> None:
        self._chunks = chunks
        self._version = version

    @property
    def version(self) -> FsVersion | None:
        return self._version

    @property
    def encoding(self) -> FsEncoding:
        return self._chunks.encoding

    async def __anext__(self) -> FsTextChunk:
        text = await self._chunks.__anext__()
        return FsTextChunk(offset=self._chunks.text_offset, text=text)
