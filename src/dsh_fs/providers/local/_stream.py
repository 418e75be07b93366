"""`stream_text` of the local provider: decoded chunks in bounded memory, read on the event
loop while the page cache has them."""

from __future__ import annotations

import codecs
import errno
import hashlib
import os
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager

import anyio.lowlevel
from anyio import to_thread

from dsh_fs.errors import FsError
from dsh_fs.fs import UTF8, FsEncoding, bom_encoding, messages

from .._oserrors import map_os_errors
from .._text import CodecDecoder, FallbackBook, proven_codec
from ._guards import LocalGuards
from ._open import open_regular, unchanged
from ._versions import VersionBook

__all__ = ["STREAM_CHUNK_SIZE", "TextChunks", "stream_text"]

STREAM_CHUNK_SIZE = 256 * 1024
"""Bytes per `stream_text` read, into one reused buffer. Each chunk's text is a fresh string
(1, 2 or 4 bytes a character). At 1 MiB, glibc handed most of those strings fresh pages in
a long-lived process: a 1 GB scan took over 500,000 page faults, a third of its CPU time.
At this size the freed strings are reused and a scan takes almost none. Smaller chunks cost
more in loop turns; 512 KiB measured about the same, with more faults (`python -m
bench.warm_scan`; the measurements are in `bench/results.md`)."""


@asynccontextmanager
async def stream_text(
    key: str,
    display: str,
    chunk_size: int,
    versions: VersionBook,
    guards: LocalGuards,
    closed: Callable[[], bool],
    declared: Declared | None = None,
) -> AsyncIterator[TextChunks]:
    """Open `key` and yield its decoded chunks; leaving the block closes the file. Once
    `closed()` is true (the provider was closed), the next chunk fails with `FS_ABORTED`.
    `declared`: what the encoding rules say of the file (SPEC §12)."""
    opened = await to_thread.run_sync(open_regular, key, "read", display, guards)
    chunks = TextChunks(
        opened.fd, display, chunk_size, opened.info, versions, closed, declared=declared
    )
    try:
        yield chunks
    finally:
        chunks.close()


_RWF_NOWAIT: int | None = getattr(os, "RWF_NOWAIT", None)


class _Undecided(Exception):
    """The first chunk is no UTF-8 and several fallback codecs decode it: the rest of the
    file decides between `codecs` (`TextChunks._proven_fallback`)."""

    def __init__(self, codecs: list[str]) -> None:
        super().__init__(codecs)
        self.codecs = codecs


def _decodes(codec: str, data: memoryview, final: bool) -> bool:
    """Whether `data`, a stream's first bytes, decodes in `codec` as far as it goes."""
    try:
        CodecDecoder(codec, "").decode(data, final)
    except FsError:
        return False
    return True


class Declared:
    """What the encoding rules say of one file: its rule's codec (None: no rule), the
    fallback codecs for a file that is not UTF-8 and has no rule, and where a fallback the
    stream settles on is noted."""

    __slots__ = ("book", "fallback", "rule")

    def __init__(
        self, rule: str | None, fallback: tuple[str, ...], book: FallbackBook | None = None
    ) -> None:
        self.rule = None if rule in ("utf-8", "utf-8-sig") else rule
        self.fallback = fallback if rule is None else ()
        self.book = book


