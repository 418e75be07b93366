"""Errors every layer shares: `FsError`, its stable codes, and the tools' own codes.

This module sits at the bottom of the package and imports nothing from it. Providers raise
`FsError`; the policy raises it to refuse an intent; the tools turn it into a model-facing
result. Codes and their meaning are part of the public contract (SPEC §3, §6, §8): programs
route on them, so they never change.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

__all__ = ["FsError", "FsErrorCode", "ToolErrorCode"]


class FsErrorCode(str, enum.Enum):
    """The stable codes of `FsError`. The value is the code string programs route on."""

    NOT_FOUND = "FS_NOT_FOUND"
    """The target (or a window of it) does not exist."""
    NOT_DIRECTORY = "FS_NOT_DIRECTORY"
    """A directory operation's target (`list_dir`, a search root) is not a directory. (A
    file operation on a path through a file is `NOT_FOUND`: the path names nothing.)"""
    NOT_TEXT = "FS_NOT_TEXT"
    """The file is binary (contains NUL) or is not valid UTF-8 (nor text in the encoding a
    BOM or a rule names, SPEC §12)."""
    NOT_ENCODABLE = "FS_NOT_ENCODABLE"
    """The new text has a character the file's encoding cannot represent; nothing changed
    (SPEC §12)."""
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
    """The provider was closed: the operation did not start, or stopped before it took
    effect (see `dsh_fs.fs.FileSystem.aclose`)."""
    ALREADY_EXISTS = "FS_ALREADY_EXISTS"
    """A move's destination exists and was not read at its current version (SPEC §10)."""
    NOT_EMPTY = "FS_NOT_EMPTY"
    """A delete named a directory that still has entries (SPEC §10)."""
    PLACEHOLDER = "FS_PLACEHOLDER"
    """A write or edit would replace lines with a line that stands for omitted code
    (``// ... existing code ...``, a ``[truncated]`` marker): refused, nothing changed
    (SPEC §8.3)."""
    REJECTED = "FS_REJECTED"
    """The person asked to approve the change rejected it (SPEC §11.2): nothing changed; the
    same change should not be retried unchanged."""
    NOT_APPROVED = "FS_NOT_APPROVED"
    """The change needs a person's approval and none was given (nobody answered in time, or
    there is nobody to ask; SPEC §11.2): nothing changed."""
    SEARCH_INVALID_PATTERN = "SEARCH_INVALID_PATTERN"
    """A search's regular expression or glob pattern is not valid (SPEC §8.1)."""
    SEARCH_ABORTED = "SEARCH_ABORTED"
    """A search ran past its time budget; nothing partial is returned (SPEC §8.1)."""

    def __str__(self) -> str:
        return self.value


class ToolErrorCode(str, enum.Enum):
    """Codes of failures the tool runtime reports itself (upstream's names, SPEC §6)."""

    INVALID_ARGS = "INVALID_ARGS"
    """The arguments do not fit the tool's schema or its value rules."""
    UNKNOWN_TOOL = "UNKNOWN_TOOL"
    """No tool of that name is registered."""
    INTERNAL_ERROR = "TOOL_INTERNAL_ERROR"
    """A bug: the tool raised something it should not have (logged with its traceback)."""

    def __str__(self) -> str:
        return self.value


_NO_DETAILS: Mapping[str, Any] = MappingProxyType({})


class FsError(Exception):
    """A filesystem failure with a stable `code` and a model-facing `message`.

    Attributes:
        code: The machine-routable code.
        message: What the model is shown: its first line names the path and what went wrong;
            some codes add lines that help the model recover (SPEC §8.2).
        path: The display path the error is about, when there is one.
        details: Structured facts for programs (e.g. where an edit's closest match is), as
            plain JSON data; empty when the error has none.
    """

    code: FsErrorCode
    message: str
    path: str | None
    details: Mapping[str, Any]

    def __init__(
        self,
        code: FsErrorCode,
        message: str,
        *,
        path: str | None = None,
        details: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.path = path
        self.details = _NO_DETAILS if not details else MappingProxyType(dict(details))

    def __repr__(self) -> str:
        return f"FsError({self.code.value}, {self.message!r})"

    def __reduce__(self) -> tuple[object, ...]:
        # Keep errors picklable across process boundaries (the keyword-only fields included).
        return (_rebuild_fs_error, (self.code, self.message, self.path, dict(self.details)))


def _rebuild_fs_error(
    code: FsErrorCode, message: str, path: str | None, details: dict[str, Any] | None = None
) -> FsError:
    return FsError(code, message, path=path, details=details)
