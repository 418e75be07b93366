"""Every system call that is not the same on every POSIX system, behind capability flags.

dsh-fs runs on Linux and macOS (on Windows, inside WSL: importing it elsewhere on Windows
fails here, with that said plainly). What differs, and what each platform does:

=====================  ==============================  ===============================
capability             Linux                           macOS / elsewhere
=====================  ==============================  ===============================
a descriptor's path    ``/proc/self/fd/N`` readlink    ``fcntl(F_GETPATH)``; else the
                                                       real path of the path opened
durability             ``fsync``                       ``fcntl(F_FULLFSYNC)``, else
                                                       ``fsync``
rename, no replace     ``renameat2(RENAME_NOREPLACE)`` a hard link, then an unlink
the umask, unchanged   ``/proc/self/status``           set and restore (racy)
copy in the kernel     ``FICLONE``, ``copy_file_range`` reads and writes
open a parent only     ``O_PATH`` (no read right)      ``O_RDONLY``
pipe buffer size       ``F_SETPIPE_SZ``                the system's default
a confined lookup      ``openat2`` (``RESOLVE_*``;     a walk, one ``readlink`` per
                       Linux 5.6+, via ``syscall``)    component
an inode's generation  ``FS_IOC_GETVERSION``           unknown (None)
=====================  ==============================  ===============================

`CURRENT` says which are used. Setting ``DSH_FS_PLATFORM=portable`` in the environment (or
`force`, for tests) turns every Linux-only one off, so the code the other systems take runs
here too: the test suite runs the conformance and race suites both ways. Only the
providers (and the stdio transport's pipe) call these: the core never does.
"""

from __future__ import annotations

import sys

if sys.platform == "win32":
    # The providers need POSIX descriptor calls (fcntl, openat-style dir_fd): say so plainly,
    # rather than fail later with an ImportError from fcntl.
    raise ImportError(
        "dsh-fs runs on Linux and macOS; on Windows, install and run it inside WSL "
        "(Windows Subsystem for Linux)"
    )

import contextlib
import errno
import fcntl
import functools
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "CURRENT",
    "NATIVE",
    "PORTABLE",
    "RESOLVE_BENEATH",
    "RESOLVE_NO_MAGICLINKS",
    "RESOLVE_NO_SYMLINKS",
    "Capabilities",
    "copy_in_kernel",
    "descriptor_path",
    "force",
    "inode_generation",
    "link_descriptor",
    "open_confined",
    "open_unnamed",
    "parent_open_flag",
    "process_started",
    "process_umask",
    "renameat2",
    "sync",
    "widen_pipe",
]

_LINUX: Final = sys.platform.startswith("linux")

_FICLONE: Final = 0x40049409
"""Linux's ``ioctl`` number for a reflink (``FICLONE``): another system's ioctl of the same
number is something else, so it is only ever sent on Linux."""

_FS_IOC_GETVERSION: Final = 0x80087601
"""Linux's ``ioctl`` number that reads an inode's generation (``_IOR('v', 1, long)``)."""

_GETPATH_BUFFER: Final = 1024
"""``MAXPATHLEN`` on macOS: what ``F_GETPATH`` fills."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Capabilities:
    """Which platform-specific calls dsh-fs uses (False: the portable way)."""

    proc_fd: bool
    """``/proc/self/fd/N`` names an open descriptor's path (Linux)."""
    getpath: bool
    """``fcntl(F_GETPATH)`` names it (macOS)."""
    full_fsync: bool
    """``fcntl(F_FULLFSYNC)`` makes data durable (macOS, where ``fsync`` only reaches the
    drive's cache)."""
    renameat2: bool
    """``renameat2(RENAME_NOREPLACE)`` from libc (Linux, glibc 2.28+)."""
    proc_status: bool
    """``/proc`` tells the umask without changing it (``/proc/self/status``, Linux 4.7+),
    when a process started (``/proc/PID/stat``) and which filesystem a device holds
    (``/proc/self/mountinfo``)."""
    kernel_copy: bool
    """``FICLONE`` and ``copy_file_range`` (Linux)."""
    o_path: bool
    """``O_PATH``: a directory opened to work in needs no read permission (Linux)."""
    pipe_size: bool
    """``F_SETPIPE_SZ`` widens a pipe's buffer (Linux)."""
    o_tmpfile: bool
    """``O_TMPFILE``: an unnamed file in a directory (Linux)."""
    openat2: bool
    """``openat2`` with ``RESOLVE_*`` flags: the kernel confines a lookup in the same call
    that opens (Linux 5.6+; where the kernel or a seccomp filter refuses the system call,
    `open_confined` finds out on its first call and answers None from then on)."""
    generation: bool
    """``FS_IOC_GETVERSION`` reads an inode's generation (Linux: ext4, XFS, btrfs answer;
    tmpfs and overlayfs do not)."""


