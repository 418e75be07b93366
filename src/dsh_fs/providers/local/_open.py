"""Opening regular files without blocking, and what the kernel says about an open descriptor.

Synchronous helpers: they run in worker threads unless a caller says otherwise.
"""

from __future__ import annotations

import os
import stat as st_mode
from dataclasses import dataclass

from dsh_fs._platform import descriptor_path
from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import FsFileType, messages

from .._oserrors import os_error
from ._guards import LocalGuards
from ._realpath import real_path

__all__ = [
    "OPEN_READ",
    "Opened",
    "fd_path",
    "file_type",
    "open_existing",
    "open_regular",
    "unchanged",
]

OPEN_READ = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
"""O_NONBLOCK: opening a FIFO without a writer returns at once (then fstat refuses it)."""


@dataclass(frozen=True, slots=True)
class Opened:
    """A regular file opened for reading."""

    fd: int
    """The descriptor (the caller closes it)."""
    info: os.stat_result
    """Its `fstat`: the authority on what was opened."""
    path: str
    """The kernel's path of the opened file (`fd_path`), for the guards (just the key when
    the guards confine nothing and the open is not a write's)."""


def file_type(mode: int) -> FsFileType:
    """What a stat mode names (regular file, directory, or other)."""
    if st_mode.S_ISREG(mode):
        return FsFileType.FILE
    if st_mode.S_ISDIR(mode):
        return FsFileType.DIRECTORY
    return FsFileType.OTHER


def unchanged(fd: int, info: os.stat_result) -> bool:
    """Whether the open file still has the stat it was opened with (nothing wrote meanwhile)."""
    now = os.fstat(fd)
    return (now.st_size, now.st_mtime_ns, now.st_ctime_ns) == (
        info.st_size,
        info.st_mtime_ns,
        info.st_ctime_ns,
    )


def fd_path(fd: int, fallback: str) -> str:
    """The kernel's current path of the open file or directory `fd` (Linux `/proc`, macOS
    `F_GETPATH`: `dsh_fs._platform.descriptor_path`), or the real path of `fallback` where
    the kernel can't tell, once that path is seen to lead to `fd` (else `UNVERIFIED`)."""
    kernel = descriptor_path(fd)
    if kernel is not None:
        return kernel
    real = real_path(os.path.abspath(fallback))
    return real if _names(real, fd) else UNVERIFIED


UNVERIFIED = "\0unverified"
"""What `fd_path` gives when neither the kernel nor the path can say where `fd` is: lies
inside no directory (no path holds a NUL), so every fence refuses it."""

_STEP = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _names(real: str, fd: int) -> bool:
    """Whether the canonical path `real` leads, without following a link, to the file or
    directory open as `fd` (its device and inode): the portable stand-in for the kernel's
    answer. Each directory on the way is opened, so a component swapped meanwhile for a
    link fails the check instead of redirecting it."""
    names = [name for name in real.split("/") if name]
    try:
        target = os.fstat(fd)
        if not names:
            found = os.stat("/")
        else:
            at = os.open("/", _STEP)
            try:
                for name in names[:-1]:
                    step = os.open(name, _STEP, dir_fd=at)
                    os.close(at)
                    at = step
                found = os.stat(names[-1], dir_fd=at, follow_symlinks=False)
            finally:
                os.close(at)
    except OSError:
        return False
    return (found.st_dev, found.st_ino) == (target.st_dev, target.st_ino)


def open_regular(
    key: str,
    verb: messages.Verb,
    display: str,
    guards: LocalGuards,
    dir_fd: int | None = None,
    *,
    checked: bool = False,
) -> Opened:
    """Open a regular file to read its content.

    A stat first keeps devices from being opened at all (`checked`: the caller's own stat
    of `key` just found a regular file, and is not repeated); O_NONBLOCK keeps a FIFO
    swapped in meanwhile from blocking, and the `fstat` of the open fd is the authority.
    Before a byte is read, `guards.check_open` sees the kernel's path of what was opened,
    unless the open is a write's (a write reads its prior file only to compare it and to
    report it, which `guards.may_reveal` decides). With `dir_fd`, `key`'s name is opened in
    that directory.

    Raises:
        FsError: `FS_NOT_REGULAR_FILE`, the guards' refusal, or the mapped `OSError`.
    """
    path = key if dir_fd is None else os.path.basename(key)
    # `os_error` in an except clause, as `map_os_errors` maps: the small read's every call
    # comes here, and a `try` costs nothing until something is raised.
    try:
        if not checked and not st_mode.S_ISREG(os.stat(path, dir_fd=dir_fd).st_mode):
            raise messages.not_regular_file(verb, display)
        fd = os.open(path, OPEN_READ, dir_fd=dir_fd)
    except OSError as exc:
        raise os_error(exc, verb, display) from exc
    try:
        try:
            info = os.fstat(fd)
        except OSError as exc:
            raise os_error(exc, verb, display) from exc
        if not st_mode.S_ISREG(info.st_mode):
            raise messages.not_regular_file(verb, display)
        # The kernel's path is for guards that can refuse something; others never look.
        looks = (guards.confined or verb == "write") and not guards.passive
        opened = fd_path(fd, key) if looks else key
        if verb != "write":
            guards.check_open(verb, display, opened)
    except BaseException:
        os.close(fd)
        raise
    return Opened(fd, info, opened)


def open_existing(
    key: str,
    verb: messages.Verb,
    display: str,
    guards: LocalGuards,
    dir_fd: int | None = None,
) -> Opened | None:
    """`open_regular`, or None when nothing is at `key`."""
    try:
        return open_regular(key, verb, display, guards, dir_fd)
    except FsError as error:
        if error.code is FsErrorCode.NOT_FOUND and isinstance(error.__cause__, FileNotFoundError):
            return None
        raise
