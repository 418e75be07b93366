"""`stream_text` of the fsspec provider: decoded chunks of an open backend file."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import IO, Any

from dsh_fs.errors import FsError

from .._text import ChunkDecoder

__all__ = ["BackendCall", "TextChunks"]

BackendCall = Callable[..., Awaitable[Any]]
"""The provider's door to the backend: ``call(verb, display, func, *args)`` runs `func` in a
worker thread and maps its exceptions."""


class TextChunks:
    """Decoded chunks of an open backend file; each read and decode runs in a worker thread."""

    def __init__(
        self, call: BackendCall, stream: IO[bytes], display: str, chunk_size: int, start: int = 0
    ) -> None:
        self._call = call
        self._chunk_size = chunk_size
        self._stream = stream
        self._display = display
        self._decoder = ChunkDecoder("read", display)
        self._position = start  # file offset of the next byte read
        self.text_offset = start
        """File offset of the first byte of the text `__anext__` returned last."""
        self._done = False
        self._closed = False

    def __aiter__(self) -> TextChunks:
        return self

    async def __anext__(self) -> str:
        while not self._done:
            text: str = await self._call("read", self._display, self._next_text)
            if text:
                return text
        raise StopAsyncIteration

    async def aclose(self) -> None:
        """Close the backend file (idempotent)."""
        if not self._closed:
            self._closed = self._done = True
            await self._call("read", self._display, self._stream.close)

    def _next_text(self) -> str:
        if self._closed:
            raise RuntimeError("stream_text iterated after its block was left")
        data = self._stream.read(self._chunk_size)
        final = not data
        offset = self._position - self._decoder.pending
        self._position += len(data)
        try:
            text = self._decoder.decode(data, final)
        except FsError:
            self._done = True
            raise
        if final:
            self._done = True
        if text:
            self.text_offset = offset
        return text