NATIVE: Final = Capabilities(
    proc_fd=_LINUX,
    getpath=hasattr(fcntl, "F_GETPATH"),
    full_fsync=hasattr(fcntl, "F_FULLFSYNC"),
    renameat2=_LINUX,
    proc_status=_LINUX,
    kernel_copy=_LINUX and hasattr(os, "copy_file_range"),
    o_path=hasattr(os, "O_PATH"),
    pipe_size=hasattr(fcntl, "F_SETPIPE_SZ"),
    o_tmpfile=_LINUX and hasattr(os, "O_TMPFILE"),
    openat2=_LINUX and hasattr(os, "O_PATH"),
    generation=_LINUX,
)
"""What this system has."""

PORTABLE: Final = Capabilities(
    proc_fd=False,
    getpath=False,
    full_fsync=False,
    renameat2=False,
    proc_status=False,
    kernel_copy=False,
    o_path=False,
    pipe_size=False,
    o_tmpfile=False,
    openat2=False,
    generation=False,
)
"""Nothing platform-specific: the code paths a system without Linux's calls takes."""

CURRENT: Capabilities = PORTABLE if os.environ.get("DSH_FS_PLATFORM") == "portable" else NATIVE
"""What is used now: `NATIVE`, or `PORTABLE` with ``DSH_FS_PLATFORM=portable``."""


@contextlib.contextmanager
def force(capabilities: Capabilities) -> Iterator[None]:
    """Use `capabilities` until the block ends (tests: `PORTABLE` on Linux). Only what
    this system has can be used: a flag it lacks stays off."""
    global CURRENT
    previous = CURRENT
    CURRENT = Capabilities(
        **{
            name: getattr(capabilities, name) and getattr(NATIVE, name)
            for name in Capabilities.__dataclass_fields__
        }
    )
    try:
        yield
    finally:
        CURRENT = previous


def descriptor_path(fd: int) -> str | None:
    """The kernel's current path of the open file or directory `fd`, or None where the
    system cannot tell (then only a path can be resolved, which may have changed)."""
    if CURRENT.proc_fd:
        try:
            return os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            return None
    if CURRENT.getpath:  # pragma: no cover - macOS
        try:
            named = fcntl.fcntl(fd, fcntl.F_GETPATH, bytes(_GETPATH_BUFFER))  # type: ignore[attr-defined,unused-ignore]
        except OSError:
            return None
        return os.fsdecode(bytes(named).split(b"\0", 1)[0]) or None
    return None


_TMPFILE_UNSUPPORTED: Final = frozenset({errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL})
"""What ``open(O_TMPFILE)`` fails with where the kernel or the filesystem lacks it."""


def open_unnamed(dir_fd: int) -> int | None:
    """An unnamed file (``O_TMPFILE``, write-only, mode 0600) in the directory `dir_fd`;
    None where the system or that directory's filesystem has none.

    Raises:
        OSError: any other failure of the open (permission, no space, …).
    """
    if not CURRENT.o_tmpfile:
        return None
    try:
        return os.open(".", os.O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in _TMPFILE_UNSUPPORTED:
            return None
        raise


def inode_generation(fd: int) -> int | None:
    """The generation number of the inode open as `fd`, which the filesystem draws when it
    allocates the inode: an inode number used again for a new file or directory comes with
    another one (ext4 and XFS draw it at random). None where the system or the filesystem
    has none."""
    if not CURRENT.generation:
        return None
    try:
        answer = fcntl.ioctl(fd, _FS_IOC_GETVERSION, bytes(8))
    except OSError:
        return None
    # The kernel writes an int (the field is 32 bits wide) at the start of the buffer.
    return int.from_bytes(answer[:4], sys.byteorder)


def link_descriptor(fd: int, name: str, dir_fd: int) -> None:
    """Give the open file `fd` (an `open_unnamed` file) the name `name` in `dir_fd`; a link
    never replaces (`FileExistsError`). Needs `Capabilities.proc_fd` (the descriptor is
    linked through ``/proc/self/fd``, which needs no privilege, unlike ``AT_EMPTY_PATH``).

    Raises:
        OSError: from ``linkat``.
    """
    os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=dir_fd, follow_symlinks=True)


