"""`FileSystem`: the abstract provider behind `ctx.fs` (SPEC §3).

Providers implement every primitive; a missing one fails when the provider is constructed.
They know nothing of sessions, agents, line windows, rendering or prompts. Every failure
they report is an `FsError` with one of the stable codes.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager

from . import _messages as messages
from ._types import (
    FsCapabilities,
    FsDeleteOutcome,
    FsDirEntry,
    FsEdit,
    FsEditOutcome,
    FsInfo,
    FsPathInfo,
    FsTarget,
    FsVersion,
    FsWriteOutcome,
    WriteGuard,
)

__all__ = ["FileSystem"]


class FileSystem(ABC):
    """A filesystem seen through opaque targets and versions.

    All primitives are async. Guarded mutations are compare-and-swap operations inside one
    critical section per target.

    Cancellation comes through the async framework (anyio) and propagates as cancellation,
    never as a result. A cancelled mutation takes effect whole or not at all: one cancelled
    before its critical section changes nothing; one whose publication started finishes it
    (never a torn file or staging residue) and its caller records what was published before
    the cancellation reaches it. A cancelled read leaves nothing open.

    Closing (`aclose`) is the one source of `FS_ABORTED`: every later call fails with it, and
    a stream in progress stops with it at its next chunk.
    """

    capabilities: FsCapabilities = FsCapabilities()
    """What this provider supports (read by the conformance suite and by adapters). A class
    attribute for most providers; one whose abilities depend on its backend sets it per
    instance."""

    @abstractmethod
    async def resolve(self, path: str, cwd: str | None = None) -> FsTarget:
        """Resolve `path` to a target. Relative paths resolve against `cwd`, else the
        provider's default base; absolute paths ignore both. The target need not exist.

        Raises:
            FsError: `FS_NOT_FOUND` for an unusable path (empty, NUL), `FS_SANDBOX_DENIED`
                outside a fence, `FS_PERMISSION_DENIED`, `FS_IO_ERROR`.
        """

    @abstractmethod
    async def process_path(self, target: FsTarget) -> str:
        """The canonical path of `target` in the provider's own namespace."""

    @abstractmethod
    async def file_url(self, target: FsTarget) -> str:
        """A URL for `target` (`file:` for local files, the storage URL for remote ones)."""

    @abstractmethod
    async def contains(self, parent: FsTarget, child: FsTarget) -> bool:
        """Whether `child` is `parent` itself or lies inside it (by path components)."""

    @abstractmethod
    async def stat(self, target: FsTarget) -> FsInfo | None:
        """Version, type and size of `target`, following symlinks; None if absent.

        Raises:
            FsError: `FS_PERMISSION_DENIED`, `FS_NOT_DIRECTORY`, `FS_IO_ERROR`.
        """

    @abstractmethod
    async def lstat(self, path: str, cwd: str | None = None) -> FsPathInfo | None:
        """Like `stat` of `resolve(path, cwd)` but without following a final symlink."""

    @abstractmethod
    async def read_text(self, target: FsTarget) -> str:
        """The whole content of a regular UTF-8 file, exactly (a BOM is kept).

        Raises:
            FsError: `FS_NOT_FOUND`; `FS_NOT_REGULAR_FILE` (directory, FIFO, device…);
                `FS_NOT_TEXT` (NUL byte, or invalid UTF-8); `FS_PERMISSION_DENIED`;
                `FS_IO_ERROR`.
        """

    @abstractmethod
    def stream_text(self, target: FsTarget) -> AbstractAsyncContextManager[AsyncIterator[str]]:
        """`read_text` as decoded chunks, in bounded memory, for large files.

        Use as ``async with fs.stream_text(t) as chunks: async for chunk in chunks: ...``;
        leaving the block closes the file. Errors are those of `read_text`; `FS_NOT_TEXT`
        may surface mid-stream, after earlier chunks were delivered.
        """

    @abstractmethod
    async def read_bytes(self, target: FsTarget, max_bytes: int) -> bytes:
        """The raw bytes of a regular file.

        Raises:
            FsError: `FS_TOO_LARGE` when the file has more than `max_bytes` bytes (never a
                truncated result), and the errors of `read_text` except `FS_NOT_TEXT`.
        """

    @abstractmethod
    async def list_dir(self, target: FsTarget) -> list[FsDirEntry]:
        """The direct children of a directory, sorted by name, metadata only.

        Raises:
            FsError: `FS_NOT_FOUND`, `FS_NOT_DIRECTORY`, `FS_PERMISSION_DENIED`, `FS_IO_ERROR`.
        """

    @abstractmethod
    async def write_text(
        self, target: FsTarget, content: str, expected: WriteGuard | None = None
    ) -> FsWriteOutcome:
        """Atomically create or replace `target` with `content` (UTF-8).

        `expected`: None writes unconditionally; `CreateIfAbsent()` only creates (an existing
        file, even one that appears during the call, is `FS_NOT_OBSERVED`);
        `ReplaceIfVersion(v)` only replaces the file at version `v` (else `FS_STALE_VERSION`).

        Raises:
            FsError: the guard's codes, `FS_NOT_REGULAR_FILE`, `FS_NOT_DIRECTORY`,
                `FS_PERMISSION_DENIED`, `FS_SANDBOX_DENIED`, `FS_IO_ERROR`.
        """

    @abstractmethod
    async def edit_text(
        self, target: FsTarget, edit: FsEdit, expected: FsVersion | None = None
    ) -> FsEditOutcome:
        """Change the text inside one critical section: version check (before matching),
        `apply_change` (a literal replacement, an insert or a patch), atomic rewrite. A
        missing target is `FS_STALE_VERSION`, guarded or not.

        Raises:
            FsError: `FS_STALE_VERSION`, `FS_EDIT_NOT_FOUND`, `FS_AMBIGUOUS_EDIT`,
                `FS_NOT_FOUND` (an insert past the end), and the read and write errors.
        """

    async def delete(self, target: FsTarget, expected: FsVersion | None = None) -> FsDeleteOutcome:
        """Remove the regular file `target` inside one critical section: version check, then
        the removal, made durable. `expected`: None removes whatever file is there; a
        version removes the file only at that version. A symbolic link named by the path is
        removed itself; what it points to stays.

        The default refuses: a provider that can delete overrides it.

        Raises:
            FsError: `FS_STALE_VERSION` (guarded: another version, or no file any more),
                `FS_NOT_FOUND` (unguarded, no file), `FS_NOT_REGULAR_FILE`,
                `FS_PERMISSION_DENIED`, `FS_SANDBOX_DENIED`, `FS_IO_ERROR`.
        """
        del expected
        raise messages.delete_unsupported(target.display_path)

    async def aclose(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Release what the provider holds (connections, thread pools); later calls fail
        with `FS_ABORTED`. Idempotent. (The default does nothing: a provider that holds
        nothing may keep working.)"""
