"""`LocalFileSystem`: the host filesystem as a `dsh_fs.fs.FileSystem` (SPEC §3, local facts).

Identity is the real path, versions come from `stat`, text is strict UTF-8, and every
mutation is one compare-and-swap critical section (`_mutations`). Mutations and reads
the page cache can't answer at once run in worker threads; the cheap metadata calls
(`realpath`, `stat`, `lstat`), whole reads of small files and cached stream chunks stay on
the event loop.
"""

from __future__ import annotations

import errno
import os
import stat as st_mode
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Literal

from anyio import CancelScope, to_thread

from dsh_fs._platform import process_umask
from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import (
    EncodingRules,
    FileSystem,
    FsCapabilities,
    FsCapture,
    FsDecoded,
    FsDeleteOutcome,
    FsDirEntry,
    FsDirListing,
    FsEdit,
    FsEditOutcome,
    FsEncoding,
    FsFileType,
    FsGlobQuery,
    FsGrepHit,
    FsGrepQuery,
    FsInfo,
    FsMkdirOutcome,
    FsMoveOutcome,
    FsPathInfo,
    FsPreImage,
    FsSmallRead,
    FsTarget,
    FsTargetKey,
    FsTextStream,
    FsVersion,
    FsWalkEntry,
    FsWriteOutcome,
    WriteGuard,
    messages,
)

from .._locks import TargetLocks
from .._oserrors import FramesDropped, map_os_errors, os_error
from .._text import FallbackBook, check_usable_path, decode_file
from ._dirs import list_dir, list_dir_first
from ._editorconfig import EditorConfigs
from ._guards import UNGUARDED, LocalGuards
from ._io import read_bytes_capped, read_bytes_within, read_fd, read_head
from ._manage import LocalManagement
from ._mutations import LocalMutations
from ._open import file_type, open_regular, unchanged
from ._publish import DeferredSync, deferred_sync, deferring
from ._ranged import RESUMED_CHUNK_SIZE, stream_text_from
from ._realpath import LinkChanged, lstat_link, real_path, resolve_path
from ._ripgrep import RG_ENCODINGS, Encoded, closing, find_rg, rg_glob, rg_grep
from ._ripgrep_ignore import IgnoreListings
from ._staging import sweep_stage_dirs
from ._stream import STREAM_CHUNK_SIZE, Declared, stream_text
from ._versions import VersionBook, digest
from ._walk import walk

__all__ = ["INLINE_READ_BYTES", "STREAM_CHUNK_SIZE", "LocalFileSystem"]


class _NotAt(Exception):
    """`_read_version`'s: the bytes read are not what was known at the version asked."""


@dataclass(frozen=True, slots=True)
class _WholeRead:
    """A file read whole: the `fstat` of what was read, its version, its text."""

    info: os.stat_result
    """The open file's `fstat`."""
    version: FsVersion
    """Its version."""
    decoded: FsDecoded
    """The text and its encoding."""


INLINE_READ_BYTES = 64 * 1024
"""`read_text` reads files up to this size on the event loop (see `_read_small`)."""


