"""`LocalFileSystem.walk`: ``os.scandir`` directory by directory, never through a link.

Each directory is opened with ``O_NOFOLLOW`` and its kernel path must be exactly the one
expected below the (guarded) root, so a directory swapped for a link to elsewhere while the
walk runs is skipped, never listed. A file's size and time come from the one ``lstat``
``scandir`` makes for it; directories and links need none. A directory is listed on the
event loop until it proves large, then in a worker thread.
"""

from __future__ import annotations

import os
import stat as st_mode
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from anyio import to_thread
from anyio.lowlevel import checkpoint

from dsh_fs.fs import FsFileType, FsWalkEntry, messages

from .._oserrors import map_os_errors
from ._guards import LocalGuards
from ._open import fd_path, file_type

__all__ = ["INLINE_ENTRIES", "walk"]

INLINE_ENTRIES = 256
"""Entries of one directory listed on the event loop before the rest goes to a thread."""

_OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


@asynccontextmanager
async def walk(
    key: str,
    display: str,
    guards: LocalGuards,
    descend: Callable[[str], bool] | None,
    closed: Callable[[], bool],
) -> AsyncIterator[AsyncIterator[list[FsWalkEntry]]]:
    """Walk the directory whose real path is `key` (see `dsh_fs.fs.FileSystem.walk`)."""
    with map_os_errors("search", display):
        info = os.stat(key)
        if not st_mode.S_ISDIR(info.st_mode):
            raise messages.not_a_directory("search", display)
        fd = os.open(key, _OPEN_DIR)
    try:
        real = fd_path(fd, key)
        guards.check_open("search", display, real)
    finally:
        os.close(fd)
    batches = _batches(real, display, descend, closed)
    try:
        yield batches
    finally:
        await batches.aclose()


async def _batches(
    real_root: str,
    display: str,
    descend: Callable[[str], bool] | None,
    closed: Callable[[], bool],
) -> AsyncGenerator[list[FsWalkEntry], None]:
    pending = [""]
    seen: set[tuple[int, int]] = set()
    while pending:
        rel = pending.pop()
        if rel and descend is not None and not descend(rel):
            continue
        if closed():
            raise messages.aborted("search", display)
        # Small directories are listed on the loop: let other tasks (and a deadline) in.
        await checkpoint()
        listing = _Listing(real_root, rel, seen)
        if not listing.open():
            continue
        try:
            listing.scan(INLINE_ENTRIES)
            if not listing.done:
                await to_thread.run_sync(listing.scan, None)
        finally:
            listing.close()
        listing.entries.sort(key=lambda entry: entry.path)
        listing.subdirectories.sort()
        pending.extend(reversed(listing.subdirectories))
        if listing.entries:
            yield listing.entries


class _Listing:
    """One directory's children, read by ``scandir`` on an ``O_NOFOLLOW`` descriptor."""

    __slots__ = ("_fd", "_rel", "_root", "_scan", "_seen", "done", "entries", "subdirectories")

    def __init__(self, root: str, rel: str, seen: set[tuple[int, int]]) -> None:
        self._root = root
        self._rel = rel
        self._seen = seen
        self._fd = -1
        self._scan: Any = None  # os.scandir's iterator (its type is private in typeshed)
        self.entries: list[FsWalkEntry] = []
        self.subdirectories: list[str] = []
        self.done = False

    def open(self) -> bool:
        """Open the directory; False when it is gone, refused, swapped for a link, or a
        directory already listed (a bind mount looping back)."""
        expected = f"{self._root}/{self._rel}" if self._rel else self._root
        if self._root == "/" and self._rel:
            expected = "/" + self._rel
        try:
            self._fd = os.open(expected, _OPEN_DIR)
            info = os.fstat(self._fd)
            identity = (info.st_dev, info.st_ino)
            if identity in self._seen or fd_path(self._fd, expected) != expected:
                return False
            self._seen.add(identity)
            self._scan = os.scandir(self._fd)
        except OSError:
            return False
        return True

    def scan(self, limit: int | None) -> None:
        """Read up to `limit` more entries (all of them when None)."""
        assert self._scan is not None
        prefix = f"{self._rel}/" if self._rel else ""
        count = 0
        for entry in self._scan:
            try:
                if entry.is_symlink():
                    kind, size, mtime = FsFileType.SYMLINK, 0, None
                elif entry.is_dir(follow_symlinks=False):
                    kind, size, mtime = FsFileType.DIRECTORY, 0, None
                    self.subdirectories.append(prefix + entry.name)
                else:
                    info = entry.stat(follow_symlinks=False)
                    kind, size, mtime = file_type(info.st_mode), info.st_size, info.st_mtime_ns
            except OSError:
                continue  # removed while listing
            self.entries.append(
                FsWalkEntry(path=prefix + entry.name, type=kind, size=size, mtime_ns=mtime)
            )
            count += 1
            if limit is not None and count >= limit:
                return
        self.done = True

    def close(self) -> None:
        if self._scan is not None:
            self._scan.close()
        if self._fd >= 0:
            os.close(self._fd)
