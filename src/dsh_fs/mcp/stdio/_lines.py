"""The stdio transport: lines of bytes over stdin/stdout, without worker threads or the SDK.

The SDK's `stdio_server` does three thread hops per exchange (readline, write, flush), a
large share of a small read's round trip, and its reader thread, blocked on a terminal,
kept Ctrl-C from stopping the server. Here the event loop waits for readiness on pipes,
sockets and terminals (a regular file or /dev/null is always ready), so cancellation stops
the transport at once.

A line longer than the size limit is never held whole: its bytes are skipped up to its
newline, keeping only its first and last `SCAN_BYTES` (where its id can be found), so a
100 MiB message costs a few MiB of memory, not five times its size.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

import anyio
import anyio.lowlevel

from dsh_fs._platform import widen_pipe

from .._request_id import SCAN_BYTES, line_id
from .._wire import INVALID_REQUEST, Malformed, Message, parse_line

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "LineReader",
    "LineWriter",
    "Oversized",
    "message_of",
    "stdio_fds",
]

DEFAULT_MAX_MESSAGE_SIZE: Final = 32 << 20
"""Bytes a message (one line) may have. A model writes far less in one call (its whole output
is at most a few hundred KB); a program may write a generated file of 5 MiB or more whatever
its JSON escaping (up to six bytes per character), and serving a message at the limit stays
near three times its size in memory (bench/results.md). A longer line is refused without
being read whole (the SDK's HTTP transport refuses bodies over 4 MiB)."""

_PIPE_SIZE = 1 << 20
"""Bytes read at once, and the capacity asked of the pipes (Linux's default limit for
unprivileged processes, ``/proc/sys/fs/pipe-max-size``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Oversized:
    """A line longer than the limit, kept only at its two ends."""

    size: int
    """Its length in bytes (without the newline)."""
    limit: int
    """The limit it is over."""
    head: bytes
    """Its first `SCAN_BYTES` bytes."""
    tail: bytes
    """Its last `SCAN_BYTES` bytes."""


class _Skipping:
    """The line being skipped: its size so far, its head, and a bounded tail."""

    __slots__ = ("head", "limit", "size", "tail")

    def __init__(self, pieces: list[bytes], size: int, limit: int) -> None:
        self.size = size
        self.limit = limit
        head = b""
        for piece in pieces:
            head += piece[: SCAN_BYTES - len(head)]
            if len(head) >= SCAN_BYTES:
                break
        self.head = head
        self.tail = b""
        for piece in pieces:
            self.add(piece, counted=True)

    def add(self, piece: bytes, *, counted: bool = False) -> None:
        if not counted:
            self.size += len(piece)
        self.tail = (self.tail + piece[-SCAN_BYTES:])[-SCAN_BYTES:]

    def done(self) -> Oversized:
        return Oversized(size=self.size, limit=self.limit, head=self.head, tail=self.tail)


def message_of(line: bytes | Oversized) -> Message | Malformed:
    """The message a line holds, or the error that answers it (a line over the limit is
    refused, to its id when its head or end shows one)."""
    if not isinstance(line, Oversized):
        return parse_line(line)
    return Malformed(
        id=line_id(line.head, line.tail),
        code=INVALID_REQUEST,
        message=f"Request too large: {line.size} bytes, over this server's limit of "
        f"{line.limit} bytes (dsh-fs mcp --max-message-size)",
    )


def _widen_pipe(fd: int) -> None:
    """Ask for a 1 MiB pipe buffer (Linux): a 1 MB `write` then crosses in a few reads and
    wake-ups instead of 16+ of 64 KiB each. Best effort: other systems keep their size."""
    if stat.S_ISFIFO(os.fstat(fd).st_mode):
        widen_pipe(fd, _PIPE_SIZE)


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _waits_for_input(fd: int) -> bool:
    """Whether a read of `fd` can block (a pipe, a socket, a terminal): then the loop waits
    for readiness. A regular file or /dev/null is always ready, and epoll refuses it."""
    return _is_pipe(fd) or os.isatty(fd)


class _Readable:
    """Waits until a non-blocking fd has input.

    On asyncio the fd stays registered with the loop from one wait to the next: anyio's
    `wait_readable` registers and unregisters it per wait (two ``epoll_ctl`` and a future),
    about a quarter of a `ping` round trip (bench/results.md). Input that arrives while
    nobody waits unregisters it (epoll is level-triggered: it would wake every loop turn).
    """

    __slots__ = ("_fd", "_loop", "_waiter")

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._loop: asyncio.AbstractEventLoop | None = None
        self._waiter: asyncio.Future[None] | None = None

    async def wait(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # another backend (trio): the portable wait
            await anyio.wait_readable(self._fd)
            return
        if self._loop is not loop:
            self.close()
            loop.add_reader(self._fd, self._ready)
            self._loop = loop
        self._waiter = loop.create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None

    def _ready(self) -> None:
        if self._waiter is None:
            self.close()
        elif not self._waiter.done():
            self._waiter.set_result(None)

    def close(self) -> None:
        """Unregister the fd (before it is closed)."""
        if self._loop is not None:
            self._loop.remove_reader(self._fd)
            self._loop = None


class LineReader:
    """The lines of `fd`, in batches (everything one read completed); `close` before the fd
    is closed."""

    __slots__ = (
        "_ended",
        "_fd",
        "_limit",
        "_pending",
        "_pending_size",
        "_readable",
        "_skipping",
        "_tries_first",
        "_waits",
    )

    def __init__(self, fd: int, *, limit: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        self._fd = fd
        self._waits = _waits_for_input(fd)
        # A non-blocking pipe is read before waiting: a pipelined request is already there.
        self._tries_first = self._waits and not os.get_blocking(fd)
        self._readable = _Readable(fd)
        self._limit = limit
        # The unfinished line's pieces, joined once its newline arrives: re-joining and
        # re-splitting the whole prefix per read made a 1 MB `write` message quadratic.
        self._pending: list[bytes] = []
        self._pending_size = 0
        self._skipping: _Skipping | None = None
        self._ended = False

    def close(self) -> None:
        """Stop watching the fd (the caller closes it)."""
        self._readable.close()

    async def _chunk(self) -> bytes:
        """The next bytes of the input; empty at its end (a hung-up terminal's EIO too)."""
        waited = not self._tries_first
        while True:
            if not waited:
                await anyio.lowlevel.checkpoint_if_cancelled()
            elif self._tries_first:
                await self._readable.wait()
            elif self._waits:
                await anyio.wait_readable(self._fd)
            else:
                await anyio.lowlevel.checkpoint()
            waited = True
            try:
                return os.read(self._fd, _PIPE_SIZE)
            except BlockingIOError:
                continue
            except OSError as exc:
                if exc.errno == errno.EIO:
                    return b""
                raise

    async def batch(self) -> list[bytes | Oversized]:
        """The next complete lines (blank ones left out); empty once the input has ended.

        A line over the limit comes as an `Oversized` once its newline is read.
        """
        while not self._ended:
            chunk = await self._chunk()
            if not chunk:
                self._ended = True
                return list(self._finish_line(b""))
            lines = list(self._split(chunk))
            if lines:
                return lines
        return []

    def _split(self, chunk: bytes) -> Iterator[bytes | Oversized]:
        start = 0
        while True:
            newline = chunk.find(b"\n", start)
            if newline == -1:
                self._add(chunk[start:] if start else chunk)
                return
            yield from self._finish_line(chunk[start:newline])
            start = newline + 1

    def _add(self, piece: bytes) -> None:
        if not piece:
            return
        if self._skipping is not None:
            self._skipping.add(piece)
            return
        self._pending.append(piece)
        self._pending_size += len(piece)
        if self._pending_size > self._limit:
            self._skipping = _Skipping(self._pending, self._pending_size, self._limit)
            self._pending = []
            self._pending_size = 0

    def _finish_line(self, last: bytes) -> Iterator[bytes | Oversized]:
        """The line that ends with `last`, unless it is blank."""
        if self._skipping is not None:
            self._skipping.add(last)
            yield self._skipping.done()
            self._skipping = None
            return
        if self._pending:
            self._pending.append(last)
            line = b"".join(self._pending)
            self._pending = []
            self._pending_size = 0
        else:
            line = last
        if len(line) > self._limit:
            yield _Skipping([line], len(line), self._limit).done()
        elif line.strip():
            yield line


class LineWriter:
    """Writes whole lines to `fd`; one at a time, each one whole, whoever is cancelled.

    Once the reader is gone (a broken pipe) every write is dropped and `broken` is set.
    """

    __slots__ = ("_busy", "_fd", "_idle", "broken")

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._busy = False
        self._idle: anyio.Event | None = None
        self.broken = False

    async def send(self, data: bytes) -> None:
        """Write `data` (a line, newline included) after any line being written.

        The common case, a line the pipe takes at once, does not yield to the loop.
        """
        while self._busy:
            assert self._idle is not None
            await self._idle.wait()
        if self.broken:
            return
        view = memoryview(data)
        try:
            view = view[os.write(self._fd, view) :]
        except BlockingIOError:
            pass
        except (BrokenPipeError, ConnectionResetError):
            self.broken = True
            return
        if not view:
            return
        self._busy = True
        self._idle = anyio.Event()
        try:
            # A line cut short would corrupt every later message: finish it even when the
            # task writing it is cancelled (a reader that stops reading ends with the pipe).
            with anyio.CancelScope(shield=True):
                while view:
                    await anyio.wait_writable(self._fd)
                    try:
                        view = view[os.write(self._fd, view) :]
                    except BlockingIOError:
                        continue
                    except (BrokenPipeError, ConnectionResetError):
                        self.broken = True
                        return
        finally:
            self._busy = False
            self._idle.set()


@contextlib.contextmanager
def stdio_fds() -> Iterator[tuple[int, int]]:
    """The wire's (input, output) fds: this process's stdin and stdout, moved aside.

    While serving, fds 0 and 1 point at /dev/null and stderr, so stray output from a
    handler or a library cannot corrupt the wire (as the SDK's transport lets it). Pipes
    and sockets are made non-blocking (a terminal is left as it is: its mode is shared with
    the shell) and widened; all of it is undone on exit.
    """
    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)
    saved = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    os.close(null)
    pipes = [fd for fd in (wire_in, wire_out) if _is_pipe(fd)]
    for fd in pipes:
        _widen_pipe(fd)
        os.set_blocking(fd, False)
    try:
        yield wire_in, wire_out
    finally:
        for fd in pipes:
            os.set_blocking(fd, True)
        os.dup2(saved[0], 0)
        os.dup2(saved[1], 1)
        for fd in (*saved, wire_in, wire_out):
            os.close(fd)
