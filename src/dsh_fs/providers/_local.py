"""`LocalFileSystem`: the host filesystem as a `dsh_fs.fs.FileSystem` (SPEC §3, local facts).

Identity is the real path, versions come from `stat`, text is strict UTF-8, and every
mutation is one compare-and-swap critical section: a per-target lock in the process, an
advisory `flock` on the parent directory across processes, and a staged, fsynced, atomic
publication. Every mutation and every read the page cache can't answer at once run in
worker threads; the cheap metadata calls (`realpath`, `stat`, `lstat`), whole reads of small
files and cached stream chunks stay on the event loop.
"""

from __future__ import annotations

import contextlib
import os
import stat as st_mode
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager
from contextvars import ContextVar
from functools import partial
from pathlib import Path

from anyio import to_thread

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import (
    CreateIfAbsent,
    FileSystem,
    FsCapabilities,
    FsDirEntry,
    FsEditOutcome,
    FsEditRequest,
    FsFileType,
    FsInfo,
    FsPathInfo,
    FsTarget,
    FsTargetKey,
    FsVersion,
    FsWriteOutcome,
    ReplaceIfVersion,
    WriteGuard,
    apply_edit,
    messages,
)

from ._local_stream import STREAM_CHUNK_SIZE, stream_text
from ._locks import TargetLocks
from ._oserrors import invalid_path, translate
from ._posix import (
    OPEN_STAGED,
    LazyContent,
    Verb,
    directory_lock,
    fd_path,
    file_type,
    keep_owner_and_mode,
    link_no_replace,
    list_dir,
    make_parents,
    open_existing,
    open_regular,
    process_umask,
    read_bytes_capped,
    read_fd,
    unchanged,
    writable_in_place,
    write_all,
)
from ._staging import STAGE_PREFIX, new_stage_dir_at, sweep_stage_dirs
from ._text import decode_or_none, decode_text, encode_text
from ._versions import Published, RecentlyPublished, VersionBook, digest

__all__ = ["STAGE_PREFIX", "STREAM_CHUNK_SIZE", "LocalFileSystem", "publish_guard"]


INLINE_READ_BYTES = 64 * 1024
"""`read_text` reads files up to this size on the event loop (see `_read_small`)."""

BACKGROUND_DIGEST_BYTES = 512 * 1024
"""Published content larger than this is hashed in a helper thread (see `_Digest`)."""

BEFORE_LIMIT = 16 * 1024 * 1024
"""A write's outcome carries the prior text only for files up to this size (else None)."""


publish_guard: ContextVar[Callable[[str, str, str], None] | None] = ContextVar(
    "dsh_fs_publish_guard", default=None
)
"""A hook for wrappers (the sandbox): ``guard(key, display, directory)`` runs inside a write's
or edit's critical section (locks held, in the worker thread; anyio copies the context
there) right before the rename or link that publishes `key`. `directory` is the kernel's
path of the locked directory the publication will land in (`_posix.fd_path`), not a
path that could be swapped. Raising an `FsError` refuses the mutation: nothing is
published. A context variable, not an attribute, so only the calls made through the wrapper
are checked."""

_STAGED = "content"
"""The staged file's name inside its private staging directory."""


