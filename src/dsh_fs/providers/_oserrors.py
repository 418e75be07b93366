"""The one place where the host filesystem's `OSError`s become `FsError`s.

`translate` maps an errno to a stable code and a model-facing sentence naming the path and
the operation. Providers call it as ``raise translate(exc, verb, path) from exc``.
"""

from __future__ import annotations

import errno
import os

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import messages

__all__ = ["invalid_path", "translate"]

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


def translate(exc: OSError, verb: messages.Verb, path: str) -> FsError:
    """The `FsError` for an `OSError` raised while `verb`-ing the file shown as `path`.

    Mapping: ENOENT → `FS_NOT_FOUND`; ENOTDIR → `FS_NOT_DIRECTORY`; EACCES, EPERM and EROFS
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
        return _error(FsErrorCode.NOT_DIRECTORY, verb, path, "not a directory")
    if code in (errno.EACCES, errno.EPERM):
        return _error(FsErrorCode.PERMISSION_DENIED, verb, path, "permission denied")
    if code == errno.EROFS:
        return _error(FsErrorCode.PERMISSION_DENIED, verb, path, "read-only file system")
    if code == errno.ELOOP:
        return _error(FsErrorCode.NOT_FOUND, verb, path, "too many levels of symbolic links")
    wording = _IO_WORDING.get(code) if code is not None else None
    if wording is None:
        wording = (os.strerror(code) if code is not None else str(exc)).lower() or "i/o error"
    return _error(FsErrorCode.IO_ERROR, verb, path, wording)


def invalid_path(path: str) -> FsError:
    """`FS_NOT_FOUND` for a path no file can have: empty, or containing a NUL byte."""
    if not path:
        return FsError(FsErrorCode.NOT_FOUND, "cannot resolve an empty path", path=path)
    shown = path.replace("\0", "\\0")
    return FsError(
        FsErrorCode.NOT_FOUND, f'cannot resolve "{shown}": the path contains a NUL byte', path=path
    )


def _error(code: FsErrorCode, verb: messages.Verb, path: str, what: str) -> FsError:
    return FsError(code, f'cannot {verb} "{path}": {what}', path=path)
