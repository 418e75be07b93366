"""`stream_text` of the fsspec provider: decoded chunks of an open backend file."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import IO, Any

from dsh_fs.errors import FsError
from dsh_fs.fs import UTF8, FsEncoding, bom_encoding

from .._text import ChunkDecoder, CodecContest, CodecDecoder, ascii_safe, decodes

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

    The encoding (SPEC §12) is decided from the file's first bytes (`head`, for a stream
    that starts past them) and the rules: a UTF-16 BOM, a rule's codec, else UTF-8; with
    fallback codecs declared, UTF-8 until a chunk that is not ASCII, when the whole file
    decides (`_undecided`).
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
        self._codec_base = start  # the file offset the codec's first byte came from
        self._first = True
        # Fallback codecs still possible for a file read as UTF-8 so far (SPEC §12).
        self._open: tuple[str, ...] = ()
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
            offset = self._codec_base + self._decoder.consumed
        else:
            offset = self._position - self._decoder.pending
        self._position += len(data)
        if self._open:
            text = self._undecided(data, final, offset)
        else:
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

    def _decide(self, data: bytes) -> None:
        bom = bom_encoding(self._head if self._head is not None else data[:3])
        if bom is not None and not bom.utf8:
            self.encoding = bom
        elif self._declared is not None and self._declared.rule is not None:
            self.encoding = FsEncoding(codec=self._declared.rule)
        else:
            if bom is not None:
                self.encoding = bom
            if self._declared is not None and self._start == 0:
                self._open = self._declared.fallback
        if not self.encoding.utf8:
            self._decoder = CodecDecoder(self.encoding.codec, self._display)

    def _undecided(self, data: bytes, final: bool, offset: int) -> str:
        """A chunk while fallback codecs are still open (`_open`): everything returned so
        far was ASCII, which UTF-8 and every open codec read alike. A chunk that is ASCII
        too changes nothing; else the file's codec is decided before its text is returned,
        as a whole read decides (SPEC §12): UTF-8 if the whole file is UTF-8, else the first
        fallback that proves it whole (`_look_ahead`). The chunk's bytes start at `offset`,
        where every codec holds no state."""
        assert isinstance(self._decoder, ChunkDecoder)
        whole = self._decoder.held + data
        failure: FsError | None = None
        text = ""
        try:
            text = self._decoder.decode(data, final)
        except FsError as error:
            failure = error
        if failure is None:
            if final:
                return self._settle("utf-8", text, whole, final, offset)
            if text.isascii() and all(map(ascii_safe, self._open)):
                return text
        candidates = [codec for codec in self._open if decodes(codec, whole, final)]
        winner: str | None
        if failure is not None and (len(candidates) == 1 or final):
            winner = next(iter(candidates), None)  # nothing left to decide
        elif candidates:
            winner = self._look_ahead(failure is None, candidates, whole)
        else:
            winner = None
        if winner is None and failure is None:
            winner = "utf-8"  # no fallback proves the file: UTF-8 or nothing, as it goes on
        if winner is None:
            assert failure is not None
            self._done = True
            raise failure
        return self._settle(winner, text, whole, final, offset)

    def _settle(self, codec: str, text: str, whole: bytes, final: bool, offset: int) -> str:
        """The chunk's text once the file's `codec` is known (``utf-8``: `text`, already
        decoded; else `whole`, its bytes from `offset`, decoded in `codec` from there on)."""
        self._open = ()
        if self._declared is not None and self._declared.settled is not None:
            self._declared.settled(codec)
        if codec == "utf-8":
            return text
        decoder = CodecDecoder(codec, self._display)
        self._decoder, self.encoding, self._codec_base = decoder, FsEncoding(codec=codec), offset
        return decoder.decode(whole, final)

    def _look_ahead(self, utf8: bool, candidates: list[str], whole: bytes) -> str | None:
        """The file's codec (UTF-8 first if `utf8`, then `candidates` in order): the first
        that proves the whole file. This chunk's bytes (`whole`) and then the rest of the
        file are read once, a chunk at a time (the text dropped), fed to every codec still
        in the running, and the stream is put back where it was; reading stops once one is
        left. None: none is left."""
        contest = CodecContest(utf8, candidates, self._display)
        contest.feed(whole, False)
        back = self._stream.tell()
        try:
            while contest.open:
                chunk = self._stream.read(self._chunk_size)
                contest.feed(chunk, not chunk)
                if not chunk:
                    break
        finally:
            self._stream.seek(back)
        return contest.winner()
