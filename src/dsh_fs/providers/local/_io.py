"""Moving bytes through open descriptors: whole reads, capped reads, strict text, full writes.

Synchronous helpers: they run in worker threads unless a caller says otherwise.
"""

from __future__ import annotations

import codecs
import errno
import os
import threading
from collections.abc import Iterator, Sequence
from typing import Protocol

from dsh_fs.errors import FsError
from dsh_fs.fs import EncodedText, messages

from .._oserrors import map_os_errors
from .._text import CHECK_SLICE, check_text
from ._guards import LocalGuards
from ._open import open_regular
from ._versions import equal_in_place

__all__ = [
    "READ_CHUNK_SIZE",
    "WHOLE_CHECK_BYTES",
    "WRITE_PIECE",
    "Hasher",
    "LazyContent",
    "read_bytes_capped",
    "read_bytes_within",
    "read_checked_fd",
    "read_fd",
    "read_head",
    "write_all",
]


class Hasher(Protocol):
    """What `write_all` feeds (a `hashlib` object)."""

    def update(self, data: bytes | bytearray | memoryview, /) -> None: ...


WHOLE_CHECK_BYTES = 16 * 1024 * 1024
"""`LazyContent.checked` reads a file up to this size whole, then checks it; a larger one
is checked chunk by chunk as it is read (a huge binary file is refused at its first chunk)."""

READ_CHUNK_SIZE = 1024 * 1024
"""Largest single `read` of a whole-file text read (an edit's prior content)."""


def read_fd(fd: int, size_hint: int) -> bytes:
    """The rest of the open regular file's bytes (`size_hint` sizes the first read)."""
    chunks: list[bytes] = []
    got = 0
    want = max(size_hint + 1, 64 * 1024)
    while True:
        chunk = os.read(fd, want)
        chunks.append(chunk)
        got += len(chunk)
        # A short read that brought all `size_hint` promised is the end: no read just to
        # hear EOF (a system call of a write's prior read, issue 44). A file that grew
        # fills the read; a read the kernel capped (2 GiB) falls short of the size: read on.
        if not chunk or (len(chunk) < want and got >= size_hint):
            return b"".join(chunks)


def read_checked_fd(fd: int, verb: messages.Verb, display: str) -> bytearray:
    """The rest of the file's bytes, checked as text chunk by chunk as they are read.

    One growing buffer (large reallocations move pages, not bytes), so the peak is the file
    plus a chunk, not the chunks plus their join. Each chunk is checked where it landed, in
    `CHECK_SLICE` slices (an ASCII chunk at memchr speed): no chunk's text is built whole,
    which cost ~1.3 ms a MiB against ~0.44 (issue 44).

    Raises:
        FsError: `FS_NOT_TEXT` at the first chunk that is not text.
    """
    data = bytearray()
    checked = 0  # bytes of `data` known to be whole UTF-8 characters
    while True:
        chunk = os.read(fd, READ_CHUNK_SIZE)
        if b"\0" in chunk:
            raise messages.binary_file(verb, display)
        data += chunk
        if checked == len(data) - len(chunk) and chunk.isascii():
            checked = len(data)  # nothing pending before it, and ASCII is whole
        else:
            checked = _check_from(data, checked, not chunk, verb, display)
        if not chunk:
            return data


def _check_from(data: bytearray, start: int, final: bool, verb: messages.Verb, display: str) -> int:
    """Check `data` from `start` as strict UTF-8; returns where an unfinished character at
    its end begins (`len(data)` when none; with `final` that character is refused too).

    Raises:
        FsError: `FS_NOT_TEXT` (``invalid UTF-8 text``).
    """
    size, pos = len(data), start
    # Released before returning: the caller grows `data`, which an open view forbids.
    with memoryview(data) as view:
        try:
            while pos < size:
                end = min(pos + CHECK_SLICE, size)
                with view[pos:end] as piece:
                    _, used = codecs.utf_8_decode(piece, "strict", final and end == size)
                pos += used
                if end == size:
                    break  # all of it, or an unfinished character the next chunk completes
        except UnicodeDecodeError as exc:
            raise messages.invalid_utf8(verb, display) from exc
    return pos


