"""Directories: listing one (whole, or its first entries), creating missing parents, and the
cross-process directory lock.

Synchronous helpers: they run in worker threads unless a caller says otherwise.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat as st_mode
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import islice

from dsh_fs._platform import parent_open_flag
from dsh_fs.fs import FsDirEntry, FsDirListing, FsFileType

from .._oserrors import map_os_errors
from ._open import file_type

__all__ = ["directory_lock", "list_dir", "list_dir_first", "make_parents"]

_OPEN_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC

_OPEN_PARENT = os.O_DIRECTORY | os.O_CLOEXEC
"""A descriptor to create and open names in (with `parent_open_flag`): O_PATH (Linux)
needs no read permission, as
`mkdir` by path needs none, so a write-only ancestor works as it did."""

NAMES_PER_PASS = 4096
"""Names `list_dir_first` takes from the directory at once before keeping the first ones."""

SPARE_NAMES = 16
"""Names kept beyond the limit, to stand in for entries removed before their `lstat`."""


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


def list_dir_first(key: str, display: str, limit: int) -> FsDirListing:
    """The first `limit` children by name with `lstat` metadata, and how many there are.

    Every name is read (the count and the order need them) but only the first ones are
    kept and looked at: one `lstat` per shown entry instead of one per child, and memory
    for `limit` names plus one pass of `NAMES_PER_PASS`, whatever the directory holds.
    """
    with map_os_errors("list", display):
        fd = os.open(key, _OPEN_DIRECTORY)
    try:
        with map_os_errors("list", display):
            names, total = _first_names(fd, limit + SPARE_NAMES)
            entries: list[FsDirEntry] = []
            for name in names:
                if len(entries) >= limit:
                    break
                try:
                    info = os.stat(name, dir_fd=fd, follow_symlinks=False)
                except FileNotFoundError:
                    total -= 1  # removed while listing
                    continue
                kind = (
                    FsFileType.SYMLINK if st_mode.S_ISLNK(info.st_mode) else file_type(info.st_mode)
                )
                entries.append(
                    FsDirEntry(name=name, type=kind, size=info.st_size, mtime_ns=info.st_mtime_ns)
                )
    finally:
        os.close(fd)
    return FsDirListing(entries=tuple(entries), total=total)


def _first_names(fd: int, keep: int) -> tuple[list[str], int]:
    """The `keep` smallest names in the directory `fd`, sorted, and how many names it has."""
    first: list[str] = []
    total = 0
    with os.scandir(fd) as scan:
        while True:
            names = [entry.name for entry in islice(scan, NAMES_PER_PASS)]
            if not names:
                return first, total
            total += len(names)
            if len(first) >= keep:
                last = first[-1]
                names = [name for name in names if name < last]
            if names:
                first += names
                first.sort()
                del first[keep:]


def make_parents(parent: str, check: Callable[[int, str], None]) -> None:
    """Create the missing directories of `parent`, each one only where `check` allowed it.

    The deepest existing ancestor is opened by path; below it, each missing component is made
    with `mkdirat` in the descriptor of the directory above it, after ``check(fd, path)``
    looked at that descriptor (the caller asks the guards about its kernel path), and is then
    opened through it. So a directory is only ever created in a directory the guards saw,
    whatever a racing process swaps meanwhile. A loop, not `os.makedirs`, which recurses once
    per missing component (a path of thousands of them was a `RecursionError`).

    Raises:
        OSError: a component can't be opened or created, or exists and is not a directory
            (`NotADirectoryError`).
        FsError: `check`'s refusal; nothing was created in that directory.
    """
    missing: list[str] = []
    path = parent
    while True:
        try:
            fd = os.open(path, _OPEN_PARENT | parent_open_flag())
            break
        except FileNotFoundError:
            above, name = os.path.split(path)
            if above == path:
                raise
            missing.append(name)
            path = above
    try:
        for name in reversed(missing):
            check(fd, path)
            # Made meanwhile by another writer: opened (and checked) like one we made.
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, dir_fd=fd)
            child = os.open(name, _OPEN_PARENT | parent_open_flag(), dir_fd=fd)
            os.close(fd)
            fd, path = child, os.path.join(path, name)
    finally:
        os.close(fd)


@contextmanager
def directory_lock(parent: str, missing: Callable[[], None] | None = None) -> Iterator[int]:
    """Hold an exclusive `flock` on `parent` (an O_RDONLY fd); yields the fd. With
    `missing`, a `parent` that is not there is made by calling it (`make_parents`: each
    directory in one the guards saw), then opened.

    Cooperating processes serialize their mutations of one directory here without any
    lock file. Everything a mutation then does in the directory (open the prior file,
    stage, publish, fsync) goes through this fd, so it lands in the directory that was
    locked and checked even if its path is swapped meanwhile.

    Raises:
        OSError: the directory can't be opened for reading (missing, not a directory,
            permission denied); the caller maps it.
    """
    try:
        fd = os.open(parent, _OPEN_DIRECTORY)
    except FileNotFoundError:
        if missing is None:
            raise
        # Made only when the lock's own open finds nothing: an existing parent costs no
        # walk of its own (two system calls of every write, issue 44).
        missing()
        fd = os.open(parent, _OPEN_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield fd
    finally:
        os.close(fd)  # closing the last fd of the open file description releases the lock