class LocalFileSystem(FileSystem):
    """The host filesystem.

    Args:
        base: Directory that relative paths resolve against when no `cwd` is given;
            defaults to the working directory at construction.
        guards: Checks a wrapper makes on the kernel's view of every open of content and
            every publication (`SandboxFileSystem` passes its fence); none by default.
        timestamp_granularity_ns: Resolution of the filesystem's timestamps, for one that
            keeps coarser times than it reports (see `_versions.VersionBook`).
        clock: The wall clock in nanoseconds, which tells how recently a file changed
            (tests pass one that runs ahead instead of waiting).
        encodings: The declared encodings (SPEC §12: rules by path, fallback codecs);
            without them a file is UTF-8 unless a BOM says UTF-16.

    Versions are stat tuples backed by content digests where the tuple can't decide: a
    same-size rewrite within one coarse timestamp tick is still stale, and a `touch` or an
    identical rewrite of a file whose content the provider saw is not (`_versions`).

    A killed writer leaves a private staging directory behind, never a stray file; the first
    mutation of a directory by a provider sweeps residue whose owner process is gone
    (`sweep_staging` does it on demand).

    Identity and display: `target_key` is the real path (for a file that does not exist
    yet, the real path of its parent plus the name); `display_path` is the absolute path as
    spelled, normalized lexically (``..`` removed, symlinks not followed). ``~`` is an
    ordinary name, as upstream reads it: ``~/x`` is the file ``x`` in a directory named
    ``~`` under the base, never the home directory. A path that needs more symbolic links
    than the kernel follows in one lookup (40: a loop, a long chain) keeps its spelling as
    its key, and every primitive fails on it as the kernel does (`FS_NOT_FOUND`, too many
    levels of symbolic links); a link swapped while it is resolved is taken as it was when
    it was looked at (`_realpath`).

    Mutations (`write_text`, `edit_text`) are serialized per target by an in-process lock
    and, across processes, by an advisory ``flock`` on the parent directory. The directory
    lock serializes the dsh-fs mutations of one directory in every cooperating process; it
    creates no file and does not stop writers that don't use dsh-fs. Inside the critical
    section everything (the prior file, staging, publication, the directory fsync) goes
    through the locked directory's descriptor, so a path swapped meanwhile can't redirect
    it. A write creates missing parent directories. A file this process could not write in
    place is refused (`FS_PERMISSION_DENIED`), not replaced behind its permission bits.

    What an atomic replace cannot keep: hard links to the old inode (they keep the old
    content), extended attributes and ACLs. The mode is kept, and the owner and group when
    the process may set them.

    Cancellation and closing: see `dsh_fs.fs.FileSystem`. A mutation whose worker thread
    started completes (it is never abandoned half-way); one still waiting for its lock
    changes nothing. After `aclose`, every primitive fails with `FS_ABORTED`.
    """

    capabilities: FsCapabilities = FsCapabilities(
        symlinks=True,
        special_files=True,
        posix_modes=True,
        cross_process_guards=True,
        content_versions=True,
        local_reads=True,
    )

    def __init__(
        self,
        base: str | os.PathLike[str] | None = None,
        *,
        guards: LocalGuards = UNGUARDED,
        timestamp_granularity_ns: int = 1,
        clock: Callable[[], int] = time.time_ns,
        encodings: EncodingRules | None = None,
    ) -> None:
        self._base = os.path.abspath(os.fspath(base)) if base is not None else os.getcwd()
        self._guards = guards
        self._locks = TargetLocks()
        self._versions = VersionBook(timestamp_granularity_ns, clock)
        self._encodings = encodings
        self._fallbacks = FallbackBook()
        self._editorconfigs = EditorConfigs()
        self._ignore_listings = IgnoreListings()
        self._mutations = LocalMutations(
            self._versions,
            guards,
            0o666 & ~process_umask(),
            encodings,
            self._rule_for if encodings is not None else None,
        )
        self._manage = LocalManagement(
            self._versions,
            guards,
            self._mutations.is_current_opened,
            (self._base,),
            self._mutations.moved,
        )
        self._closed = False

    @property
    def base(self) -> str:
        """The directory relative paths resolve against by default."""
        return self._base

    @property
    def roots(self) -> tuple[str, ...]:
        """`base`, the one place relative paths and path rules are relative to."""
        return (self._base,)

    @property
    def guards(self) -> LocalGuards:
        """The checks every open of content and every publication goes through."""
        return self._guards

    def _display(self, path: str, cwd: str | None) -> str:
        check_usable_path(path)
        if cwd:
            check_usable_path(cwd)
        base = self._base if not cwd else os.path.join(self._base, cwd)
        return os.path.normpath(os.path.join(base, path))

    def _alive(self, verb: messages.Verb, display: str) -> None:
        if self._closed:
            raise messages.aborted(verb, display)

    async def resolve(self, path: str, cwd: str | None = None) -> FsTarget:
        display = self._display(path, cwd)
        # A handful of readlink calls on a local disk: cheaper on the loop than a thread hop.
        # A path through a regular file is refused here, before any policy asks for a read
        # first (as upstream does); a wrapper that may not reveal that path gets the target
        # and refuses it later.
        resolved = resolve_path(display)
        key = resolved.path
        if resolved.failed == errno.ENOTDIR and self._guards.may_reveal(key):
            raise messages.parent_not_directory(display)
        return FsTarget(target_key=FsTargetKey(key), display_path=display)

    async def process_path(self, target: FsTarget) -> str:
        return str(target.target_key)

    async def file_url(self, target: FsTarget) -> str:
        return Path(target.target_key).as_uri()

    async def contains(self, parent: FsTarget, child: FsTarget) -> bool:
        outer, inner = str(parent.target_key), str(child.target_key)
        if inner == outer:
            return True
        prefix = outer if outer.endswith(os.sep) else outer + os.sep
        return inner.startswith(prefix)

    async def stat(self, target: FsTarget) -> FsInfo | None:
        self._alive("read", target.display_path)
        info = self._stat(target)
        return None if info is None else self._info(info)

    def _stat(self, target: FsTarget) -> os.stat_result | None:
        try:
            return os.stat(target.target_key)
        except FileNotFoundError:
            return None
        except OSError as exc:  # as `map_os_errors` maps it, at no cost when nothing fails
            raise os_error(exc, "read", target.display_path) from exc

    def _info(self, info: os.stat_result, version: FsVersion | None = None) -> FsInfo:
        return FsInfo(
            version=self._versions.version(info) if version is None else version,
            type=file_type(info.st_mode),
            size=info.st_size,
            mtime_ns=info.st_mtime_ns,
        )

    async def lstat(self, path: str, cwd: str | None = None) -> FsPathInfo | None:
        display = self._display(path, cwd)
        self._alive("read", display)
        with map_os_errors("read", display):
            try:
                info, link = lstat_link(display)
            except FileNotFoundError:
                return None
            except LinkChanged as exc:
                raise messages.kept_changing("read", display) from exc
        kind = FsFileType.SYMLINK if link is not None else file_type(info.st_mode)
        return FsPathInfo(display_path=display, type=kind, size=info.st_size, link_target=link)

    async def list_dir(self, target: FsTarget) -> list[FsDirEntry]:
        self._alive("read", target.display_path)
        return await to_thread.run_sync(list_dir, target.target_key, target.display_path)

    async def read_text(self, target: FsTarget) -> str:
        return (await self.read_decoded(target)).text

    async def read_decoded(self, target: FsTarget) -> FsDecoded:
        self._alive("read", target.display_path)
        small = self._read_small(target)
        if small is None:
            with FramesDropped():
                small = await to_thread.run_sync(self._read_whole, target)
        return small.decoded

    async def read_decoded_at(
        self,
        target: FsTarget,
        version: FsVersion,
        *,
        change: Literal["edit", "write", "delete", "move"] | None = None,
    ) -> FsDecoded | None:
        verb: messages.Verb = "read" if change is None else change  # what its errors name
        self._alive(verb, target.display_path)
        try:
            read = self._read_small(target, at=version, verb=verb)
            if read is None:
                with FramesDropped():
                    read = await to_thread.run_sync(
                        partial(self._read_whole, target, at=version, verb=verb)
                    )
        except _NotAt:
            return None
        except FsError as error:
            if error.code is FsErrorCode.NOT_FOUND:
                return None
            raise
        return read.decoded

    async def read_small(self, target: FsTarget, max_bytes: int) -> FsSmallRead | None:
        self._alive("read", target.display_path)
        info = self._stat(target)
        if info is None:
            return None
        if not st_mode.S_ISREG(info.st_mode) or info.st_size > max_bytes:
            return FsSmallRead(info=self._info(info), decoded=None)
        # The stat just taken is the one `open_regular` would take first: the file is opened
        # at once, and the version is the `fstat` of what was read.
        read = self._read_small(target, checked=True)
        if read is None:
            with FramesDropped():
                read = await to_thread.run_sync(self._read_whole, target)
        return FsSmallRead(info=self._info(read.info, read.version), decoded=read.decoded)

    @property
    def encodings(self) -> EncodingRules | None:
        """The declared encodings this provider reads and writes by (SPEC §12)."""
        return self._encodings

    def _rule_for(self, target: FsTarget) -> str | None:
        """The codec declared for `target`: by a rule, else (when they count) by the
        ``.editorconfig`` files between its root and it; None when neither says."""
        if self._encodings is None:
            return None
        rule = self._encodings.codec_for((target.display_path, target.target_key))
        if rule is None and self._encodings.editorconfig:
            for path in dict.fromkeys((target.display_path, str(target.target_key))):
                root = self._encodings.root_of(path)
                if root is not None:
                    return self._editorconfigs.charset(path, root)
        return rule

    def _decode(
        self, target: FsTarget, data: bytes, verb: messages.Verb = "read"
    ) -> tuple[str, FsEncoding]:
        """`data` of `target` as text (SPEC §12: BOM, rule, UTF-8, fallbacks)."""
        rule: str | None = None
        fallback: tuple[str, ...] = ()
        if self._encodings is not None:
            rule = self._rule_for(target)
            fallback = self._encodings.fallback
        return decode_file(data, rule, fallback, verb, target.display_path)

    async def read_bytes(self, target: FsTarget, max_bytes: int) -> bytes:
        self._alive("read", target.display_path)
        # Small files on the loop, as `read_text` does (see `_read_small`).
        small = read_bytes_within(
            target.target_key, target.display_path, max_bytes, self._guards, INLINE_READ_BYTES
        )
        if small is not None:
            return small
        return await to_thread.run_sync(
            read_bytes_capped, target.target_key, target.display_path, max_bytes, self._guards
        )

    async def read_head(self, target: FsTarget, size: int) -> bytes:
        self._alive("read", target.display_path)
        if size < 0:
            raise ValueError(f"size must not be negative, got {size}")
        # A header's few bytes from the page cache: on the loop, as a small read is.
        return read_head(target.target_key, target.display_path, size, self._guards)

    def stream_text(self, target: FsTarget) -> AbstractAsyncContextManager[AsyncIterator[str]]:
        self._alive("read", target.display_path)
        return stream_text(
            target.target_key,
            target.display_path,
            STREAM_CHUNK_SIZE,
            self._versions,
            self._guards,
            lambda: self._closed,
            self._declared(target),
        )

    def _declared(self, target: FsTarget) -> Declared | None:
        """What the encoding rules say of `target` (None: no rules at all)."""
        if self._encodings is None:
            return None
        return Declared(self._rule_for(target), self._encodings.fallback, self._fallbacks)

    async def sweep_staging(self, directory: str | os.PathLike[str]) -> int:
        """Remove staging directories in `directory` left by writers that died mid-write.

        Only directories whose owner is a process of this host that no longer runs are
        removed; returns how many. Mutations do this once per directory on their own.
        """
        parent = real_path(os.path.abspath(os.fspath(directory)))  # noqa: ASYNC240
        return await to_thread.run_sync(sweep_stage_dirs, parent)

    def _read_small(
        self,
        target: FsTarget,
        *,
        checked: bool = False,
        at: FsVersion | None = None,
        verb: messages.Verb = "read",
    ) -> _WholeRead | None:
        """`read_decoded` of a file up to `INLINE_READ_BYTES`, on the event loop; else None.

        A worker-thread hop costs more than opening, reading, hashing and decoding a small
        file from the page cache (`bench/small_read.py`), so small files are read inline; the
        limit keeps the loop free for other sessions. A file that grew past the limit since
        its `fstat` goes to the worker thread: the loop never reads more. `checked`: as
        `open_regular`'s; `at`: as `_read_version`'s; `verb`: what its errors name.
        """
        key, display = target.target_key, target.display_path
        opened = open_regular(key, verb, display, self._guards, checked=checked)
        try:
            if opened.info.st_size > INLINE_READ_BYTES:
                return None
            try:
                data = os.read(opened.fd, INLINE_READ_BYTES + 1)
                # Asked once more only when the read did not end at the size `fstat` gave
                # (a short read, or a file that changed since): more bytes mean a thread.
                if len(data) > INLINE_READ_BYTES or (
                    data and len(data) != opened.info.st_size and os.read(opened.fd, 1)
                ):
                    return None
                version = self._read_version(opened.fd, opened.info, data, at)
            except OSError as exc:  # `map_os_errors`, spelled out: see `_stat`
                raise os_error(exc, verb, display) from exc
        finally:
            os.close(opened.fd)
        return _WholeRead(opened.info, version, self._decoded(target, data, verb))

    def _read_whole(
        self, target: FsTarget, at: FsVersion | None = None, verb: messages.Verb = "read"
    ) -> _WholeRead:
        key, display = target.target_key, target.display_path
        opened = open_regular(key, verb, display, self._guards)
        try:
            if at is not None and not self._versions.could_hold(at, opened.info):
                # Not read at all: a change set staged on a file changed since (another
                # size) is stale without reading what may be a large file.
                raise _NotAt
            with map_os_errors(verb, display):
                data = read_fd(opened.fd, opened.info.st_size)
                version = self._read_version(opened.fd, opened.info, data, at)
        finally:
            os.close(opened.fd)
        return _WholeRead(opened.info, version, self._decoded(target, data, verb))

    def _decoded(self, target: FsTarget, data: bytes, verb: messages.Verb = "read") -> FsDecoded:
        text, encoding = self._decode(target, data, verb)
        return FsDecoded(text=text, encoding=encoding)

    def _read_version(
        self, fd: int, info: os.stat_result, data: bytes, at: FsVersion | None
    ) -> FsVersion:
        """The version `data` (read whole from `fd`, stat `info`) was read at, remembered as
        `_remember_read` does; with `at` (`read_decoded_at`): `at` when `data` is what was
        known there, else `_NotAt` is raised (nothing decoded), and nothing remembered.

        "What was known there" is `VersionBook.is_current`, the compare of every guarded
        mutation: the same version (with the bytes compared where it is racy), or a version
        that moved with the same size and the digest remembered at `at` (a touch, an
        identical rewrite: `edit`, `write`, `delete` and `move` accept them, so a change
        set's staging does too).

        Why not remember: a same-size rewrite in the timestamp's tick keeps the version, and
        the version book keeps one digest a version; a read made for a session that observed
        `at` earlier must not replace the digest of what it saw with the digest of what is
        there now, or the guard of its publication would check against the new content."""
        if at is None:
            return self._remember_read(fd, info, data)
        if unchanged(fd, info) and self._versions.is_current(at, info, lambda: data):
            return at
        raise _NotAt

    def _remember_read(self, fd: int, info: os.stat_result, data: bytes) -> FsVersion:
        """Remember the digest of `data`, read whole from `fd` (stat `info`), when later
        checks may need it; returns the version it was read at. A digest already settled
        for that version (not racy: no rewrite can keep the version) is not computed again."""
        versions = self._versions
        version = versions.version(info)
        if versions.wants_digest(info) and not versions.settled(version) and unchanged(fd, info):
            versions.remember(info, digest(data))
        return version

    async def write_text(
        self,
        target: FsTarget,
        content: str,
        expected: WriteGuard | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsWriteOutcome:
        async with self._locks.hold(target.target_key):
            self._alive("write", target.display_path)
            with FramesDropped():
                return await to_thread.run_sync(
                    partial(self._mutations.write, target, content, expected, capture)
                )

    async def edit_text(
        self,
        target: FsTarget,
        edit: FsEdit,
        expected: FsVersion | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsEditOutcome:
        async with self._locks.hold(target.target_key):
            self._alive("edit", target.display_path)
            with FramesDropped():
                return await to_thread.run_sync(
                    partial(self._mutations.edit, target, edit, expected, capture)
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
        """`FileSystem.restore` from a pre-image the local journal store kept (a file in the
        store, copied into a staged file: the store's copy is never linked back)."""
        async with self._locks.hold(target.target_key):
            self._alive("write", target.display_path)
            with FramesDropped():
                return await to_thread.run_sync(
                    partial(self._mutations.restore, target, pre_image, expected, mode, capture)
                )

    @asynccontextmanager
    async def batch(self) -> AsyncIterator[None]:
        """`FileSystem.batch`: the writes and edits of the block leave their directory's
        fsync (and their journal entry's commit) to its end (`DeferredSync`), where each
        directory is fsynced once; deletions and moves stay durable as they are made."""
        if deferred_sync() is not None:
            yield  # nested: the outermost batch settles
            return
        batch = DeferredSync()
        try:
            with deferring(batch):
                yield
        finally:
            # Shielded: a cancelled call still leaves its changes durable (and its journal
            # records settled) before it ends.
            with CancelScope(shield=True), map_os_errors("write", self.base):
                await to_thread.run_sync(batch.settle)

    async def aclose(self) -> None:
        """Refuse every later call with `FS_ABORTED`, and stop streams in progress."""
        self._closed = True

    async def delete(
        self,
        target: FsTarget,
        expected: FsVersion | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsDeleteOutcome:
        """Remove the entry the display path names, in its locked directory: checked against
        `expected`, unlinked through the directory's descriptor (a symbolic link is removed
        itself, never what it points to), and the directory fsynced so the removal survives
        a power loss. A read-only file is refused, as for a write."""
        async with self._locks.hold(target.target_key):
            self._alive("delete", target.display_path)
            with FramesDropped():
                return await to_thread.run_sync(
                    partial(self._mutations.delete, target, expected, capture)
                )

    async def delete_link(self, target: FsTarget) -> None:
        """Unlink the symbolic link the display path names, in its locked directory (the
        guards look at the directory first); what it points to stays."""
        async with self._locks.hold(target.target_key):
            self._alive("delete", target.display_path)
            with FramesDropped():
                await to_thread.run_sync(self._manage.delete_link, target)

    async def delete_dir(self, target: FsTarget) -> None:
        """``rmdir`` of the entry the display path names, in its locked directory; the base
        directory and ``/`` are refused."""
        async with self._locks.hold(target.target_key):
            self._alive("delete", target.display_path)
            with FramesDropped():
                await to_thread.run_sync(self._manage.delete_dir, target)

    async def mkdir(self, target: FsTarget, *, capture: FsCapture | None = None) -> FsMkdirOutcome:
        """Each missing directory made with ``mkdirat`` in a directory the guards saw."""
        self._alive("mkdir", target.display_path)
        with FramesDropped():
            return await to_thread.run_sync(self._manage.mkdir, target, capture)

    async def move(
        self,
        source: FsTarget,
        destination: FsTarget,
        expected: FsVersion | None = None,
        replace: WriteGuard | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsMoveOutcome:
        """A no-replace rename between the two locked parent directories (see
        `_manage`); across filesystems a verified copy then a guarded unlink. The
        base directory and ``/`` are never moved; a directory is moved as a whole."""
        first, second = sorted((str(source.target_key), str(destination.target_key)))
        async with self._locks.hold(first):
            held = self._locks.hold(second) if second != first else _nothing()
            async with held:
                self._alive("move", source.display_path)
                with FramesDropped():
                    return await to_thread.run_sync(
                        partial(self._manage.move, source, destination, expected, replace, capture)
                    )

    def walk(
        self, root: FsTarget, *, descend: Callable[[str], bool] | None = None
    ) -> AbstractAsyncContextManager[AsyncIterator[list[FsWalkEntry]]]:
        """``os.scandir`` over descriptors opened without following links; the guards see
        the kernel's path of the root (see `_walk`)."""
        self._alive("search", root.display_path)
        return walk(root.target_key, root.display_path, self._guards, descend, lambda: self._closed)

    def native_grep(
        self, root: FsTarget, query: FsGrepQuery
    ) -> AbstractAsyncContextManager[AsyncIterator[list[FsGrepHit]]] | None:
        """ripgrep from the ``ripgrep`` wheel, run in `root` (see `_ripgrep`); None without
        the binary. ripgrep transcodes a file with a UTF-16 BOM itself; with encodings
        declared (SPEC §12) it searches each declared codec of `RG_ENCODINGS` in a run of
        its own (`Encoded`). The pure engine, which reads each file as a read does,
        searches instead when fallback codecs are declared or a rule names another codec."""
        binary = find_rg()
        self._alive("search", root.display_path)
        if binary is None:
            return None
        encoded = self._encoded(root)
        if encoded is False:
            return None
        found = rg_grep(
            binary,
            root.target_key,
            root.display_path,
            query,
            self._guards,
            encoded or None,
            self._ignore_listings,
        )
        return None if found is None else closing(found)

    def _encoded(self, root: FsTarget) -> Encoded | Literal[False] | None:
        """How ripgrep searches below `root` by the declared encodings: None (no
        declaration: one run), an `Encoded` plan, or False (the pure engine searches)."""
        rules = self._encodings
        if rules is None or rules.empty:
            return None
        if rules.fallback:
            return False  # a file's codec is known only by reading it whole
        declared = {codec for _, codec, _ in rules.patterns} - {"utf-8", "utf-8-sig"}
        if not declared <= RG_ENCODINGS.keys():
            return False

        def codec_of(rel: str) -> str | None:
            return self._rule_for(
                FsTarget(
                    target_key=FsTargetKey(os.path.join(root.target_key, rel)),
                    display_path=os.path.join(root.display_path, rel),
                )
            )

        def editorconfig_above() -> bool:
            # The directories from the search's root up to (not including) its
            # rules' root: an .editorconfig there declares for files below too.
            top = rules.root_of(str(root.target_key))
            here = str(root.target_key)
            while top is not None and len(here) >= len(top):
                if os.path.lexists(os.path.join(here, ".editorconfig")):
                    return True
                if here == top:
                    break
                here = os.path.dirname(here)
            return False

        return Encoded(
            codecs=tuple(sorted(declared)),
            codec_of=codec_of,
            editorconfig_above=editorconfig_above if rules.editorconfig else None,
        )

    def native_glob(
        self, root: FsTarget, query: FsGlobQuery
    ) -> AbstractAsyncContextManager[AsyncIterator[list[str]]] | None:
        """``rg --files`` from the ``ripgrep`` wheel, ordered here by the modification
        times (see `_ripgrep`); None without the binary."""
        binary = find_rg()
        self._alive("search", root.display_path)
        if binary is None:
            return None
        return closing(rg_glob(binary, root.target_key, root.display_path, query, self._guards))

    async def walk_target(self, root: FsTarget, path: str) -> FsTarget:
        """The root's key and display path joined with `path`: a walk lists real entries
        without following links, so no `realpath` is needed (a path with ``..`` or an
        absolute one is resolved as usual)."""
        parts = path.split("/")
        if not path or path.startswith("/") or ".." in parts or "" in parts or "\0" in path:
            return await self.resolve(path, root.display_path)
        key, display = str(root.target_key), root.display_path
        return FsTarget(
            target_key=FsTargetKey(key + path if key.endswith("/") else f"{key}/{path}"),
            display_path=display + path if display.endswith("/") else f"{display}/{path}",
        )

    def stream_text_from(
        self, target: FsTarget, start: int = 0
    ) -> AbstractAsyncContextManager[FsTextStream]:
        """`stream_text` from byte `start`, with the opened file's version once it is settled
        (changed long enough ago that a same-size rewrite could not share its timestamps)."""
        self._alive("read", target.display_path)
        return stream_text_from(
            target.target_key,
            target.display_path,
            start,
            STREAM_CHUNK_SIZE if start == 0 else RESUMED_CHUNK_SIZE,
            self._versions,
            self._guards,
            lambda: self._closed,
            self._declared(target),
        )

    async def list_dir_first(self, target: FsTarget, limit: int) -> FsDirListing:
        """Every name read, only the first `limit` looked at (see `_dirs`)."""
        if limit < 0:
            raise ValueError(f"limit must not be negative, got {limit}")
        self._alive("read", target.display_path)
        return await to_thread.run_sync(
            list_dir_first, target.target_key, target.display_path, limit
        )


@asynccontextmanager
async def _nothing() -> AsyncIterator[None]:
    yield
