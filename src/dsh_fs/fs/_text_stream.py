"""Ranged text streams: decoded chunks tagged with their byte offsets, and a vouched version.

`FileSystem.stream_text_from` returns an `FsTextStream`. Byte offsets let a consumer come
back later to where a chunk started; the version tells it whether what it derived from the
chunks (a line index) may be reused while `stat` keeps reporting that version. Providers
know nothing of lines: they stream text and vouch (or not) for versions.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass

from . import messages
from ._encodings import UTF8, FsEncoding
from ._types import FsTarget, FsVersion

__all__ = ["FsTextChunk", "FsTextStream", "derived_text_stream"]


@dataclass(frozen=True, slots=True, kw_only=True)
class FsTextChunk:
    """A run of decoded text and where its bytes start in the file."""

    offset: int
    """Byte offset of the chunk's first character in the file (a character boundary)."""
    text: str
    """Whole characters, never empty."""


class FsTextStream(ABC):
    """The chunks of `FileSystem.stream_text_from`, in file order, and the version they
    belong to. Iterate it with ``async for chunk in stream``."""

    @property
    @abstractmethod
    def version(self) -> FsVersion | None:
        """The version of the bytes being streamed, when the provider vouches that it names
        exactly these bytes, else None.

        Vouching means: while `stat` reports this version, the file holds the bytes this
        stream delivers, so what a consumer derives from them stays true. Only providers
        declaring `FsCapabilities.content_versions` ever vouch, and only for versions that
        change with every content change (not a local file changed too recently for its
        timestamps to show a same-size rewrite, not a size + mtime version). Known once the
        stream is open; it turns None at the end of the stream when the file changed while
        it was read, so read it after the last chunk to vouch for all of them.
        """

    @property
    def encoding(self) -> FsEncoding:
        """The file's encoding (SPEC §12), known once the first chunk was returned; UTF-8
        unless the provider says otherwise (the default)."""
        return UTF8

    def __aiter__(self) -> FsTextStream:
        return self

    @abstractmethod
    async def __anext__(self) -> FsTextChunk:
        """The next chunk.

        Raises:
            StopAsyncIteration: the end of the file.
            FsError: `FS_NOT_TEXT` (NUL byte or invalid UTF-8 from the start offset on),
                `FS_IO_ERROR`, `FS_ABORTED`.
        """


class _Derived(FsTextStream):
    """`FsTextStream` over a provider's `stream_text`: offsets by encoding each chunk,
    never a vouched version."""

    def __init__(self, chunks: AsyncIterator[str], start: int, display: str) -> None:
        self._chunks = chunks
        self._start = start
        self._display = display
        self._offset = 0

    @property
    def version(self) -> FsVersion | None:
        return None

    async def __anext__(self) -> FsTextChunk:
        while True:
            text = await self._chunks.__anext__()
            offset = self._offset
            encoded = text.encode("utf-8")
            self._offset += len(encoded)
            if self._offset <= self._start:
                continue
            if offset < self._start:
                try:
                    text = encoded[self._start - offset :].decode("utf-8")
                except UnicodeDecodeError as exc:
                    # Text from inside a character on is not UTF-8, as a ranged read finds.
                    raise messages.invalid_utf8("read", self._display) from exc
                offset = self._start
            return FsTextChunk(offset=offset, text=text)


@asynccontextmanager
async def derived_text_stream(
    stream: AbstractAsyncContextManager[AsyncIterator[str]], target: FsTarget, start: int
) -> AsyncIterator[FsTextStream]:
    """`stream_text_from` built from `stream_text` (the contract's default): it reads and
    decodes the bytes before `start` too, and vouches for no version."""
    if start < 0:
        raise ValueError("start must be at least 0")
    async with stream as chunks:
        yield _Derived(chunks, start, target.display_path)
