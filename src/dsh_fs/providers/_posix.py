"""The local provider's system calls: opening regular files safely, reading, listing,
creating parents, the directory lock, and what a staged copy must carry over.

Synchronous helpers: they run in worker threads unless a caller says otherwise. Every
`OSError` they let through is translated by the caller with `_oserrors.translate`.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat as st_mode
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Literal

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import FsDirEntry, FsFileType, messages

from ._oserrors import translate
from ._text import ChunkDecoder, decode_text

__all__ = [
    "OPEN_READ",
    "OPEN_STAGED",
    "READ_CHUNK_SIZE",
    "LazyContent",
    "Verb",
    "directory_lock",
    "fd_path",
    "file_type",
    "keep_owner_and_mode",
    "link_no_replace",
    "list_dir",
    "make_parents",
    "open_existing",
    "open_guard",
    "open_regular",
    "process_umask",
    "read_bytes_capped",
    "read_fd",
    "read_text_fd",
    "too_large",
    "unchanged",
    "writable_in_place",
    "write_all",
]

READ_CHUNK_SIZE = 1024 * 1024
"""Largest single `read` of a whole-file text read (an edit's prior content)."""

Verb = Literal["read", "write", "edit"]

open_guard: ContextVar[Callable[[str, Verb, str], None] | None] = ContextVar(
    "dsh_fs_open_guard", default=None
)
"""A hook for wrappers (the sandbox): ``guard(display, verb, opened)`` runs right after
`open_regular` opened a file, with the kernel's path of what was opened (`fd_path`), before
a byte is read. Raising an `FsError` refuses the read (the fd is closed). A path swapped
between a wrapper's check and the `open` is caught here. A context variable, so only calls
made through the wrapper are checked (anyio copies it into worker threads)."""

OPEN_READ = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
"""O_NONBLOCK: opening a FIFO without a writer returns at once (then fstat refuses it)."""


OPEN_STAGED = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class LazyContent:
    """The bytes of an open file, read on first call and kept: the version check and the
    prior text share one read."""

    def __init__(self, fd: int, size_hint: int) -> None:
        self._fd = fd
        self._size_hint = size_hint
        self._data: bytes | None = None

    def __call__(self) -> bytes:
        if self._data is None:
            self._data = read_fd(self._fd, self._size_hint)
        return self._data

    def text(self, verb: Verb, display: str) -> str:
        """The content as text. Read now, it fails at the first binary or non-UTF-8 chunk:
        an edit of a 5 GiB sparse file must not load 5 GiB of NULs first."""
        if self._data is not None:
            return decode_text(self._data, verb, display)
        return read_text_fd(self._fd, self._size_hint, verb, display)


def unchanged(fd: int, info: os.stat_result) -> bool:
    """Whether the open file still has the stat it was opened with (nothing wrote meanwhile)."""
    now = os.fstat(fd)
    return (now.st_size, now.st_mtime_ns, now.st_ctime_ns) == (
        info.st_size,
        info.st_mtime_ns,
        info.st_ctime_ns,
    )


def file_type(mode: int) -> FsFileType:
    """What a stat mode names (regular file, directory, or other)."""
    if st_mode.S_ISREG(mode):
        return FsFileType.FILE
    if st_mode.S_ISDIR(mode):
        return FsFileType.DIRECTORY
    return FsFileType.OTHER


def process_umask() -> int:
    """The process umask, read without changing it where Linux lets us."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    # Not Linux: the set-and-restore dance (briefly racy with threads creating files).
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def open_regular(
    key: str, verb: Verb, display: str, dir_fd: int | None = None
) -> tuple[int, os.stat_result]:
    """Open a regular file for reading and return the fd with its `fstat`.

    A stat first keeps devices from being opened at all; O_NONBLOCK keeps a FIFO swapped in
    meanwhile from blocking, and the `fstat` of the open fd is the authority. With `dir_fd`,
    `key`'s name is opened in that directory.
    """
    path = key if dir_fd is None else os.path.basename(key)
    try:
        if not st_mode.S_ISREG(os.stat(path, dir_fd=dir_fd).st_mode):
            raise messages.not_regular_file(verb, display)
        fd = os.open(path, OPEN_READ, dir_fd=dir_fd)
    except OSError as exc:
        raise translate(exc, verb, display) from exc
    try:
        info = os.fstat(fd)
        if not st_mode.S_ISREG(info.st_mode):
            raise messages.not_regular_file(verb, display)
        guard = open_guard.get()
        if guard is not None:
            guard(display, verb, fd_path(fd, key))
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def open_existing(
    key: str, verb: Verb, display: str, dir_fd: int | None = None
) -> tuple[int, os.stat_result] | None:
    """`open_regular`, or None when nothing is at `key`."""
    try:
        return open_regular(key, verb, display, dir_fd)
    except FsError as error:
        if error.code is FsErrorCode.NOT_FOUND and isinstance(error.__cause__, FileNotFoundError):
            return None
        raise


def read_fd(fd: int, size_hint: int) -> bytes:
    """The rest of the open file's bytes (`size_hint` sizes the first read)."""
    chunks: list[bytes] = []
    want = max(size_hint + 1, 64 * 1024)
    while True:
        chunk = os.read(fd, want)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def read_text_fd(fd: int, size_hint: int, verb: Verb, display: str) -> str:
    """The rest of the file as strict UTF-8 text, read and checked chunk by chunk."""
    decoder = ChunkDecoder(verb, display)
    parts: list[str] = []
    want = min(max(size_hint + 1, 64 * 1024), READ_CHUNK_SIZE)
    while True:
        chunk = os.read(fd, want)
        parts.append(decoder.decode(chunk, not chunk))
        if not chunk:
            return "".join(parts)


def read_bytes_capped(key: str, display: str, max_bytes: int) -> bytes:
    """`read_bytes`: at most `max_bytes`, refusing a larger (or growing) file whole."""
    fd, info = open_regular(key, "read", display)
    try:
        if info.st_size > max_bytes:
            raise too_large(display, max_bytes)
        # Ask for one byte more than allowed: a file that grew meanwhile is refused, never
        # returned truncated.
        chunks: list[bytes] = []
        left = max_bytes + 1
        while left > 0:
            chunk = os.read(fd, left)
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        raise translate(exc, "read", display) from exc
    finally:
        os.close(fd)
    if left <= 0:
        raise too_large(display, max_bytes)
    return b"".join(chunks)


def too_large(display: str, max_bytes: int) -> FsError:
    """`FS_TOO_LARGE` for a read over `max_bytes`."""
    return FsError(
        FsErrorCode.TOO_LARGE,
        f'cannot read "{display}": larger than {max_bytes} bytes',
        path=display,
    )


def list_dir(key: str, display: str) -> list[FsDirEntry]:
    """The directory's children by name, with `lstat` metadata (no content, no recursion)."""
    entries: list[FsDirEntry] = []
    try:
        with os.scandir(key) as scan:
            for entry in scan:
                try:
                    info = entry.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue  # removed while listing
                kind = (
                    FsFileType.SYMLINK if st_mode.S_ISLNK(info.st_mode) else file_type(info.st_mode)
                )
                entries.append(FsDirEntry(name=entry.name, type=kind, size=info.st_size))
    except OSError as exc:
        raise translate(exc, "read", display) from exc
    entries.sort(key=lambda e: e.name)
    return entries


def make_parents(parent: str) -> None:
    """`os.makedirs(parent, exist_ok=True)` without recursion: `makedirs` recurses once per
    missing component, so a path of thousands of them was a `RecursionError`, not an errno."""
    pending = [parent]
    while pending:
        path = pending[-1]
        try:
            os.mkdir(path)
        except FileNotFoundError:
            above = os.path.dirname(path)
            if above == path:
                raise
            pending.append(above)
            continue
        except FileExistsError as exc:
            if not os.path.isdir(path):
                raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), path) from exc
        pending.pop()


