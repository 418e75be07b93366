"""The provider's model-facing error messages (SPEC §3), built in exactly one place.

`verb` is the operation the model asked for: ``read``, ``write`` or ``edit``.
"""

from __future__ import annotations

from typing import Literal

from dsh_fs.errors import FsError, FsErrorCode

__all__ = [
    "Verb",
    "ambiguous_edit",
    "binary_file",
    "edit_gone",
    "edit_not_found",
    "edit_stale",
    "invalid_utf8",
    "not_found",
    "not_regular_file",
    "overwrite_unobserved",
    "write_gone",
    "write_stale",
]

Verb = Literal["read", "write", "edit"]


def not_found(verb: Verb, path: str) -> FsError:
    """`cannot <verb> "<p>": not found` (FS_NOT_FOUND)."""
    return FsError(FsErrorCode.NOT_FOUND, f'cannot {verb} "{path}": not found', path=path)


def not_regular_file(verb: Verb, path: str) -> FsError:
    """`cannot <verb> "<p>": not a regular file` (FS_NOT_REGULAR_FILE)."""
    return FsError(
        FsErrorCode.NOT_REGULAR_FILE, f'cannot {verb} "{path}": not a regular file', path=path
    )


def binary_file(verb: Verb, path: str) -> FsError:
    """`cannot <verb> "<p>": binary file` (FS_NOT_TEXT)."""
    return FsError(FsErrorCode.NOT_TEXT, f'cannot {verb} "{path}": binary file', path=path)


def invalid_utf8(verb: Verb, path: str) -> FsError:
    """`cannot <verb> "<p>": invalid UTF-8 text` (FS_NOT_TEXT)."""
    return FsError(FsErrorCode.NOT_TEXT, f'cannot {verb} "{path}": invalid UTF-8 text', path=path)


def overwrite_unobserved(path: str) -> FsError:
    """A `CreateIfAbsent` write found a file (FS_NOT_OBSERVED)."""
    return FsError(
        FsErrorCode.NOT_OBSERVED,
        f'cannot overwrite existing "{path}" without reading it first',
        path=path,
    )


def write_stale(path: str) -> FsError:
    """A `ReplaceIfVersion` write found another version (FS_STALE_VERSION)."""
    return FsError(
        FsErrorCode.STALE_VERSION,
        f'cannot write "{path}": file changed since it was read',
        path=path,
    )


def write_gone(path: str) -> FsError:
    """A `ReplaceIfVersion` write found no file (FS_STALE_VERSION)."""
    return FsError(
        FsErrorCode.STALE_VERSION, f'cannot write "{path}": file no longer exists', path=path
    )


def edit_stale(path: str) -> FsError:
    """A guarded edit found another version (FS_STALE_VERSION)."""
    return FsError(
        FsErrorCode.STALE_VERSION,
        f'cannot edit "{path}": file changed since it was read',
        path=path,
    )


def edit_gone(path: str) -> FsError:
    """An edit found no file, guarded or not (FS_STALE_VERSION)."""
    return FsError(
        FsErrorCode.STALE_VERSION, f'cannot edit "{path}": file no longer exists', path=path
    )


def edit_not_found(path: str) -> FsError:
    """`old_string was not found in "<p>"` (FS_EDIT_NOT_FOUND)."""
    return FsError(FsErrorCode.EDIT_NOT_FOUND, f'old_string was not found in "{path}"', path=path)


def ambiguous_edit(path: str, count: int) -> FsError:
    """`old_string matched <n> times in "<p>"; …` (FS_AMBIGUOUS_EDIT)."""
    return FsError(
        FsErrorCode.AMBIGUOUS_EDIT,
        f'old_string matched {count} times in "{path}"; '
        "provide a more specific old_string or set replace_all to true",
        path=path,
    )
