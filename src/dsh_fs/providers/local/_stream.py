"""`stream_text` of the local provider: decoded chunks in bounded memory, read on the event
loop while the page cache has them."""

from __future__ import annotations

import codecs
import contextlib
import errno
import hashlib
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import anyio.lowlevel
from anyio import to_thread

from dsh_fs.errors import FsError
from dsh_fs.fs import UTF8, FsEncoding, FsVersion, bom_encoding, messages

from .._oserrors import map_os_errors
from .._text import CodecContest, CodecDecoder, FallbackBook, ascii_safe, decodes
from ._guards import LocalGuards
from ._open import open_regular, unchanged
from ._versions import VersionBook

__all__ = ["STREAM_CHUNK_SIZE", "TextChunks", "stream_text"]

STREAM_CHUNK_SIZE = 64 * 1024
"""Bytes per `stream_text` read, into one reused buffer. Each chunk's text is a fresh string
(1, 2 or 4 bytes a character), and what glibc does with it decides a scan's cost: at 1 MiB
it handed most of those strings fresh pages even in a long-lived process (a 1 GB scan took
over 500,000 page faults, a third of its CPU time); at 256 KiB a settled process reused
them, but a fresh one (the bench's cold rows, a CLI run) still faulted every string in: a
first read of the 100 MB bench file took ~49,000 faults and 0.21-0.23 s of CPU against the
validating baseline's 0.16 s. At 64 KiB the strings stay below what glibc maps and trims
afresh: ~210 faults and 0.11-0.12 s (issue 44; 32 KiB: ~130 faults, more loop turns,
0.12-0.13 s). In a settled process 64 KiB is a little slower than 256 KiB, well inside the
target either way (`python -m bench.warm_scan`; the measurements are in
`bench/results.md`)."""


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
    """Fallback codecs are declared and this chunk's bytes don't tell the file's codec: the
    text it would give as UTF-8 (if it decodes: `utf8`) and in each of `codecs` differs, or
    several of `codecs` decode it. The rest of the file decides
    (`TextChunks._look_ahead`), as a whole read would."""

    def __init__(self, codecs: list[str], utf8: bool, end: int) -> None:
        super().__init__(codecs)
        self.codecs = codecs
        self.utf8 = utf8
        self.end = end


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
        self._codec_base = start  # the file offset the codec's first byte came from
        self._decided = False
        # Fallback codecs still possible for a file read as UTF-8 so far (SPEC §12).
        self._open: tuple[str, ...] = ()
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
                codec = await to_thread.run_sync(self._look_ahead, undecided)
                text = self._settle(codec, undecided.end, count == 0)
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
        rule's codec, else UTF-8 (with the fallback codecs kept open, `_open`, until the
        file is known to be UTF-8 or not)."""
        self._decided = True
        head = self._head if self._head is not None else bytes(self._buffer[: min(count, 3)])
        bom = bom_encoding(head)
        declared = self._declared
        if bom is not None and not bom.utf8:
            self._use(bom)
            return
        if declared is not None and declared.rule is not None:
            self._use(FsEncoding(codec=declared.rule))
            return
        if bom is not None:
            self.encoding = bom
        if declared is None or not declared.fallback or self._start != 0:
            return
        # A codec an earlier stream decided for this version, unless the version is racy
        # (a same-size rewrite in its timestamp tick would share it).
        known = None
        if declared.book is not None and not self._versions.is_racy(self._info):
            known = declared.book.known(self._version())
        if known == "utf-8":
            return  # an earlier stream of this version read it whole as UTF-8
        if known is not None and known in declared.fallback:
            self._use(FsEncoding(codec=known))  # an earlier stream proved it
            return
        self._open = declared.fallback

    def _version(self) -> FsVersion:
        return self._versions.version(self._info)

    def _use(self, encoding: FsEncoding) -> None:
        self.encoding = encoding
        self._codec = CodecDecoder(encoding.codec, self._display)

    def _decode(self, count: int) -> str:
        if not self._decided:
            self._decide(count)
        if self._codec is not None:
            return self._decode_codec(count)
        return self._decode_utf8(count)

    def _settle(self, codec: str | None, end: int, final: bool) -> str:
        """The text of the chunk (`end` bytes at the buffer's start, from `text_offset`) once
        the file's codec is known: `codec` (``utf-8``: UTF-8 from here on; None: none
        proves the file, which fails here if this chunk is no UTF-8 either)."""
        self._open = ()
        book = self._declared.book if self._declared is not None else None
        if codec is None or codec == "utf-8":
            if codec is not None and book is not None:
                book.remember(self._version(), codec)
            return self._utf8_text(end, final)
        if book is not None:
            book.remember(self._version(), codec)
        # Everything returned before this chunk was ASCII, which `codec` (ASCII-safe, or
        # nothing was returned yet) reads as the same text: the stream goes on in it from
        # this chunk's first byte, where the codec holds no state.
        self._codec_base, self._carry = self.text_offset, 0
        self._codec, self.encoding = CodecDecoder(codec, self._display), FsEncoding(codec=codec)
        text = self._codec.decode(memoryview(self._buffer)[:end], final)
        return self._finish_codec(text, final, 0)

    def _look_ahead(self, undecided: _Undecided) -> str | None:
        """The file's codec (SPEC §12: UTF-8 if `undecided.utf8` and the whole file is
        UTF-8, else the first of `undecided.codecs` that proves the whole file): this
        chunk's bytes and then the rest of the file, read once in chunks of the buffer's
        size (bounded memory, the text dropped), fed to every codec still in the running;
        reading stops once one is left. None: none is left. Blocking (a worker thread)."""
        contest = CodecContest(undecided.utf8, undecided.codecs, self._display)
        contest.feed(bytes(self._buffer[: undecided.end]), False)
        chunk = bytearray(len(self._buffer))
        offset = self._offset
        while contest.open:
            if self._closed:
                break  # the fd may belong to another file by now
            with map_os_errors("read", self._display):
                read = os.preadv(self._fd, [chunk], offset)
            offset += read
            contest.feed(bytes(memoryview(chunk)[:read]), read == 0)
            if read == 0:
                break
        return contest.winner()

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
        return self._finish_codec(text, count == 0, before)

    def _finish_codec(self, text: str, final: bool, before: int) -> str:
        """`text` of a chunk in a codec: it starts `before` bytes after the codec's first
        byte (the bytes the codec proved so far)."""
        self.text_offset = self._codec_base + before
        if final:
            self._done = True
            self.unchanged_at_end = unchanged(self._fd, self._info)
            if self._hash is not None and self.unchanged_at_end:
                self._versions.remember(self._info, self._hash.digest())
        return text

    def _decode_utf8(self, count: int) -> str:
        carry, end = self._carry, self._carry + count
        self.text_offset = self._offset - carry
        self._offset += count
        nul = self._buffer.find(0, carry, end) != -1
        if nul and not self._open:
            self._done = True
            raise messages.binary_file("read", self._display)
        if self._hash is not None:
            self._hash.update(memoryview(self._buffer)[carry:end])
        final = count == 0
        if not self._open:
            return self._utf8_text(end, final)
        return self._undecided_utf8(end, final, nul)

    def _undecided_utf8(self, end: int, final: bool, nul: bool) -> str:
        """A chunk while fallback codecs are still open: everything returned so far was
        ASCII, which UTF-8 and every open codec read alike. A chunk that is ASCII too
        changes nothing; else the file's codec must be known before its text is returned
        (SPEC §12: the whole file decides, not its first chunk)."""
        data = memoryview(self._buffer)[:end]
        decoded: tuple[str, int] | None = None
        if not nul:  # a NUL is no UTF-8 text (binary), though a codec like UTF-16 may read it
            with contextlib.suppress(UnicodeDecodeError):
                decoded = codecs.utf_8_decode(data, "strict", final)
        if decoded is not None:
            if final:
                return self._settle("utf-8", end, final)  # the whole file was UTF-8
            # ASCII text, and every open codec ASCII-safe (always so once a chunk was
            # returned): the same text whatever the file's codec turns out to be. A
            # carried lead byte is this chunk's no more: it starts the next one.
            if decoded[0].isascii() and all(map(ascii_safe, self._open)):
                return self._utf8_text(end, final, decoded)
        utf8 = decoded is not None
        candidates = [codec for codec in self._open if decodes(codec, data, final)]
        if not candidates:
            if nul:
                self._done = True
                raise messages.binary_file("read", self._display)
            return self._settle("utf-8" if utf8 else None, end, final)
        if not utf8 and (len(candidates) == 1 or final):
            return self._settle(candidates[0], end, final)  # nothing left to decide
        raise _Undecided(candidates, utf8, end)

    def _utf8_text(self, end: int, final: bool, decoded: tuple[str, int] | None = None) -> str:
        """The UTF-8 text of the `end` bytes at the buffer's start (from `text_offset`;
        `decoded`: already decoded); an unfinished character's bytes are carried to the
        next chunk."""
        if decoded is None:
            try:
                decoded = codecs.utf_8_decode(memoryview(self._buffer)[:end], "strict", final)
            except UnicodeDecodeError as exc:
                self._done = True
                raise messages.invalid_utf8("read", self._display) from exc
        text, used = decoded
        self._carry = end - used
        self._buffer[: self._carry] = self._buffer[used:end]
        if final:
            self._done = True
            self.unchanged_at_end = unchanged(self._fd, self._info)
            if self._hash is not None and self.unchanged_at_end:
                self._versions.remember(self._info, self._hash.digest())
        return text
