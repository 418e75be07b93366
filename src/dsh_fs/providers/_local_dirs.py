"""Directories: listing one, creating missing parents, and the cross-process directory lock.

Synchronous helpers: they run in worker threads unless a caller says otherwise.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat as st_mode
from collections.abc import Iterator
from contextlib import contextmanager

from dsh_fs.fs import FsDirEntry, FsFileType

from ._local_open import file_type
from ._oserrors import map_os_errors

__all__ = ["directory_lock", "list_dir", "make_parents"]


def list_dir(key: str, display: str) -> list[FsDirEntry]:
    """The directory's children by name, with `lstat` metadata (no content, no recursion)."""
    entries: list[FsDirEntry] = []
    with map_os_errors("list", display), os.scandir(key) as scan:
        for entry in scan:
            try:
                info = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue  # removed while listing
            kind = FsFileType.SYMLINK if st_mode.S_ISLNK(info.st_mode) else file_type(info.st_mode)
            entries.append(
                FsDirEntry(name=entry.name, type=kind, size=info.st_size, mtime_ns=info.st_mtime_ns)
            )
    entries.sort(key=lambda e: e.name)
    return entries


def make_parents(parent: str) -> None:
    """`os.makedirs(parent, exist_ok=True)` without recursion: `makedirs` recurses once per
    missing component, so a path of thousands of them was a `RecursionError`, not an errno.

    Raises:
        OSError: a component can't be created, or exists and is not a directory.
    """
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
            permission denied); the caller maps it.
    """
    fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield fd
    finally:
        os.close(fd)  # closing the last fd of the open file description releases the lock
