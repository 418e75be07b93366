"""Errors every layer shares: `FsError` and its stable, machine-routable codes.

This module sits at the bottom of the package and imports nothing from it. Providers raise
`FsError`; the policy raises it to refuse an intent; the tools turn it into a model-facing
result. Codes and their meaning are part of the public contract (SPEC §3).
"""

from __future__ import annotations

import enum

__all__ = ["FsError", "FsErrorCode"]


class FsErrorCode(str, enum.Enum):
    """The thirteen stable error codes. The value is the code string programs route on."""

    NOT_FOUND = "FS_NOT_FOUND"
    """The target (or a window of it) does not exist."""
    NOT_DIRECTORY = "FS_NOT_DIRECTORY"
    """A path component, or a directory operation's target, is not a directory."""
    NOT_TEXT = "FS_NOT_TEXT"
    """The file is binary (contains NUL) or is not valid UTF-8."""
    NOT_REGULAR_FILE = "FS_NOT_REGULAR_FILE"
    """A directory, FIFO, socket or device where a regular file was needed."""
    TOO_LARGE = "FS_TOO_LARGE"
    """The content exceeds a stated byte limit; nothing truncated is ever returned."""
    PERMISSION_DENIED = "FS_PERMISSION_DENIED"
    """The operating system or the storage service refused access."""
    SANDBOX_DENIED = "FS_SANDBOX_DENIED"
    """A sandbox fence refused the path or the mutation."""
    IO_ERROR = "FS_IO_ERROR"
    """Any other I/O failure (disk full, quota, network); the target is left unchanged."""
    STALE_VERSION = "FS_STALE_VERSION"
    """A guarded mutation found the file at another version than expected, or gone."""
    NOT_OBSERVED = "FS_NOT_OBSERVED"
    """A mutation needs an observation that the actor does not have."""
    AMBIGUOUS_EDIT = "FS_AMBIGUOUS_EDIT"
    """`old_string` matched more than once without `replace_all`."""
    EDIT_NOT_FOUND = "FS_EDIT_NOT_FOUND"
    """`old_string` does not occur in the file."""
    ABORTED = "FS_ABORTED"
    """The operation was cancelled before it took effect."""

    def __str__(self) -> str:
        return self.value


class FsError(Exception):
    """A filesystem failure with a stable `code` and a model-facing `message`.

    Attributes:
        code: The machine-routable code.
        message: One sentence naming the path and what went wrong; shown to the model as is.
        path: The display path the error is about, when there is one.
    """

    code: FsErrorCode
    message: str
    path: str | None

    def __init__(self, code: FsErrorCode, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.path = path

    def __repr__(self) -> str:
        return f"FsError({self.code.value}, {self.message!r})"

    def __reduce__(self) -> tuple[object, ...]:
        # Keep errors picklable across process boundaries (the keyword-only path included).
        return (_rebuild_fs_error, (self.code, self.message, self.path))


def _rebuild_fs_error(code: FsErrorCode, message: str, path: str | None) -> FsError:
    return FsError(code, message, path=path)