RESOLVE_NO_MAGICLINKS: Final = 0x02
"""``openat2``: fail (ELOOP) rather than follow a "magic link" (``/proc/PID/fd/N``,
``/proc/PID/root``, ...), which jumps to its file without a path the walk could check."""
RESOLVE_NO_SYMLINKS: Final = 0x04
"""``openat2``: fail (ELOOP) at any symbolic link on the way, the last component's too."""
RESOLVE_BENEATH: Final = 0x08
"""``openat2``: fail (EXDEV) when the lookup would leave the directory ``dir_fd`` (``..``
above it, an absolute path or link, a link leading out)."""

_SYS_OPENAT2: Final = 437
"""``openat2``'s system call number: the same on every Linux architecture (a number of
the unified table, Linux 5.6+)."""

_AT_FDCWD: Final = -100


@functools.cache
def _load_openat2() -> Callable[[int, bytes, int, int], int] | None:
    """``openat2`` through libc's ``syscall`` (Python has no ``os.openat2``), or None where
    libc, the kernel or a seccomp filter lacks it; probed once, on first use (``ctypes``
    costs milliseconds to import: a process that never looks a path up never pays it)."""
    import ctypes  # only a confined lookup needs it

    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:  # pragma: no cover - no C library to load
        return None
    syscall = getattr(libc, "syscall", None)
    if syscall is None:  # pragma: no cover - a libc without syscall(2)
        return None
    syscall.restype = ctypes.c_long

    class OpenHow(ctypes.Structure):
        _fields_ = (
            ("flags", ctypes.c_uint64),
            ("mode", ctypes.c_uint64),
            ("resolve", ctypes.c_uint64),
        )

    size = ctypes.c_size_t(ctypes.sizeof(OpenHow))

    @functools.cache
    def how(flags: int, resolve: int) -> Any:
        # One struct per combination, built once: building one costs more than the call.
        return ctypes.byref(OpenHow(flags, 0, resolve))

    number = ctypes.c_long(_SYS_OPENAT2)
    at_cwd = ctypes.c_int(_AT_FDCWD)  # the usual `dir_fd`, converted once

    def openat2(dir_fd: int, path: bytes, flags: int, resolve: int) -> int:
        start = at_cwd if dir_fd == _AT_FDCWD else ctypes.c_int(dir_fd)
        fd: int = syscall(number, start, path, how(flags, resolve), size)  # restype: an int
        if fd < 0:
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code), os.fsdecode(path))
        return fd

    try:
        os.close(openat2(_AT_FDCWD, b"/", os.O_PATH | os.O_CLOEXEC, RESOLVE_NO_MAGICLINKS))
    except OSError:
        return None  # ENOSYS (an older kernel), EPERM (a seccomp filter), ...
    return openat2


def open_confined(path: str, flags: int, resolve: int, dir_fd: int | None = None) -> int | None:
    """`path` opened (``os.open``'s `flags`, ``O_CLOEXEC`` added) by ``openat2`` with the
    ``RESOLVE_*`` bits `resolve`, relative to `dir_fd` (default: the working directory); None
    where ``openat2`` is not used (`Capabilities.openat2`, or the probe failed): the caller
    then looks the path up the portable way.

    Raises:
        OSError: the open failed, or the kernel refused the lookup: ELOOP (a link the
            `resolve` bits forbid), EXDEV (``RESOLVE_BENEATH``: it would leave `dir_fd`),
            EAGAIN (a concurrent rename made the kernel give up: retrying may work).
        ValueError: `path` holds a NUL byte, as for ``os.open``.
    """
    if "\0" in path:
        # A C string ends at the NUL: the kernel would look up a shorter, other path.
        raise ValueError("embedded null byte")
    if not CURRENT.openat2:
        return None
    openat2 = _load_openat2()
    if openat2 is None:
        return None
    return openat2(
        _AT_FDCWD if dir_fd is None else dir_fd, os.fsencode(path), flags | os.O_CLOEXEC, resolve
    )