@contextmanager
def directory_lock(parent: str) -> Iterator[int]:
    """Hold an exclusive `flock` on `parent` (an O_RDONLY fd); yields the fd.

    Cooperating processes serialize their mutations of one directory here without any
    lock file. Everything a mutation then does in the directory (open the prior file,
    stage, publish, fsync) goes through this fd, so it lands in the directory that was
    locked and checked even if its path is swapped meanwhile.

    Raises:
        OSError: the directory can't be opened for reading (missing, not a directory,
            permission denied); the caller translates it.
    """
    fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield fd
    finally:
        os.close(fd)  # closing the last fd of the open file description releases the lock


def write_all(fd: int, data: bytes) -> None:
    """Write all of `data` to `fd` (a `write` may be partial)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def keep_owner_and_mode(fd: int, prior: os.stat_result) -> None:
    """Give the staged file the prior file's owner (when allowed) and permission bits."""
    if (prior.st_uid, prior.st_gid) != (os.geteuid(), os.getegid()):
        try:
            os.fchown(fd, prior.st_uid, prior.st_gid)
        except OSError:
            with contextlib.suppress(OSError):  # not root: the group alone, if we belong to it
                os.fchown(fd, -1, prior.st_gid)
    # After fchown, which clears set-id bits.
    os.fchmod(fd, st_mode.S_IMODE(prior.st_mode))


def link_no_replace(staged: str, stage_fd: int, name: str, dir_fd: int, display: str) -> None:
    """Publish `staged` as `name` only if nothing is there; a hard link never replaces."""
    try:
        os.link(staged, name, src_dir_fd=stage_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
    except FileExistsError as exc:
        raise messages.overwrite_unobserved(display) from exc


def writable_in_place(name: str, dir_fd: int) -> bool:
    """Whether this process could write the file `name` in place (its permission bits, for
    the effective ids; root may). A replace by rename needs only the directory's
    permission: asking this keeps it from overriding a read-only file."""
    return os.access(name, os.W_OK, dir_fd=dir_fd, effective_ids=True)


def fd_path(fd: int, fallback: str) -> str:
    """The kernel's current path of the open file or directory `fd` (Linux `/proc`), or
    the real path of `fallback` where `/proc` can't tell."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return os.path.realpath(fallback)