COMPARE_CHUNK = 256 * 1024
"""Bytes `LazyContent.holds` reads and compares at a time, in a buffer each thread keeps."""

_scratch = threading.local()


def _chunks_from_start(fd: int) -> Iterator[memoryview]:
    """The open file's bytes from its start to its end, a chunk at a time, each read into
    the calling thread's scratch buffer over the one before (valid until the next)."""
    buffer: bytearray | None = getattr(_scratch, "buffer", None)
    if buffer is None:
        buffer = _scratch.buffer = bytearray(COMPARE_CHUNK)
    view = memoryview(buffer)
    at = 0
    while got := os.preadv(fd, (view,), at):
        yield view[:got]
        at += got


class LazyContent:
    """The bytes of an open file, read on first call and kept: the version check and the
    prior text share one read."""

    def __init__(self, fd: int, size_hint: int) -> None:
        self._fd = fd
        self._size_hint = size_hint
        self._data: bytes | bytearray | None = None

    def __call__(self) -> bytes | bytearray:
        if self._data is None:
            self._data = read_fd(self._fd, self._size_hint)
        return self._data

    def holds(self, parts: Sequence[bytes]) -> bool:
        """Whether the file holds exactly the bytes of `parts` (what this provider published
        there): compared with what was read, or else read from the start into this thread's
        scratch buffer a chunk at a time and compared in place, keeping nothing
        (`equal_in_place`). Why: reading 1 MB into fresh memory to compare it cost ~0.3 ms
        (its pages faulted in, then unmapped), a sixth of a 1 MB write."""
        if self._data is not None or not hasattr(os, "preadv"):
            return equal_in_place(parts, (self(),))
        return equal_in_place(parts, _chunks_from_start(self._fd))

    def head(self, size: int) -> bytes:
        """The first `size` bytes (read on their own: the content may never be read whole)."""
        if self._data is not None:
            return bytes(self._data[:size])
        return os.pread(self._fd, size, 0)

    def checked(self, verb: messages.Verb, display: str) -> bytes | bytearray:
        """The content, checked as text. Read now, it fails at the first binary or
        non-UTF-8 chunk: an edit of a 5 GiB sparse file must not load 5 GiB of NULs first.

        Raises:
            FsError: `FS_NOT_TEXT`.
        """
        if self._data is None and self._size_hint <= WHOLE_CHECK_BYTES:
            # Small enough to read whole first: one read and a check in cache-sized slices
            # cost half what growing a buffer chunk by chunk costs (its fresh pages fault);
            # a NUL or a bad sequence is refused all the same. One byte more than the fstat
            # said tells a file that grew since: it gets the chunked check (a short read of
            # a regular file is its end).
            whole = os.read(self._fd, self._size_hint + 1)
            if len(whole) <= self._size_hint:
                self._data = whole
            else:
                os.lseek(self._fd, 0, os.SEEK_SET)
        if self._data is None:
            try:
                self._data = read_checked_fd(self._fd, verb, display)
            except FsError:
                # The file's offset is past the refused chunk: a caller that goes on to
                # read it in another encoding (SPEC §12) gets all of it.
                os.lseek(self._fd, 0, os.SEEK_SET)
                raise
        else:
            check_text(self._data, verb, display)
        return self._data


def read_bytes_capped(key: str, display: str, max_bytes: int, guards: LocalGuards) -> bytes:
    """`read_bytes`: at most `max_bytes`, refusing a larger (or growing) file whole."""
    data = read_bytes_within(key, display, max_bytes, guards, None)
    assert data is not None
    return data


