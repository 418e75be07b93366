"""`stream_text` of the fsspec provider: decoded chunks of an open backend file."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from typing import IO, Any

from dsh_fs.errors import FsError
from dsh_fs.fs import UTF8, FsEncoding, bom_encoding

from .._text import ChunkDecoder, CodecDecoder, proven_codec

__all__ = ["BackendCall", "Declared", "TextChunks"]

BackendCall = Callable[..., Awaitable[Any]]
"""The provider's door to the backend: ``call(verb, display, func, *args)`` runs `func` in a
worker thread and maps its exceptions."""


class Declared:
    """What the encoding rules say of one file (SPEC §12): its rule's codec (None: no rule)
    and the fallback codecs for a file that is not UTF-8 and has no rule. `settled` is told
    the fallback a stream settles on (so a ranged read of the same version decodes in it)."""

    __slots__ = ("fallback", "rule", "settled")

    def __init__(
        self,
        rule: str | None,
        fallback: tuple[str, ...],
        settled: Callable[[str], None] | None = None,
    ) -> None:
        self.rule = None if rule in ("utf-8", "utf-8-sig") else rule
        self.fallback = fallback if rule is None else ()
        self.settled = settled


class TextChunks:
    """Decoded chunks of an open backend file; each read and decode runs in a worker thread.

    The encoding (SPEC §12) is decided at the first chunk from the file's first bytes
    (`head`, for a stream that starts past them) and the rules: a UTF-16 BOM, a rule's
    codec, else UTF-8, or a fallback codec when the first chunk is no UTF-8.
    """

    def __init__(
        self,
        call: BackendCall,
        stream: IO[bytes],
        display: str,
        chunk_size: int,
        start: int = 0,
        *,
        declared: Declared | None = None,
        head: bytes | None = None,
    ) -> None:
        self._call = call
        self._chunk_size = chunk_size
        self._stream = stream
        self._display = display
        self._decoder: ChunkDecoder | CodecDecoder = ChunkDecoder("read", display)
        self._declared = declared
        self._head = head
        self._start = start
        self._first = True
        self.encoding: FsEncoding = UTF8
        """The file's encoding (known once the first chunk was returned)."""
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
        first, self._first = self._first, False
        if first:
            self._decide(data)
        if isinstance(self._decoder, CodecDecoder):
            offset = self._start + self._decoder.consumed
        else:
            offset = self._position - self._decoder.pending
        self._position += len(data)
        try:
            text = self._decoder.decode(data, final)
        except FsError:
            fallback = self._declared.fallback if self._declared is not None else ()
            fell = self._fall_back(data, final, fallback) if first and self._start == 0 else None
            if fell is None:
                self._done = True
                raise
            text = fell
        if final:
            self._done = True
        if text:
            self.text_offset = offset
        return text

    def _decide(self, data: bytes) -> None:
        bom = bom_encoding(self._head if self._head is not None else data[:3])
        if bom is not None and not bom.utf8:
            self.encoding = bom
        elif self._declared is not None and self._declared.rule is not None:
            self.encoding = FsEncoding(codec=self._declared.rule)
        elif bom is not None:
            self.encoding = bom
        if not self.encoding.utf8:
            self._decoder = CodecDecoder(self.encoding.codec, self._display)

    def _fall_back(self, data: bytes, final: bool, fallback: tuple[str, ...]) -> str | None:
        """The first chunk's text in the fallback codec of the file, if any: of those that
        decode the first chunk, the first that proves the whole file (`_proven`), as a
        whole read decides; with only one, it (a later chunk that fails it is
        `FS_NOT_TEXT`: no fallback proves the file)."""
        decoders: dict[str, CodecDecoder] = {}
        texts: dict[str, str] = {}
        for codec in fallback:
            decoder = CodecDecoder(codec, self._display)
            try:
                texts[codec] = decoder.decode(data, final)
            except FsError:
                continue
            decoders[codec] = decoder
        if not decoders:
            return None
        codec = next(iter(decoders))
        if len(decoders) > 1 and not final:
            codec = self._proven(list(decoders), data)
        self._decoder, self.encoding = decoders[codec], FsEncoding(codec=codec)
        if self._declared is not None and self._declared.settled is not None:
            self._declared.settled(codec)
        return texts[codec]

    def _proven(self, candidates: list[str], data: bytes) -> str:
        """The first of `candidates` (each decodes the first chunk, `data`) that proves the
        whole file (`proven_codec`): the rest read once, a chunk at a time, and the stream
        put back where it was."""

        def rest() -> Iterator[bytes]:
            while chunk := self._stream.read(self._chunk_size):
                yield chunk
            yield b""

        back = self._stream.tell()
        try:
            return proven_codec(candidates, data, rest(), self._display)
        finally:
            self._stream.seek(back)
