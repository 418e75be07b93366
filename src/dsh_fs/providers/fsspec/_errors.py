"""The one place where fsspec, s3fs and botocore exceptions become `FsError`s.

`FsspecFileSystem` runs every backend call inside ``with map_backend_errors(verb, path, …):``.
A lost precondition on a guarded
publication (S3 412 ``PreconditionFailed``, 409 ``ConditionalRequestConflict``, or a
``FileExistsError`` from an exclusive create) and a target that vanished under a guarded
publication (``NoSuchKey``) are mapped by the caller's `on_conflict` / `on_gone`, since only
the caller knows whether the guard was "create only" or "replace this version".
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from dsh_fs.errors import FsError
from dsh_fs.fs import messages

from .._oserrors import not_a_directory, os_error

__all__ = ["backend_error", "backend_error_types", "map_backend_errors"]

_CONFLICT_CODES = frozenset({"PreconditionFailed", "ConditionalRequestConflict", "412", "409"})
_GONE_CODES = frozenset({"NoSuchKey", "NoSuchBucket", "NotFound", "404"})
_DENIED_CODES = frozenset(
    {
        "AccessDenied",
        "403",
        "AllAccessDisabled",
        "InvalidAccessKeyId",
        "SignatureDoesNotMatch",
        "ExpiredToken",
    }
)


@functools.cache
def backend_error_types() -> tuple[type[BaseException], ...]:
    """The exception types a backend call may raise that `backend_error` understands."""
    types: list[type[BaseException]] = [OSError]
    try:
        from botocore.exceptions import (
            BotoCoreError,
            ClientError,
        )
    except ImportError:  # pragma: no cover - only without the s3 extra
        pass
    else:
        types += [ClientError, BotoCoreError]
    return tuple(types)


@contextmanager
def map_backend_errors(
    verb: messages.Verb,
    path: str,
    *,
    on_conflict: Callable[[str], FsError] | None = None,
    on_gone: Callable[[str], FsError] | None = None,
) -> Iterator[None]:
    """Turn a backend exception raised in the block into its `FsError` (see `backend_error`);
    `FsError`s raised in the block pass through unchanged."""
    try:
        yield
    except FsError:
        raise
    except backend_error_types() as exc:
        raise backend_error(exc, verb, path, on_conflict=on_conflict, on_gone=on_gone) from exc


def backend_error(
    exc: BaseException,
    verb: messages.Verb,
    path: str,
    *,
    on_conflict: Callable[[str], FsError] | None = None,
    on_gone: Callable[[str], FsError] | None = None,
) -> FsError:
    """The `FsError` for `exc`, raised while `verb`-ing the file displayed as `path`.

    Mapping: a lost precondition → `on_conflict(path)` (else `FS_IO_ERROR`); a missing
    object → `on_gone(path)` (else `FS_NOT_FOUND`); access refused → `FS_PERMISSION_DENIED`;
    `IsADirectoryError` → `FS_NOT_REGULAR_FILE`; `NotADirectoryError` → `FS_NOT_DIRECTORY`;
    other `OSError`s by errno as on the local disk; anything else (network, throttling,
    server errors) → `FS_IO_ERROR`.
    """
    code = _client_error_code(exc)
    if code is not None:
        if code in _CONFLICT_CODES and on_conflict is not None:
            return on_conflict(path)
        if code in _GONE_CODES:
            return on_gone(path) if on_gone is not None else messages.not_found(verb, path)
        if code in _DENIED_CODES:
            return messages.permission_denied(verb, path)
        return messages.io_error(verb, path, f"storage error {code}")
    if isinstance(exc, FileExistsError) and on_conflict is not None:
        return on_conflict(path)
    if isinstance(exc, FileNotFoundError):
        return on_gone(path) if on_gone is not None else messages.not_found(verb, path)
    if isinstance(exc, IsADirectoryError):
        return messages.not_regular_file(verb, path)
    if isinstance(exc, NotADirectoryError):
        return not_a_directory(verb, path)
    if isinstance(exc, PermissionError):
        return messages.permission_denied(verb, path)
    if isinstance(exc, OSError) and exc.errno is not None:
        return os_error(exc, verb, path)
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return messages.io_error(verb, path, f"storage error: {detail}")


def _client_error_code(exc: BaseException) -> str | None:
    """The S3 error code of a botocore `ClientError` (directly or as the cause s3fs kept)."""
    for candidate in (exc, exc.__cause__):
        response = getattr(candidate, "response", None)
        if isinstance(response, dict):
            error = response.get("Error")
            if isinstance(error, dict) and error.get("Code"):
                return str(error["Code"])
    return None