def read_bytes_within(
    key: str, display: str, max_bytes: int, guards: LocalGuards, within: int | None
) -> bytes | None:
    """`read_bytes_capped`, or None (nothing read) when the file is larger than `within`:
    what a caller on the event loop reads at once, leaving larger files to a thread."""
    opened = open_regular(key, "read", display, guards)
    fd = opened.fd
    try:
        if within is not None and opened.info.st_size > within:
            return None
        if opened.info.st_size > max_bytes:
            raise messages.too_large("read", display, max_bytes)
        # Ask for one byte more than allowed: a file that grew meanwhile is refused, never
        # returned truncated.
        chunks: list[bytes] = []
        left = max_bytes + 1
        with map_os_errors("read", display):
            while left > 0:
                # Sized by the file, not the cap: a 1 MiB read buffer for a 1 KiB file costs.
                want = min(left, max(opened.info.st_size + 1, 4096))
                chunk = os.read(fd, want)
                if not chunk:
                    break
                chunks.append(chunk)
                left -= len(chunk)
                if len(chunk) < want:
                    break  # a short read of a regular file is its end: no read to hear EOF
    finally:
        os.close(fd)
    if left <= 0:
        raise messages.too_large("read", display, max_bytes)
    return b"".join(chunks)


WRITE_PIECE = 256 * 1024
"""Bytes a digested `write_all` hashes and then writes at a time: the piece is still in the
CPU's cache when it is written, so the digest is no second pass over the content."""


def _iov_max() -> int:
    """The platform's ``IOV_MAX`` (at most 1024); 16, what POSIX promises, when it says
    nothing."""
    try:
        found = os.sysconf("SC_IOV_MAX")
    except (AttributeError, ValueError, OSError):
        return 16
    return min(found, 1024) if found > 0 else 16


_IOV_MAX = _iov_max()
"""Most pieces one `writev` takes."""


def write_all(fd: int, data: bytes | EncodedText, hasher: Hasher | None = None) -> None:
    """Write all of `data` (bytes, or every piece of an encoded text) to `fd` (a `write`
    may be partial); with `hasher`, each piece is hashed right before it is written.
    Without one, the pieces go in one `writev` (`_write_parts`)."""
    parts = data.parts if isinstance(data, EncodedText) else (data,)
    if hasher is None:
        _write_parts(fd, parts)
        return
    for part in parts:
        view = memoryview(part)
        while view:
            piece = view[:WRITE_PIECE]
            hasher.update(piece)
            while piece:
                written = os.write(fd, piece)
                piece = piece[written:]
            view = view[WRITE_PIECE:]


def _write_parts(fd: int, parts: Sequence[bytes | bytearray | memoryview]) -> None:
    """Write `parts` in order with as few `writev` calls as the platform allows, resuming
    after a partial one where it stopped."""
    if len(parts) == 1 or not hasattr(os, "writev"):
        for part in parts:
            view = memoryview(part)
            while view:
                view = view[os.write(fd, view) :]
        return
    pending = [memoryview(part).cast("B") for part in parts]
    at = 0
    while at < len(pending):
        written = os.writev(fd, pending[at : at + _IOV_MAX])
        if not written:  # never for a regular file (an error instead): no endless loop
            raise OSError(errno.EIO, "writev wrote nothing")
        while at < len(pending) and written >= pending[at].nbytes:
            written -= pending[at].nbytes
            at += 1
        if written:
            pending[at] = pending[at][written:]


def read_head(key: str, display: str, size: int, guards: LocalGuards) -> bytes:
    """`read_head`: the first `size` bytes of the regular file, never more (one `pread`
    per short read until `size` or the end)."""
    opened = open_regular(key, "read", display, guards)
    fd = opened.fd
    try:
        chunks: list[bytes] = []
        got = 0
        with map_os_errors("read", display):
            while got < size:
                chunk = os.pread(fd, size - got, got)
                if not chunk:
                    break
                chunks.append(chunk)
                got += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
