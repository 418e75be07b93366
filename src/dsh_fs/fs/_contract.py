"""`FileSystem`: the abstract provider behind `ctx.fs` (SPEC §3).

Providers implement every primitive; a missing one fails when the provider is constructed.
They know nothing of sessions, agents, line windows, rendering or prompts. Every failure
they report is an `FsError` with one of the stable codes.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Literal

from anyio import to_thread

from dsh_fs.errors import FsError, FsErrorCode

from . import messages
from ._encodings import UTF8, FsDecoded, FsEncoding
from ._journal_contract import ChangeKind, FsCapture, FsChangeStart, FsPreImage
from ._search import FsGlobQuery, FsGrepHit, FsGrepQuery
from ._text_stream import FsTextStream, derived_text_stream
from ._types import (
    CreateIfAbsent,
    FsCapabilities,
    FsDeleteOutcome,
    FsDirEntry,
    FsDirListing,
    FsEdit,
    FsEditOutcome,
    FsFileType,
    FsInfo,
    FsMkdirOutcome,
    FsMoveOutcome,
    FsPathInfo,
    FsSmallRead,
    FsTarget,
    FsVersion,
    FsWalkEntry,
    FsWriteOutcome,
    ReplaceIfVersion,
    WriteGuard,
)

__all__ = ["FileSystem", "delete_dir_journaled"]


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

    @property
    def roots(self) -> tuple[str, ...]:
        """The places relative paths and path rules are relative to, the first being the
        default base: a sandbox's roots, a local provider's base, a remote root's URL. The
        default: none (rules then apply relative to a workspace's `cwd`)."""
        return ()

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

    async def read_decoded(self, target: FsTarget) -> FsDecoded:
        """`read_text` and the encoding it decoded (SPEC §12: codec and BOM).

        The default calls `read_text` and names UTF-8 (with a BOM when the text starts with
        U+FEFF); a provider that reads other encodings overrides it.

        Raises:
            FsError: as `read_text`.
        """
        text = await self.read_text(target)
        return FsDecoded(
            text=text, encoding=FsEncoding(bom=True) if text.startswith("\ufeff") else UTF8
        )

    async def read_decoded_at(
        self,
        target: FsTarget,
        version: FsVersion,
        *,
        change: Literal["edit", "write", "delete", "move"] | None = None,
    ) -> FsDecoded | None:
        """`read_decoded` of `target` only while it holds what a reader observed at
        `version`; None, with nothing else done, when it does not or is gone (the caller is
        stale).

        What a change set stages its edits on: the edits were written against the text the
        session read at `version`, so the text staged must be that one. Where a version
        token alone cannot tell (the local provider's in a coarse timestamp tick: a same-size
        rewrite keeps it), the provider compares the bytes read with what it knew at
        `version`, and the read does not stand as a new observation of `version` (a plain
        read would, and would then vouch for content the session never saw). A provider
        whose guarded mutations take a file whose version moved while its bytes did not (a
        touch, an identical rewrite) as still at `version` answers the text of such a file
        too: the set then agrees with `edit`. The default reads between two `stat`s: right
        for a provider whose versions name content.

        `change`: the mutation of `target` the read is made for (a set stages every file
        before it publishes any): a wrapper refuses the read where it would refuse that
        change (a fence, a read-only mode, a protected path), as the change's primitive
        words it, so a set is refused before anything is written; a provider may name the
        change in its own errors too (`cannot edit "<p>": binary file`, as `edit` says).
        None: a read and nothing more.

        Raises:
            FsError: as `read_decoded`, but for a file that is gone; the change's refusals.
        """
        info = await self.stat(target)
        if info is None or info.version != version:
            return None
        try:
            decoded = await self.read_decoded(target)
        except FsError as error:
            if error.code is FsErrorCode.NOT_FOUND:
                return None
            raise
        again = await self.stat(target)
        return decoded if again is not None and again.version == version else None

    async def read_small(self, target: FsTarget, max_bytes: int) -> FsSmallRead | None:
        """`stat` of `target` and, when it is a regular file of at most `max_bytes` bytes,
        its `read_decoded`, in one call: what a read of a small file needs. A provider that
        can answers both from one open file (the local one: the `fstat` of the descriptor it
        read, so the version is the one of the bytes read). A file that grew past
        `max_bytes` after its size was taken is still read whole.

        None when nothing is at `target` (as `stat`); `decoded` None, with nothing read,
        when it is not a regular file or has more than `max_bytes` bytes. The default calls
        `stat`, then `read_decoded`.

        Raises:
            FsError: as `stat`, and for a file it reads as `read_decoded` (`FS_NOT_TEXT`…).
        """
        info = await self.stat(target)
        if info is None or info.type is not FsFileType.FILE or info.size > max_bytes:
            return None if info is None else FsSmallRead(info=info, decoded=None)
        return FsSmallRead(info=info, decoded=await self.read_decoded(target))

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

    async def read_many(self, targets: Sequence[FsTarget], max_bytes: int) -> list[bytes | FsError]:
        """The raw bytes of several regular files, each answered as `read_bytes` answers it:
        its bytes, or the `FsError` that call raises (`FS_TOO_LARGE` past `max_bytes`,
        `FS_NOT_FOUND` for one that vanished, …), in the order of `targets`.

        What a search reads: the files a walk found, a few at a time. The default reads
        them one after another; a provider that pays a round trip per file (an object
        store) overrides it with concurrent requests. Memory holds at most `max_bytes` per
        target.

        Raises:
            FsError: `FS_ABORTED` (the provider was closed): nothing more is read.
        """
        answers: list[bytes | FsError] = []
        for target in targets:
            try:
                answers.append(await self.read_bytes(target, max_bytes))
            except FsError as error:
                if error.code is FsErrorCode.ABORTED:
                    raise
                answers.append(error)
        return answers

    async def read_head(self, target: FsTarget, size: int) -> bytes:
        """The first `size` bytes of a regular file (all of it when it is shorter), however
        large the file: what a caller sniffing a file's format reads (an image's header).

        The default reads the file through `read_bytes`, so it answers only for files of
        at most `size` bytes and a larger one is `FS_TOO_LARGE`; providers override it with
        a ranged read.

        Raises:
            FsError: as `read_bytes` (the default: `FS_TOO_LARGE` for a larger file).
            ValueError: a negative `size`.
        """
        if size < 0:
            raise ValueError(f"size must not be negative, got {size}")
        return await self.read_bytes(target, size)

    @abstractmethod
    async def list_dir(self, target: FsTarget) -> list[FsDirEntry]:
        """The direct children of a directory, sorted by name, metadata only.

        Raises:
            FsError: `FS_NOT_FOUND`, `FS_NOT_DIRECTORY`, `FS_PERMISSION_DENIED`, `FS_IO_ERROR`.
        """

    async def list_dir_first(self, target: FsTarget, limit: int) -> FsDirListing:
        """The first `limit` children of a directory in name order (as `list_dir` gives
        them), and how many children it has.

        For a caller that shows only the first entries of a possibly huge directory: a
        provider may learn the other children's names without their metadata, and keep in
        memory only what it returns. The default cuts `list_dir`'s answer.

        Raises:
            FsError: as `list_dir`.
            ValueError: a negative `limit`.
        """
        if limit < 0:
            raise ValueError(f"limit must not be negative, got {limit}")
        children = await self.list_dir(target)
        return FsDirListing(entries=tuple(children[:limit]), total=len(children))

    @abstractmethod
    async def write_text(
        self,
        target: FsTarget,
        content: str,
        expected: WriteGuard | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsWriteOutcome:
        """Atomically create or replace `target` with `content` (UTF-8).

        `capture`: the journal's seam (SPEC §9); the provider hands it the replaced content
        inside its critical section, before publication; None when nobody journals the call.
        Every provider accepts the keyword (callers always pass it, wrappers forward it).

        `expected`: None writes unconditionally; `CreateIfAbsent()` only creates (an existing
        file, even one that appears during the call, is `FS_NOT_OBSERVED`);
        `ReplaceIfVersion(v)` only replaces the file at version `v` (else `FS_STALE_VERSION`).

        Raises:
            FsError: the guard's codes, `FS_NOT_REGULAR_FILE`, `FS_NOT_DIRECTORY`,
                `FS_PERMISSION_DENIED`, `FS_SANDBOX_DENIED`, `FS_IO_ERROR`.
        """

    @abstractmethod
    async def edit_text(
        self,
        target: FsTarget,
        edit: FsEdit,
        expected: FsVersion | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsEditOutcome:
        """Change the text inside one critical section: version check (before matching),
        `apply_change` (a literal replacement, an insert or a patch), atomic rewrite. A
        missing target is `FS_STALE_VERSION`, guarded or not. `capture` as for `write_text`.

        Raises:
            FsError: `FS_STALE_VERSION`, `FS_EDIT_NOT_FOUND`, `FS_AMBIGUOUS_EDIT`,
                `FS_NOT_FOUND` (an insert past the end), and the read and write errors.
        """

    async def delete(
        self,
        target: FsTarget,
        expected: FsVersion | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsDeleteOutcome:
        """Remove the regular file `target` inside one critical section: version check, then
        the removal, made durable (`capture` as for `write_text`). `expected`: None removes
        whatever file is there; a version removes the file only at that version. A symbolic
        link named by the path is removed itself; what it points to stays.

        The default refuses: a provider that can delete overrides it.

        Raises:
            FsError: `FS_STALE_VERSION` (guarded: another version, or no file any more),
                `FS_NOT_FOUND` (unguarded, no file), `FS_NOT_REGULAR_FILE`,
                `FS_PERMISSION_DENIED`, `FS_SANDBOX_DENIED`, `FS_IO_ERROR`.
        """
        del expected, capture
        raise messages.delete_unsupported(target.display_path)

    async def delete_link(self, target: FsTarget) -> None:
        """Remove the symbolic link the display path names (never what it points to), inside
        one critical section: the entry must still be a link when it is removed.

        The default refuses (a provider without links never reports one).

        Raises:
            FsError: `FS_NOT_FOUND` (no entry), `FS_STALE_VERSION` (the entry is no longer a
                link), `FS_PERMISSION_DENIED`, `FS_SANDBOX_DENIED`, `FS_IO_ERROR`.
        """
        raise messages.delete_unsupported(target.display_path)

    async def delete_dir(self, target: FsTarget) -> None:
        """Remove the empty directory the display path names.

        The default refuses: a provider with directories overrides it.

        Raises:
            FsError: `FS_NOT_EMPTY`, `FS_NOT_FOUND`, `FS_NOT_DIRECTORY` (not a directory),
                `FS_PERMISSION_DENIED` (a root), `FS_SANDBOX_DENIED`, `FS_IO_ERROR`.
        """
        raise messages.delete_dir_unsupported(target.display_path)

    async def mkdir(self, target: FsTarget, *, capture: FsCapture | None = None) -> FsMkdirOutcome:
        """Create the directory `target` and its missing parents; an existing directory is
        a success (`created` False). `capture` (a journaled mkdir, SPEC §9): told right
        before the directory is made (`FsChangeStart.directory`), committed with its
        version; an existing directory makes no entry.

        The default refuses: a provider with directories overrides it.

        Raises:
            FsError: `FS_NOT_DIRECTORY` (a file is in the way: the path or a parent),
                `FS_PERMISSION_DENIED`, `FS_SANDBOX_DENIED`, `FS_IO_ERROR`.
        """
        del capture
        raise messages.mkdir_unsupported(target.display_path)

    async def move(
        self,
        source: FsTarget,
        destination: FsTarget,
        expected: FsVersion | None = None,
        replace: WriteGuard | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsMoveOutcome:
        """Move the entry `source` names (a file, a directory as a whole, or a link itself)
        to `destination`, creating the destination's missing parents.

        `expected`: None moves whatever file is there; a version moves the source file only
        at that version (`FS_STALE_VERSION` otherwise); a directory only while it is the
        entry that version was taken of (what changed in it moves with it), a link only at
        that version (an undo moving one back). `replace` guards the destination as
        a write's guard does: `CreateIfAbsent()` (and None) never replaces anything
        (`FS_ALREADY_EXISTS`); `ReplaceIfVersion(v)` replaces a regular file only at `v`
        (`FS_STALE_VERSION`); a directory is never replaced nor moved into.

        `capture` (a journaled move, SPEC §9): the move hands it the destination's replaced
        file (if any) and the source inside the critical section, right before publication
        (`FsChangeStart.directory` / `.link` for those); committed with the moved entry's
        version. A provider may move directories without it (say so).

        Atomic where the backend allows (a no-replace rename), else a verified copy then a
        guarded delete of the source; a delete that then fails is `FS_IO_ERROR` saying
        both now exist. The file's bytes and mode are kept.

        The default is that copy, built from the text primitives: it moves regular UTF-8
        files only (a binary file is `FS_NOT_TEXT`) and no directory.

        Raises:
            FsError: `FS_ALREADY_EXISTS` (the destination exists, or is the source),
                `FS_STALE_VERSION`, `FS_NOT_FOUND`, `FS_NOT_REGULAR_FILE` (a FIFO, a
                device), `FS_PERMISSION_DENIED` (a directory into itself, a root),
                `FS_SANDBOX_DENIED`, `FS_IO_ERROR`.
        """
        src, dst = source.display_path, destination.display_path
        if source.target_key == destination.target_key:
            raise messages.move_onto_itself(src, dst)
        info = await self.stat(source)
        if info is None:
            raise (
                messages.move_gone(src) if expected is not None else messages.not_found("move", src)
            )
        if info.type is FsFileType.DIRECTORY:
            raise messages.move_unsupported(src, "directories")
        if info.type is not FsFileType.FILE:
            raise messages.not_regular_file("move", src)
        if expected is not None and info.version != expected:
            raise messages.move_stale(src)
        text = await self.read_text(source)
        guard: WriteGuard = CreateIfAbsent() if replace is None else replace
        try:
            written = await self.write_text(destination, text, guard, capture=capture)
        except FsError as error:
            if error.code is FsErrorCode.NOT_OBSERVED:
                raise messages.move_exists(src, dst) from error
            if error.code is FsErrorCode.STALE_VERSION and isinstance(guard, ReplaceIfVersion):
                raise messages.move_destination_stale(src, dst) from error
            raise
        if await self.read_text(destination) != text:
            raise messages.move_left_both(src, dst, "the copy does not match")
        try:
            await self.delete(source, info.version, capture=capture)
        except FsError as error:
            raise messages.move_left_both(src, dst, error.message) from error
        return FsMoveOutcome(
            type=FsFileType.FILE, version=written.version, replaced=written.operation == "update"
        )

    async def restore(
        self,
        target: FsTarget,
        pre_image: FsPreImage | None,
        expected: FsVersion | None,
        *,
        mode: int | None = None,
        capture: FsCapture | None = None,
    ) -> FsVersion | None:
        """An undo's change, in one critical section, only if the file is exactly where the
        undone change left it: `expected` None means absent (the change was a delete: the
        file is recreated from `pre_image`, never over something that exists now); a
        `pre_image` of None means the change created the file (it is deleted, only at
        `expected`); otherwise the file at `expected` gets `pre_image`'s bytes back, with
        `mode` when given. Returns the new version (None once deleted).

        The default refuses: a provider that journals overrides it.

        Raises:
            FsError: `FS_STALE_VERSION` (the file is elsewhere now, or something exists
                where a deleted file would come back), and the write and delete errors.
        """
        del pre_image, expected, mode, capture
        raise messages.restore_unsupported(target.display_path)

    def walk(
        self, root: FsTarget, *, descend: Callable[[str], bool] | None = None
    ) -> AbstractAsyncContextManager[AsyncIterator[list[FsWalkEntry]]]:
        """Every entry below the directory `root`, one directory at a time, metadata only.

        Use as ``async with fs.walk(root) as batches: async for batch in batches: ...``.
        Each batch is the complete list of one directory's direct children, in name order;
        directories are visited depth first, top-down, in name order, so everything below
        one child of `root` comes before the next child. Symbolic links are reported as
        `SYMLINK` and never followed. A subdirectory is entered only when `descend` (if
        given) returns True for its path; it is asked when the walk gets there, after the
        batch that holds the directory was consumed, so a consumer may decide with what it
        learnt from that batch. A subdirectory that cannot be listed (it vanished, access is
        refused) is skipped; memory holds one directory's listing, not the tree.

        The default is built from `list_dir` (and `stat` where a listing has no
        modification time); providers override it with one efficient pass.

        Raises:
            FsError: when the block is entered: `FS_NOT_FOUND`, `FS_NOT_DIRECTORY` (`root`
                is not a directory), `FS_SANDBOX_DENIED`, `FS_PERMISSION_DENIED`,
                `FS_IO_ERROR`.
        """
        return walk_by_listing(self, root, descend)

    async def walk_target(self, root: FsTarget, path: str) -> FsTarget:
        """The target of `path`, an entry that `walk` of `root` reported (relative to it).

        The default resolves it against the root's display path; a provider whose walk
        already knows the entry's identity answers without touching storage.

        Raises:
            FsError: as `resolve`.
        """
        return await self.resolve(path, root.display_path)

    def native_grep(
        self, root: FsTarget, query: FsGrepQuery
    ) -> AbstractAsyncContextManager[AsyncIterator[list[FsGrepHit]]] | None:
        """The provider's own searcher for `query` below the directory `root`, or None when
        it has none for this query (the default): callers then search with `walk` and
        reads, which gives the same hits.

        Hits come in batches, in no particular order; leaving the block stops the search.

        Raises:
            FsError: when iterating: `SEARCH_INVALID_PATTERN` for a pattern the searcher
                refuses, and the errors of `walk`.
            NativeSearchAbandoned: when iterating: the searcher gave up for a reason of its
                own (its memory bound); search again without it.
        """
        del root, query
        return None

    def native_glob(
        self, root: FsTarget, query: FsGlobQuery
    ) -> AbstractAsyncContextManager[AsyncIterator[list[str]]] | None:
        """The provider's own file finder for `query` below the directory `root`, or None
        when it has none (the default): callers then filter `walk`, which gives the same
        files.

        Batches of paths relative to `root` (components joined with ``/``, as `walk`
        gives them), regular files only, oldest modification first across all batches
        (files with the same time in the searcher's order). Paths, not entries: a glob
        shows a hundred files out of possibly many thousands, so each costs one string.

        Raises:
            FsError: when iterating: `SEARCH_INVALID_PATTERN`, and the errors of `walk`.
        """
        del root, query
        return None

    def batch(self) -> AbstractAsyncContextManager[None]:
        """A scope in which the changes the current task makes may become durable together,
        when it exits, rather than each before its own call returns (a change set's files:
        one wait on the disk for a directory they share, not one each). Whatever happens
        inside, every change made in it is durable when the scope has exited, and a
        journaled change's entry is committed only once the change is durable; a change
        is published (visible, guarded, atomic) when its call returns, as outside. Scopes
        nest (the outermost settles). The default changes nothing: each change is durable
        as it is made.

        Raises:
            FsError: on exit, `FS_IO_ERROR`: what was changed could not be made durable.
        """
        return _unbatched()

    async def aclose(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Release what the provider holds (connections, thread pools); later calls fail
        with `FS_ABORTED`. Idempotent. (The default does nothing: a provider that holds
        nothing may keep working.)"""

    def stream_text_from(
        self, target: FsTarget, start: int = 0
    ) -> AbstractAsyncContextManager[FsTextStream]:
        """`stream_text` from byte `start` on, chunks tagged with their byte offsets, and the
        version of what was opened when the provider vouches for it (`FsTextStream`).

        `start` must be a character boundary: 0, or the offset of a chunk a stream of the
        same version reported. Only the bytes from `start` on are checked as text; a
        consumer starting past 0 knows the earlier ones from a stream at that version.
        A `start` past the end yields no chunk. Providers with ranged reads override this;
        the default reads and decodes from the start and never vouches.

        Raises:
            FsError: those of `stream_text`, when the block is entered or mid-stream.
            ValueError: a negative `start`.
        """
        return derived_text_stream(self.stream_text(target), target, start)


@asynccontextmanager
async def _unbatched() -> AsyncIterator[None]:
    """`FileSystem.batch` of a provider that makes each change durable as it is made."""
    yield


# The default walk (`FileSystem.walk`): depth first over `list_dir`, for providers without
# their own. It lives beside the contract it is built from (a module of its own would import
# `FileSystem` back: a circle).


@asynccontextmanager
async def walk_by_listing(
    fs: FileSystem, root: FsTarget, descend: Callable[[str], bool] | None
) -> AsyncIterator[AsyncIterator[list[FsWalkEntry]]]:
    """`FileSystem.walk` from `stat`, `resolve` and `list_dir` (see there)."""
    info = await fs.stat(root)
    if info is None:
        raise messages.not_found("search", root.display_path)
    if info.type is not FsFileType.DIRECTORY:
        raise messages.not_a_directory("search", root.display_path)
    batches = _batches(fs, root, descend)
    try:
        yield batches
    finally:
        await batches.aclose()


async def _batches(
    fs: FileSystem, root: FsTarget, descend: Callable[[str], bool] | None
) -> AsyncGenerator[list[FsWalkEntry], None]:
    pending: list[tuple[str, FsTarget]] = [("", root)]
    while pending:
        rel, target = pending.pop()
        if rel and descend is not None and not descend(rel):
            continue
        try:
            children = await fs.list_dir(target)
        except FsError:
            if not rel:
                raise
            continue  # vanished or refused since its parent was listed: skipped
        batch: list[FsWalkEntry] = []
        subdirectories: list[tuple[str, FsTarget]] = []
        for child in children:
            path = f"{rel}/{child.name}" if rel else child.name
            size, mtime = child.size, child.mtime_ns
            if child.type in (FsFileType.DIRECTORY, FsFileType.SYMLINK):
                size, mtime = 0, None
            if child.type is FsFileType.DIRECTORY:
                subdirectories.append((path, await fs.resolve(child.name, target.display_path)))
            elif mtime is None and child.type is FsFileType.FILE:
                found = await fs.stat(await fs.resolve(child.name, target.display_path))
                mtime = None if found is None else found.mtime_ns
            batch.append(FsWalkEntry(path=path, type=child.type, size=size, mtime_ns=mtime))
        pending.extend(reversed(subdirectories))
        if batch:
            yield batch


async def delete_dir_journaled(
    fs: FileSystem, target: FsTarget, capture: FsCapture, before: FsVersion | None
) -> None:
    """`fs.delete_dir(target)` as a journaled change (SPEC §9): the pending record first
    (`ChangeKind.DIRECTORY`, `before` the directory's version; an empty directory has no
    content to keep), then the removal, committed absent or abandoned. Its undo makes the
    directory again where nothing is then.

    Raises:
        FsError: those of `delete_dir`, and `FS_IO_ERROR` naming the journal (nothing is
            removed then).
    """
    start = FsChangeStart(
        target=target, verb="delete", before=before, pre_image=None, kind=ChangeKind.DIRECTORY
    )
    ticket = await to_thread.run_sync(capture.prepare, start)
    try:
        await fs.delete_dir(target)
    except BaseException:
        await to_thread.run_sync(capture.abandon, ticket)
        raise
    await to_thread.run_sync(capture.commit, ticket, None, None)