class LocalFileSystem(FileSystem):
    """The host filesystem.

    Args:
        base: Directory that relative paths resolve against when no `cwd` is given;
            defaults to the working directory at construction.
        timestamp_granularity_ns: Resolution of the filesystem's timestamps, for one that
            keeps coarser times than it reports (see `_versions.VersionBook`).

    Versions are stat tuples backed by content digests where the tuple can't decide: a
    same-size rewrite within one coarse timestamp tick is still stale, and a `touch` or an
    identical rewrite of a file whose content the provider saw is not (`_versions`).

    A killed writer leaves a private staging directory behind, never a stray file; the first
    mutation of a directory by a provider sweeps residue whose owner process is gone
    (`sweep_staging` does it on demand).

    Identity and display: `target_key` is the real path (for a file that does not exist
    yet, the real path of its parent plus the name); `display_path` is the absolute path as
    spelled, normalized lexically (``..`` removed, symlinks not followed). A leading ``~``
    expands to the home directory.

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
    """

    capabilities: FsCapabilities = FsCapabilities(
        symlinks=True, special_files=True, posix_modes=True, cross_process_guards=True
    )

    def __init__(
        self, base: str | os.PathLike[str] | None = None, *, timestamp_granularity_ns: int = 1
    ) -> None:
        self._base = os.path.abspath(os.fspath(base)) if base is not None else os.getcwd()
        self._locks = TargetLocks()
        self._new_file_mode = 0o666 & ~process_umask()
        self._versions = VersionBook(timestamp_granularity_ns)
        self._recent = RecentlyPublished()
        # Started on first use; its idle thread ends when the provider is collected.
        self._hasher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dsh-fs-digest")
        self._swept: set[str] = set()

    @property
    def base(self) -> str:
        """The directory relative paths resolve against by default."""
        return self._base

    # --- targets -------------------------------------------------------------------------

    def _display(self, path: str, cwd: str | None) -> str:
        if not path or "\0" in path:
            raise invalid_path(path)
        if cwd is not None and "\0" in cwd:
            raise invalid_path(cwd)
        base = self._base if not cwd else os.path.join(self._base, os.path.expanduser(cwd))
        return os.path.normpath(os.path.join(base, os.path.expanduser(path)))

    async def resolve(self, path: str, cwd: str | None = None) -> FsTarget:
        display = self._display(path, cwd)
        # A handful of lstat calls on a local disk: cheaper on the loop than a thread hop.
        key = os.path.realpath(display)  # noqa: ASYNC240
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

    # --- metadata ------------------------------------------------------------------------

    async def stat(self, target: FsTarget) -> FsInfo | None:
        try:
            info = os.stat(target.target_key)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise translate(exc, "read", target.display_path) from exc
        return FsInfo(
            version=self._versions.version(info),
            type=file_type(info.st_mode),
            size=info.st_size,
            mtime_ns=info.st_mtime_ns,
        )

    async def lstat(self, path: str, cwd: str | None = None) -> FsPathInfo | None:
        display = self._display(path, cwd)
        try:
            info = os.lstat(display)
            link = os.readlink(display) if st_mode.S_ISLNK(info.st_mode) else None
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise translate(exc, "read", display) from exc
        kind = FsFileType.SYMLINK if link is not None else file_type(info.st_mode)
        return FsPathInfo(display_path=display, type=kind, size=info.st_size, link_target=link)

    async def list_dir(self, target: FsTarget) -> list[FsDirEntry]:
        return await to_thread.run_sync(list_dir, target.target_key, target.display_path)

    # --- reads ---------------------------------------------------------------------------

    async def read_text(self, target: FsTarget) -> str:
        key, display = target.target_key, target.display_path
        small = self._read_small(key, display)
        if small is not None:
            return small
        return await to_thread.run_sync(self._read_whole, key, display)

    async def read_bytes(self, target: FsTarget, max_bytes: int) -> bytes:
        return await to_thread.run_sync(
            read_bytes_capped, target.target_key, target.display_path, max_bytes
        )

    def stream_text(self, target: FsTarget) -> AbstractAsyncContextManager[AsyncIterator[str]]:
        return stream_text(
            target.target_key, target.display_path, STREAM_CHUNK_SIZE, self._versions
        )

    async def sweep_staging(self, directory: str | os.PathLike[str]) -> int:
        """Remove staging directories in `directory` left by writers that died mid-write.

        Only directories whose owner is a process of this host that no longer runs are
        removed; returns how many. Mutations do this once per directory on their own.
        """
        parent = os.path.realpath(os.fspath(directory))  # noqa: ASYNC240
        return await to_thread.run_sync(sweep_stage_dirs, parent)

    def _read_small(self, key: str, display: str) -> str | None:
        """`read_text` of a file up to `INLINE_READ_BYTES`, on the event loop; else None.

        Measured reason (`bench/small_read.py`, 2 cores): the worker-thread hop was ~150 of
        a 10-line read's ~170 µs (now ~15 µs), while open, read, sha256 and decode of a
        64 KiB file from the page cache hold the loop ~80 µs (median). A file that grew past
        the limit since its `fstat` goes to the worker thread: the loop never reads more.
        """
        fd, info = open_regular(key, "read", display)
        try:
            if info.st_size > INLINE_READ_BYTES:
                return None
            data = os.read(fd, INLINE_READ_BYTES + 1)
            if len(data) > INLINE_READ_BYTES or (data and os.read(fd, 1)):
                return None
            self._remember_read(fd, info, data)
        except OSError as exc:
            raise translate(exc, "read", display) from exc
        finally:
            os.close(fd)
        return decode_text(data, "read", display)

    def _read_whole(self, key: str, display: str) -> str:
        fd, info = open_regular(key, "read", display)
        try:
            data = read_fd(fd, info.st_size)
            self._remember_read(fd, info, data)
        except OSError as exc:
            raise translate(exc, "read", display) from exc
        finally:
            os.close(fd)
        return decode_text(data, "read", display)

    def _remember_read(self, fd: int, info: os.stat_result, data: bytes) -> None:
        if self._versions.wants_digest(info) and unchanged(fd, info):
            self._versions.remember(info, digest(data))

    # --- mutations -----------------------------------------------------------------------

    async def write_text(
        self, target: FsTarget, content: str, expected: WriteGuard | None = None
    ) -> FsWriteOutcome:
        async with self._locks.hold(target.target_key):
            return await to_thread.run_sync(partial(self._write_locked, target, content, expected))

    async def edit_text(
        self, target: FsTarget, edit: FsEditRequest, expected: FsVersion | None = None
    ) -> FsEditOutcome:
        async with self._locks.hold(target.target_key):
            return await to_thread.run_sync(partial(self._edit_locked, target, edit, expected))

    def _write_locked(
        self, target: FsTarget, content: str, expected: WriteGuard | None
    ) -> FsWriteOutcome:
        key, display = target.target_key, target.display_path
        data = encode_text(content, "write", display)
        data_digest = _Digest(data, self._hasher)
        parent = os.path.dirname(key)
        try:
            make_parents(parent)
            with directory_lock(parent) as dir_fd:
                before: str | None = None
                prior = open_existing(key, "write", display, dir_fd)
                if prior is None:
                    if isinstance(expected, ReplaceIfVersion):
                        raise messages.write_gone(display)
                    prior_info = None
                else:
                    fd, prior_info = prior
                    try:
                        if isinstance(expected, CreateIfAbsent):
                            raise messages.overwrite_unobserved(display)
                        _refuse_read_only(key, dir_fd, "write", display)
                        prior_bytes = LazyContent(fd, prior_info.st_size)
                        ours = self._ours(key, prior_info, prior_bytes)
                        if isinstance(expected, ReplaceIfVersion) and not (
                            self._is_current(expected.version, prior_info, prior_bytes, ours)
                        ):
                            raise messages.write_stale(display)
                        if ours is not None:
                            before = ours.text
                        elif prior_info.st_size <= BEFORE_LIMIT:
                            before = decode_or_none(prior_bytes())
                    finally:
                        os.close(fd)
                published = self._publish(
                    key, display, data, prior_info, dir_fd, no_replace=prior_info is None
                )
        except OSError as exc:
            raise translate(exc, "write", display) from exc
        version = self._versions.remember(published, data_digest.result())
        self._recent.keep(key, version, data, content)
        return FsWriteOutcome(
            operation="create" if prior_info is None else "update",
            version=version,
            before=before,
            after=content,
        )

    def _edit_locked(
        self, target: FsTarget, edit: FsEditRequest, expected: FsVersion | None
    ) -> FsEditOutcome:
        key, display = target.target_key, target.display_path
        parent = os.path.dirname(key)
        try:
            with directory_lock(parent) as dir_fd:
                prior = open_existing(key, "edit", display, dir_fd)
                if prior is None:
                    raise messages.edit_gone(display)
                fd, prior_info = prior
                try:
                    # The version check comes before matching: a stale edit is stale, never
                    # a match error.
                    content = LazyContent(fd, prior_info.st_size)
                    ours = self._ours(key, prior_info, content)
                    if expected is not None and not (
                        self._is_current(expected, prior_info, content, ours)
                    ):
                        raise messages.edit_stale(display)
                    before = ours.text if ours is not None else content.text("edit", display)
                    _refuse_read_only(key, dir_fd, "edit", display)
                finally:
                    os.close(fd)
                del content  # the prior bytes: a large file's peak memory is text, not bytes
                after, count = apply_edit(before, edit, display)
                data = encode_text(after, "edit", display)
                data_digest = _Digest(data, self._hasher)
                published = self._publish(key, display, data, prior_info, dir_fd, no_replace=False)
        except (FileNotFoundError, NotADirectoryError) as exc:
            if exc.filename == parent:  # no directory to lock: the file is gone too
                raise messages.edit_gone(display) from exc
            raise translate(exc, "edit", display) from exc
        except OSError as exc:
            raise translate(exc, "edit", display) from exc
        version = self._versions.remember(published, data_digest.result())
        self._recent.keep(key, version, data, after)
        return FsEditOutcome(
            version=version,
            before=before,
            after=after,
            replacements=count,
        )

    def _ours(self, key: str, info: os.stat_result, content: LazyContent) -> Published | None:
        """What this provider published last at `key`, if the file still holds exactly that."""
        return self._recent.match(key, self._versions.version(info), content)

    def _is_current(
        self,
        expected: FsVersion,
        info: os.stat_result,
        content: LazyContent,
        ours: Published | None,
    ) -> bool:
        """`VersionBook.is_current`; when the file holds what we published at `expected`
        (bytes compared), that answers it without hashing."""
        if ours is not None and ours.version == expected:
            return True
        return self._versions.is_current(expected, info, content)

    def _publish(
        self,
        key: str,
        display: str,
        data: bytes,
        prior: os.stat_result | None,
        dir_fd: int,
        *,
        no_replace: bool,
    ) -> os.stat_result:
        """Stage `data` in the locked directory `dir_fd`, fsync it, publish it as `key`'s
        name, fsync the directory.

        Every step is relative to `dir_fd` (`*at` system calls): the publication lands in
        the directory that was locked and that `publish_guard` checked, whatever happens to
        its path meanwhile. Returns the stat of the published inode, taken once every
        link-count change is done (unlinking a staged hard link changes its ctime). Nothing
        staged survives a failure.
        """
        parent, name = os.path.split(key)
        if parent not in self._swept:
            # Under the directory lock: residue of a killed cooperating writer, once per
            # directory per provider.
            if len(self._swept) >= 4096:
                self._swept.clear()
            self._swept.add(parent)
            sweep_stage_dirs(parent)
        stage = new_stage_dir_at(dir_fd)
        stage_fd = os.open(stage, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
        try:
            fd = os.open(_STAGED, OPEN_STAGED, 0o600, dir_fd=stage_fd)
            try:
                write_all(fd, data)
                if prior is None:
                    os.fchmod(fd, self._new_file_mode)
                else:
                    keep_owner_and_mode(fd, prior)
                os.fsync(fd)
                guard = publish_guard.get()
                if guard is not None:
                    guard(key, display, fd_path(dir_fd, parent))
                if no_replace:
                    link_no_replace(_STAGED, stage_fd, name, dir_fd, display)
                    os.unlink(_STAGED, dir_fd=stage_fd)
                else:
                    os.replace(_STAGED, name, src_dir_fd=stage_fd, dst_dir_fd=dir_fd)
                os.rmdir(stage, dir_fd=dir_fd)
                os.fsync(dir_fd)
                return os.fstat(fd)
            finally:
                os.close(fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(_STAGED, dir_fd=stage_fd)
            with contextlib.suppress(OSError):
                os.rmdir(stage, dir_fd=dir_fd)
            raise
        finally:
            os.close(stage_fd)


# --- helpers (synchronous; run in worker threads unless noted) ---------------------------


def _refuse_read_only(key: str, dir_fd: int, verb: Verb, display: str) -> None:
    """A file this process may not write (read-only for it) is not replaced behind its
    permission bits: an atomic replace needs only the directory's permission, an in-place
    write (what other tools do) the file's. Root may, as with an in-place write."""
    if not writable_in_place(os.path.basename(key), dir_fd):
        raise FsError(
            FsErrorCode.PERMISSION_DENIED,
            f'cannot {verb} "{display}": permission denied',
            path=display,
        )


class _Digest:
    """The digest of content being published; above `BACKGROUND_DIGEST_BYTES` it is computed
    by the provider's helper thread while the publication waits on the disk (hashlib
    releases the GIL). A thread started per call cost ~0.2 ms, a pool's submit ~0.03 ms.

    Measured reason (2 cores; write, fsync, rename and directory fsync with the hash after
    them vs beside them, medians): 1 MiB ~2.05 -> ~1.73 ms on a quiet machine, 100 MiB
    ~277 -> ~246 ms on a loaded one. Below half a MiB a thread start costs about what it
    saves, so small content is hashed inline.
    """

    def __init__(self, data: bytes, helper: ThreadPoolExecutor) -> None:
        self._value: bytes | Future[bytes]
        if len(data) <= BACKGROUND_DIGEST_BYTES:
            self._value = digest(data)
        else:
            self._value = helper.submit(digest, data)

    def result(self) -> bytes:
        """The sha256 digest (waits for the helper thread)."""
        return self._value if isinstance(self._value, bytes) else self._value.result()