class TextChunks:
    """Decoded chunks of an open file, read on the event loop while the page cache has them.

    Each chunk is first read with ``RWF_NOWAIT`` (Linux): the kernel copies what is cached
    and refuses (EAGAIN) rather than wait for the disk; only then does the read go to a
    worker thread. Decoding runs on the loop.

    Why not a worker thread per chunk: on a 2-core machine the hops and GIL hand-offs
    between two threads cost more than the reading (`bench/results.md`), while decoding one
    chunk holds the loop for about a millisecond, far inside what a concurrent small read is
    allowed to wait; a cold disk never blocks the loop.

    A whole stream of a file small enough (or racy enough) is fingerprinted on the way, so
    its version can be backed by content like a `read_text`'s.
    """

    def __init__(
        self,
        fd: int,
        display: str,
        chunk_size: int,
        info: os.stat_result,
        versions: VersionBook,
        provider_closed: Callable[[], bool],
        start: int = 0,
        *,
        declared: Declared | None = None,
        head: bytes | None = None,
    ) -> None:
        self._fd = fd
        self._display = display
        self._buffer = bytearray(chunk_size + 3)  # room for a carried partial character
        self._offset = start
        self._start = start
        self._info = info
        self._versions = versions
        self._provider_closed = provider_closed
        whole = start == 0 and versions.wants_digest(info)
        self._hash = hashlib.sha256() if whole else None
        self.text_offset = start
        """File offset of the first byte of the text `__anext__` returned last."""
        self.unchanged_at_end: bool | None = None
        """At the end of the file: whether it still had the stat it was opened with."""
        # An unfinished character's bytes, moved to the buffer's start for the next read.
        # `codecs.utf_8_decode` on the buffer itself: an incremental decoder would first copy
        # each chunk onto its leftover.
        self._carry = 0
        self._nowait = _RWF_NOWAIT
        self._done = False
        self._closed = False
        # SPEC §12: decided at the first chunk (from the file's first bytes: `head` for a
        # stream that starts past them); None decodes UTF-8 on the fast path below.
        self._declared = declared
        self._head = head
        self._codec: CodecDecoder | None = None
        self._decided = False
        self._first = True
        self.encoding: FsEncoding = UTF8
        """The file's encoding (known once the first chunk was returned)."""

    def __aiter__(self) -> TextChunks:
        return self

    async def __anext__(self) -> str:
        while not self._done:
            if self._provider_closed():
                self._done = True
                raise messages.aborted("read", self._display)
            count = self._read_cached()
            if count is None:
                count = await to_thread.run_sync(self._read_waiting)
            else:
                await anyio.lowlevel.checkpoint()  # other tasks run between chunks
            if self._closed:
                break  # the block that opened the stream was left meanwhile
            try:
                text = self._decode(count)
            except _Undecided as undecided:
                codec = await to_thread.run_sync(self._proven_fallback, undecided.codecs, count)
                text = self._fall_back(codec, count)
            if text:
                return text
        raise StopAsyncIteration

    def close(self) -> None:
        """Close the file (idempotent); a read in flight sees it and stops."""
        if not self._closed:
            self._closed = True
            self._done = True
            os.close(self._fd)

    def _read_cached(self) -> int | None:
        """Bytes read into the buffer without waiting for the disk; None: it would wait."""
        if self._nowait is None or self._closed:
            return None
        with map_os_errors("read", self._display):
            try:
                return os.preadv(self._fd, [self._free()], self._offset, self._nowait)
            except BlockingIOError:
                return None
            except OSError as exc:
                if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL):
                    raise
                self._nowait = None  # this filesystem can't; wait in a thread from now on
                return None

    def _read_waiting(self) -> int:
        if self._closed:
            return 0  # the fd may belong to another file by now
        with map_os_errors("read", self._display):
            return os.preadv(self._fd, [self._free()], self._offset)

    def _free(self) -> memoryview:
        return memoryview(self._buffer)[self._carry :]

    def _decide(self, count: int) -> None:
        """The encoding, from the file's first bytes and the rules: a UTF-16 BOM, then a
        rule's codec, else UTF-8 (a fallback only once UTF-8 failed on the first chunk)."""
        self._decided = True
        head = self._head if self._head is not None else bytes(self._buffer[: min(count, 3)])
        bom = bom_encoding(head)
        if bom is not None and not bom.utf8:
            self._use(bom)
        elif self._declared is not None and self._declared.rule is not None:
            self._use(FsEncoding(codec=self._declared.rule))
        elif bom is not None:
            self.encoding = bom

    def _use(self, encoding: FsEncoding) -> None:
        self.encoding = encoding
        self._codec = CodecDecoder(encoding.codec, self._display)

    def _decode(self, count: int) -> str:
        if not self._decided:
            self._decide(count)
        if self._codec is not None:
            return self._decode_codec(count)
        try:
            return self._decode_utf8(count)
        except FsError:
            fallback = self._declared.fallback if self._declared is not None else ()
            if not (self._first and fallback and self._start == 0):
                raise
            self._offset = count
            # The file's first chunk is no UTF-8: the fallbacks that decode it are the
            # candidates. With one, it is the file's codec from here on (a later chunk that
            # fails it is `FS_NOT_TEXT`: no fallback proves the file); with several, the
            # rest of the file decides (`_proven_fallback`), as a whole read would.
            first = memoryview(self._buffer)[:count]
            candidates = [codec for codec in fallback if _decodes(codec, first, count == 0)]
            if not candidates:
                raise
            book = self._declared.book if self._declared is not None else None
            known = book.known(self._versions.version(self._info)) if book is not None else None
            if known in candidates:
                candidates = [known]  # an earlier stream of this version proved it
            if len(candidates) > 1 and count > 0:
                raise _Undecided(candidates) from None
            return self._fall_back(candidates[0], count)
        finally:
            self._first = False

    def _fall_back(self, codec: str, count: int) -> str:
        """The first chunk's text (its `count` bytes at the buffer's start) in the fallback
        `codec`, the file's codec from here on."""
        decoder = CodecDecoder(codec, self._display)
        text = decoder.decode(memoryview(self._buffer)[:count], count == 0)
        self._codec, self.encoding = decoder, FsEncoding(codec=codec)
        self._done = count == 0
        assert self._declared is not None
        if self._declared.book is not None:
            self._declared.book.remember(self._versions.version(self._info), codec)
        if self._hash is not None:
            self._hash = hashlib.sha256(memoryview(self._buffer)[:count])
        return self._finish_codec(text, count, 0)

    def _proven_fallback(self, candidates: list[str], count: int) -> str:
        """The first of `candidates` (each decodes the first chunk, `count` bytes at the
        buffer's start) that proves the whole file (`proven_codec`): the rest read once, in
        chunks of the buffer's size (bounded memory). Blocking (a worker thread)."""
        chunk = bytearray(len(self._buffer))

        def rest() -> Iterator[memoryview]:
            offset = count
            # Once closed, the fd may belong to another file: no more reading.
            while not self._closed:
                with map_os_errors("read", self._display):
                    read = os.preadv(self._fd, [chunk], offset)
                offset += read
                yield memoryview(chunk)[:read]
                if read == 0:
                    return

        return proven_codec(candidates, bytes(self._buffer[:count]), rest(), self._display)

    def _decode_codec(self, count: int) -> str:
        assert self._codec is not None
        before = self._codec.consumed
        self._offset += count
        if self._hash is not None:
            self._hash.update(memoryview(self._buffer)[:count])
        try:
            text = self._codec.decode(memoryview(self._buffer)[:count], count == 0)
        except FsError:
            self._done = True
            raise
        return self._finish_codec(text, count, before)

    def _finish_codec(self, text: str, count: int, before: int) -> str:
        """`text` of a chunk in a codec: it starts `before` bytes after the stream's start
        (the bytes the codec proved so far)."""
        self.text_offset = self._start + before
        if count == 0:
            self._done = True
            self.unchanged_at_end = unchanged(self._fd, self._info)
            if self._hash is not None and self.unchanged_at_end:
                self._versions.remember(self._info, self._hash.digest())
        return text

    def _decode_utf8(self, count: int) -> str:
        carry, end = self._carry, self._carry + count
        self.text_offset = self._offset - carry
        self._offset += count
        if self._buffer.find(0, carry, end) != -1:
            self._done = True
            raise messages.binary_file("read", self._display)
        if self._hash is not None:
            self._hash.update(memoryview(self._buffer)[carry:end])
        final = count == 0
        try:
            text, used = codecs.utf_8_decode(memoryview(self._buffer)[:end], "strict", final)
        except UnicodeDecodeError as exc:
            self._done = True
            raise messages.invalid_utf8("read", self._display) from exc
        self._carry = end - used
        self._buffer[: self._carry] = self._buffer[used:end]
        if final:
            self._done = True
            self.unchanged_at_end = unchanged(self._fd, self._info)
            if self._hash is not None and self.unchanged_at_end:
                self._versions.remember(self._info, self._hash.digest())
        return text
