"""The one place where the host filesystem's `OSError`s become `FsError`s.

Local code wraps each system call site in ``with map_os_errors(verb, path):`` (the way httpx
maps transport errors at its seam); `os_error` is the mapping itself, for the fsspec
provider's table, which falls back to it.
"""

from __future__ import annotations

import errno
import os
from types import TracebackType

from dsh_fs.errors import FsError
from dsh_fs.fs import messages

__all__ = ["FramesDropped", "map_os_errors", "not_a_directory", "os_error", "without_frames"]

_NOT_REGULAR = frozenset({errno.EISDIR, errno.ENXIO, errno.ENODEV})
"""`open` on a directory for writing, a socket, or a device without a driver."""

_IO_WORDING: dict[int, str] = {
    errno.ENOSPC: "no space left on device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EFBIG: "file too large for the filesystem or the process limit",
    errno.EIO: "input/output error",
    errno.ENAMETOOLONG: "file name too long",
    errno.EMFILE: "too many open files",
    errno.ENFILE: "too many open files",
}


def os_error(exc: OSError, verb: messages.Verb, path: str) -> FsError:
    """The `FsError` for an `OSError` raised while `verb`-ing the file shown as `path`.

    Mapping: ENOENT → `FS_NOT_FOUND`; ENOTDIR → see `not_a_directory`; EACCES, EPERM and EROFS
    → `FS_PERMISSION_DENIED`; EISDIR, ENXIO, ENODEV → `FS_NOT_REGULAR_FILE`; ELOOP (a
    symlink loop) → `FS_NOT_FOUND`, because like a dangling link it names no file; anything
    else (ENOSPC, EDQUOT, EFBIG, EIO, …) → `FS_IO_ERROR`.
    """
    code = exc.errno
    if code == errno.ENOENT:
        return messages.not_found(verb, path)
    if code in _NOT_REGULAR:
        return messages.not_regular_file(verb, path)
    if code == errno.ENOTDIR:
        return not_a_directory(verb, path)
    if code in (errno.EACCES, errno.EPERM):
        return messages.permission_denied(verb, path)
    if code == errno.EROFS:
        return messages.permission_denied(verb, path, "read-only file system")
    if code == errno.ELOOP:
        return messages.symlink_loop(verb, path)
    wording = _IO_WORDING.get(code) if code is not None else None
    if wording is None:
        wording = (os.strerror(code) if code is not None else str(exc)).lower() or "i/o error"
    return messages.io_error(verb, path, wording)


def not_a_directory(verb: messages.Verb, path: str) -> FsError:
    """ENOTDIR: for a directory operation (``list``, ``search``) its target is not a directory
    (`FS_NOT_DIRECTORY`); for a file operation a component of the path is a file, so the path
    names nothing (`FS_NOT_FOUND`, in upstream's words)."""
    if verb in ("list", "search"):
        return messages.not_a_directory(verb, path)
    return messages.parent_not_directory(path)


class map_os_errors:
    """``with map_os_errors(verb, path):`` turns an `OSError` raised in the block into its
    `FsError` (``raise … from exc``); `FsError`s raised in the block pass through unchanged.

    A class, not a generator-based context manager: it wraps every system call of a read,
    and a small read makes three of them.
    """

    __slots__ = ("_path", "_verb")

    def __init__(self, verb: messages.Verb, path: str) -> None:
        self._verb: messages.Verb = verb
        self._path = path

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if isinstance(exc, OSError):
            raise os_error(exc, self._verb, self._path) from exc


def without_frames(error: FsError) -> FsError:
    """`error` with no traceback along its cause chain, to raise across a thread boundary.

    An expected failure needs no frames, and keeping them keeps their locals: a missed edit
    of a large file held its whole text (in the critical section's frames) until the cyclic
    garbage collector ran, one copy per failure.
    """
    seen: BaseException | None = error
    while seen is not None:
        seen.__traceback__ = None
        seen = seen.__cause__ or seen.__context__
    return error


class FramesDropped:
    """``with FramesDropped():`` around a call into a worker thread: an `FsError` leaving the
    block carries no frames (`without_frames`). A class, not a generator context manager,
    whose own frame would hold the error."""

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if isinstance(exc, FsError):
            without_frames(exc)
            if traceback is not None:
                # 3.10 re-raises with the traceback it saved before calling __exit__, not
                # exc.__traceback__: cut that one after this frame too.
                traceback.tb_next = None