def sync(fd: int) -> None:
    """Make `fd`'s data (a file's content, a directory's entries) durable: ``fsync``, and
    on macOS ``F_FULLFSYNC`` first, which also flushes the drive's cache (``fsync`` when
    the filesystem refuses it).

    Raises:
        OSError: from ``fsync``.
    """
    if CURRENT.full_fsync:  # pragma: no cover - macOS
        try:
            fcntl.fcntl(fd, fcntl.F_FULLFSYNC)  # type: ignore[attr-defined,unused-ignore]
            return
        except OSError:
            pass
    os.fsync(fd)


@functools.cache
def _load_renameat2() -> Callable[..., int] | None:
    import ctypes  # only a move needs it

    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:  # pragma: no cover - no C library to load
        return None
    function = getattr(libc, "renameat2", None)
    if function is None:  # pragma: no cover - glibc older than 2.28, musl
        return None
    c_int, c_path = ctypes.c_int, ctypes.c_char_p
    function.argtypes = [c_int, c_path, c_int, c_path, ctypes.c_uint]
    function.restype = ctypes.c_int
    loaded: Callable[..., int] = function
    return loaded


def renameat2() -> Callable[..., int] | None:
    """libc's ``renameat2`` (its errors in `ctypes.get_errno`), or None where it is not
    used."""
    return _load_renameat2() if CURRENT.renameat2 else None


def process_umask() -> int:
    """The process umask, read without changing it where Linux lets us."""
    if CURRENT.proc_status:
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


_COUNTING_FILESYSTEMS: Final = frozenset({"ext2", "ext3", "ext4", "xfs", "tmpfs"})
"""Filesystems whose directory's link count is always 2 plus its subdirectories. Not btrfs
(always 1), overlayfs (1 for a merged directory), network and FUSE filesystems (what their
server says): as GNU fts' leaf optimization, only where the count is known to hold."""


def links_count_subdirectories(device: int) -> bool:
    """Whether every directory on `device` has a link count of 2 exactly when it has no
    subdirectory: its filesystem, as ``/proc/self/mountinfo`` names it, is one of
    `_COUNTING_FILESYSTEMS` (False where ``/proc`` can't tell)."""
    if not CURRENT.proc_status:
        return False
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as file:
            mounts = file.read().splitlines()
    except OSError:
        return False
    wanted = f"{os.major(device)}:{os.minor(device)}"
    kinds = {
        line.partition(" - ")[2].partition(" ")[0]
        for line in mounts
        if line.split(" ", 3)[2:3] == [wanted]
    }
    return bool(kinds) and kinds <= _COUNTING_FILESYSTEMS


def process_started(pid: int) -> str | None:
    """When process `pid` started (clock ticks since boot, where ``/proc`` says), so that a
    reused process id is not taken for the one recorded; ``"alive"`` for a running process
    whose start can't be told; None when it does not run."""
    if CURRENT.proc_status:
        try:
            with open(f"/proc/{pid}/stat", "rb") as stat:
                fields = stat.read().rpartition(b")")[2].split()
            return fields[19].decode()
        except (OSError, IndexError):
            pass
    try:
        os.kill(pid, 0)
    except PermissionError:
        return "alive"
    except OSError:
        return None
    return "alive"


def copy_in_kernel(source: int, target: int, size: int) -> int:
    """Copy `source` into `target` without the bytes passing through this process where
    Linux can (a reflink, else ``copy_file_range``); the number of bytes copied from the
    start (`size` when all of them; what is left is the caller's to copy).

    Raises:
        OSError: ``copy_file_range`` failed for another reason than being unsupported.
    """
    if not CURRENT.kernel_copy:
        return 0
    try:
        fcntl.ioctl(target, _FICLONE, source)
        return size
    except OSError:
        pass
    offset = 0
    try:
        while offset < size:
            copied = os.copy_file_range(source, target, size - offset, offset, offset)
            if copied == 0:
                break
            offset += copied
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
            raise
    return offset


def parent_open_flag() -> int:
    """``O_PATH`` where it is used (a directory opened to create and open names in needs no
    read permission), else ``O_RDONLY``."""
    return os.O_PATH if CURRENT.o_path else os.O_RDONLY


def widen_pipe(fd: int, size: int) -> None:
    """Ask for a `size`-byte buffer for the pipe `fd` (Linux); best effort."""
    if CURRENT.pipe_size:
        with contextlib.suppress(OSError):
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, size)
