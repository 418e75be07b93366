"""`LocalFileSystem`: the host filesystem as a `dsh_fs.fs.FileSystem` (SPEC §3, local facts).

Identity is the real path, versions come from `stat`, text is strict UTF-8, and every
mutation is one compare-and-swap critical section: a per-target lock in the process, an
advisory `flock` on the parent directory across processes, and a staged, fsynced, atomic
publication. Every mutation and every read the page cache can't answer at once run in
worker threads; the cheap metadata calls (`realpath`, `stat`, `lstat`), whole reads of small
files and cached stream chunks stay on the event loop.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import fcntl
import hashlib
import os
import shutil
import stat as st_mode
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from contextvars import ContextVar
from functools import partial
from pathlib import Path
from typing import Literal

import anyio
import anyio.lowlevel
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

from ._oserrors import invalid_path, translate
from ._staging import STAGE_PREFIX, new_stage_dir, sweep_stage_dirs
from ._versions import Published, RecentlyPublished, VersionBook, digest

__all__ = ["STAGE_PREFIX", "STREAM_CHUNK_SIZE", "LocalFileSystem", "publish_guard"]

STREAM_CHUNK_SIZE = 1024 * 1024
"""Bytes per `stream_text` read, into one reused buffer. Measured (100 MiB, tool-level read):
256 KiB and 512 KiB chunks cost more per byte in loop turns, 2 MiB ones fell out of the
CPU caches (a decoded chunk holding non-BMP characters takes 4 bytes per character)."""

INLINE_READ_BYTES = 64 * 1024
"""`read_text` reads files up to this size on the event loop (see `_read_small`)."""

BACKGROUND_DIGEST_BYTES = 512 * 1024
"""Published content larger than this is hashed in a helper thread (see `_Digest`)."""

BEFORE_LIMIT = 16 * 1024 * 1024
"""A write's outcome carries the prior text only for files up to this size (else None)."""


_OPEN_READ = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
"""O_NONBLOCK: opening a FIFO without a writer returns at once (then fstat refuses it)."""

_OPEN_STAGED = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC

publish_guard: ContextVar[Callable[[str, str], None] | None] = ContextVar(
    "dsh_fs_publish_guard", default=None
)
"""A hook for wrappers (the sandbox): ``guard(key, display)`` runs inside a write's or edit's
critical section (locks held, in the worker thread; anyio copies the context there) right
before the rename or link that publishes `key`. Raising an `FsError` refuses the mutation:
nothing is published. A context variable, not an attribute, so only the calls made through
the wrapper are checked."""

Verb = Literal["read", "write", "edit"]


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
    creates no file and does not stop writers that don't use dsh-fs. A write creates
    missing parent directories.

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
        self._locks = _TargetLocks()
        self._new_file_mode = 0o666 & ~_process_umask()
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
            type=_file_type(info.st_mode),
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
        kind = FsFileType.SYMLINK if link is not None else _file_type(info.st_mode)
        return FsPathInfo(display_path=display, type=kind, size=info.st_size, link_target=link)

    async def list_dir(self, target: FsTarget) -> list[FsDirEntry]:
        return await to_thread.run_sync(_list_dir, target.target_key, target.display_path)

    # --- reads ---------------------------------------------------------------------------

    async def read_text(self, target: FsTarget) -> str:
        key, display = target.target_key, target.display_path
        small = self._read_small(key, display)
        if small is not None:
            return small
        return await to_thread.run_sync(self._read_whole, key, display)

    async def read_bytes(self, target: FsTarget, max_bytes: int) -> bytes:
        return await to_thread.run_sync(
            _read_bytes, target.target_key, target.display_path, max_bytes
        )

    def stream_text(self, target: FsTarget) -> AbstractAsyncContextManager[AsyncIterator[str]]:
        return _stream_text(
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
        fd, info = _open_regular(key, "read", display)
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
        return _decode(data, "read", display)

    def _read_whole(self, key: str, display: str) -> str:
        fd, info = _open_regular(key, "read", display)
        try:
            data = _read_fd(fd, info.st_size)
            self._remember_read(fd, info, data)
        except OSError as exc:
            raise translate(exc, "read", display) from exc
        finally:
            os.close(fd)
        return _decode(data, "read", display)

    def _remember_read(self, fd: int, info: os.stat_result, data: bytes) -> None:
        if self._versions.wants_digest(info) and _unchanged(fd, info):
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
        try:
            data = content.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise messages.invalid_utf8("write", display) from exc
        data_digest = _Digest(data, self._hasher)
        parent = os.path.dirname(key)
        try:
            _make_parents(parent)
            with _directory_lock(parent) as dir_fd:
                before: str | None = None
                prior = _open_existing(key, "write", display)
                if prior is None:
                    if isinstance(expected, ReplaceIfVersion):
                        raise messages.write_gone(display)
                    prior_info = None
                else:
                    fd, prior_info = prior
                    try:
                        if isinstance(expected, CreateIfAbsent):
                            raise messages.overwrite_unobserved(display)
                        prior_bytes = _LazyContent(fd, prior_info.st_size)
                        ours = self._ours(key, prior_info, prior_bytes)
                        if isinstance(expected, ReplaceIfVersion) and not (
                            self._is_current(expected.version, prior_info, prior_bytes, ours)
                        ):
                            raise messages.write_stale(display)
                        if ours is not None:
                            before = ours.text
                        elif prior_info.st_size <= BEFORE_LIMIT:
                            before = _decode_or_none(prior_bytes())
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
            with _directory_lock(parent) as dir_fd:
                prior = _open_existing(key, "edit", display)
                if prior is None:
                    raise messages.edit_gone(display)
                fd, prior_info = prior
                try:
                    # The version check comes before matching: a stale edit is stale, never
                    # a match error.
                    content = _LazyContent(fd, prior_info.st_size)
                    ours = self._ours(key, prior_info, content)
                    if expected is not None and not (
                        self._is_current(expected, prior_info, content, ours)
                    ):
                        raise messages.edit_stale(display)
                    before = ours.text if ours is not None else content.text("edit", display)
                finally:
                    os.close(fd)
                del content  # the prior bytes: a large file's peak memory is text, not bytes
                after, count = apply_edit(before, edit, display)
                try:
                    data = after.encode("utf-8")
                except UnicodeEncodeError as exc:
                    raise messages.invalid_utf8("edit", display) from exc
                data_digest = _Digest(data, self._hasher)
                published = self._publish(key, display, data, prior_info, dir_fd, no_replace=False)
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

    def _ours(self, key: str, info: os.stat_result, content: _LazyContent) -> Published | None:
        """What this provider published last at `key`, if the file still holds exactly that."""
        return self._recent.match(key, self._versions.version(info), content)

    def _is_current(
        self,
        expected: FsVersion,
        info: os.stat_result,
        content: _LazyContent,
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
        dir_fd: int | None,
        *,
        no_replace: bool,
    ) -> os.stat_result:
        """Stage `data` next to `key`, fsync it, publish it, fsync the directory.

        Returns the stat of the published inode, taken once every link-count change is done
        (unlinking a staged hard link changes its ctime). Nothing staged survives a failure.
        """
        parent = os.path.dirname(key)
        if parent not in self._swept:
            # Under the directory lock: residue of a killed cooperating writer, once per
            # directory per provider.
            if len(self._swept) >= 4096:
                self._swept.clear()
            self._swept.add(parent)
            sweep_stage_dirs(parent)
        stage_dir = new_stage_dir(parent)
        staged = os.path.join(stage_dir, "content")
        try:
            fd = os.open(staged, _OPEN_STAGED, 0o600)
            try:
                _write_all(fd, data)
                if prior is None:
                    os.fchmod(fd, self._new_file_mode)
                else:
                    _keep_owner_and_mode(fd, prior)
                os.fsync(fd)
                guard = publish_guard.get()
                if guard is not None:
                    guard(key, display)
                if no_replace:
                    _link_no_replace(staged, key, display)
                    os.unlink(staged)
                else:
                    os.replace(staged, key)
                os.rmdir(stage_dir)
                if dir_fd is not None:
                    os.fsync(dir_fd)
                return os.fstat(fd)
            finally:
                os.close(fd)
        except BaseException:
            shutil.rmtree(stage_dir, ignore_errors=True)
            raise


# --- helpers (synchronous; run in worker threads unless noted) ---------------------------


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


class _LazyContent:
    """The bytes of an open file, read on first call and kept: the version check and the
    prior text share one read."""

    def __init__(self, fd: int, size_hint: int) -> None:
        self._fd = fd
        self._size_hint = size_hint
        self._data: bytes | None = None

    def __call__(self) -> bytes:
        if self._data is None:
            self._data = _read_fd(self._fd, self._size_hint)
        return self._data

    def text(self, verb: Verb, display: str) -> str:
        """The content as text. Read now, it fails at the first binary or non-UTF-8 chunk:
        an edit of a 5 GiB sparse file must not load 5 GiB of NULs first."""
        if self._data is not None:
            return _decode(self._data, verb, display)
        return _read_text_fd(self._fd, self._size_hint, verb, display)


def _unchanged(fd: int, info: os.stat_result) -> bool:
    """Whether the open file still has the stat it was opened with (nothing wrote meanwhile)."""
    now = os.fstat(fd)
    return (now.st_size, now.st_mtime_ns, now.st_ctime_ns) == (
        info.st_size,
        info.st_mtime_ns,
        info.st_ctime_ns,
    )


def _file_type(mode: int) -> FsFileType:
    if st_mode.S_ISREG(mode):
        return FsFileType.FILE
    if st_mode.S_ISDIR(mode):
        return FsFileType.DIRECTORY
    return FsFileType.OTHER


def _process_umask() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    # Not Linux: the set-and-restore dance (briefly racy with threads creating files).
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _open_regular(key: str, verb: Verb, display: str) -> tuple[int, os.stat_result]:
    """Open a regular file for reading and return the fd with its `fstat`.

    A stat first keeps devices from being opened at all; O_NONBLOCK keeps a FIFO swapped in
    meanwhile from blocking, and the `fstat` of the open fd is the authority.
    """
    try:
        if not st_mode.S_ISREG(os.stat(key).st_mode):
            raise messages.not_regular_file(verb, display)
        fd = os.open(key, _OPEN_READ)
    except OSError as exc:
        raise translate(exc, verb, display) from exc
    try:
        info = os.fstat(fd)
        if not st_mode.S_ISREG(info.st_mode):
            raise messages.not_regular_file(verb, display)
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def _open_existing(key: str, verb: Verb, display: str) -> tuple[int, os.stat_result] | None:
    """`_open_regular`, or None when nothing is at `key`."""
    try:
        return _open_regular(key, verb, display)
    except FsError as error:
        if error.code is FsErrorCode.NOT_FOUND and isinstance(error.__cause__, FileNotFoundError):
            return None
        raise


def _read_fd(fd: int, size_hint: int) -> bytes:
    chunks: list[bytes] = []
    want = max(size_hint + 1, 64 * 1024)
    while True:
        chunk = os.read(fd, want)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _read_text_fd(fd: int, size_hint: int, verb: Verb, display: str) -> str:
    """The rest of the file as strict UTF-8 text, read and checked chunk by chunk."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    parts: list[str] = []
    want = min(max(size_hint + 1, 64 * 1024), STREAM_CHUNK_SIZE)
    while True:
        chunk = os.read(fd, want)
        if b"\0" in chunk:
            raise messages.binary_file(verb, display)
        try:
            parts.append(decoder.decode(chunk, not chunk))
        except UnicodeDecodeError as exc:
            raise messages.invalid_utf8(verb, display) from exc
        if not chunk:
            return "".join(parts)


def _decode(data: bytes, verb: Verb, display: str) -> str:
    if b"\0" in data:
        raise messages.binary_file(verb, display)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise messages.invalid_utf8(verb, display) from exc


def _decode_or_none(data: bytes) -> str | None:
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _read_bytes(key: str, display: str, max_bytes: int) -> bytes:
    fd, info = _open_regular(key, "read", display)
    try:
        if info.st_size > max_bytes:
            raise _too_large(display, max_bytes)
        # Ask for one byte more than allowed: a file that grew meanwhile is refused, never
        # returned truncated.
        chunks: list[bytes] = []
        left = max_bytes + 1
        while left > 0:
            chunk = os.read(fd, left)
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        raise translate(exc, "read", display) from exc
    finally:
        os.close(fd)
    if left <= 0:
        raise _too_large(display, max_bytes)
    return b"".join(chunks)


def _too_large(display: str, max_bytes: int) -> FsError:
    return FsError(
        FsErrorCode.TOO_LARGE,
        f'cannot read "{display}": larger than {max_bytes} bytes',
        path=display,
    )


def _list_dir(key: str, display: str) -> list[FsDirEntry]:
    entries: list[FsDirEntry] = []
    try:
        with os.scandir(key) as scan:
            for entry in scan:
                try:
                    info = entry.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue  # removed while listing
                kind = (
                    FsFileType.SYMLINK
                    if st_mode.S_ISLNK(info.st_mode)
                    else _file_type(info.st_mode)
                )
                entries.append(FsDirEntry(name=entry.name, type=kind, size=info.st_size))
    except OSError as exc:
        raise translate(exc, "read", display) from exc
    entries.sort(key=lambda e: e.name)
    return entries


def _make_parents(parent: str) -> None:
    """`os.makedirs(parent, exist_ok=True)` without recursion: `makedirs` recurses once per
    missing component, so a path of thousands of them was a `RecursionError`, not an errno."""
    pending = [parent]
    while pending:
        path = pending[-1]
        try:
            os.mkdir(path)
        except FileNotFoundError:
            above = os.path.dirname(path)
            if above == path:
                raise
            pending.append(above)
            continue
        except FileExistsError as exc:
            if not os.path.isdir(path):
                raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), path) from exc
        pending.pop()


@contextmanager
def _directory_lock(parent: str) -> Iterator[int | None]:
    """Hold an exclusive `flock` on `parent` (an O_RDONLY fd); yields the fd, for fsync.

    Cooperating processes serialize their mutations of one directory here without any
    lock file. A missing or unreadable directory yields None: the caller's own calls then
    report what is wrong with the path.
    """
    try:
        fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except (FileNotFoundError, PermissionError):
        yield None
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield fd
    finally:
        os.close(fd)  # closing the last fd of the open file description releases the lock


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _keep_owner_and_mode(fd: int, prior: os.stat_result) -> None:
    if (prior.st_uid, prior.st_gid) != (os.geteuid(), os.getegid()):
        try:
            os.fchown(fd, prior.st_uid, prior.st_gid)
        except OSError:
            with contextlib.suppress(OSError):  # not root: the group alone, if we belong to it
                os.fchown(fd, -1, prior.st_gid)
    # After fchown, which clears set-id bits.
    os.fchmod(fd, st_mode.S_IMODE(prior.st_mode))


def _link_no_replace(staged: str, key: str, display: str) -> None:
    """Publish `staged` at `key` only if nothing is there; a hard link never replaces."""
    try:
        os.link(staged, key, follow_symlinks=False)
    except FileExistsError as exc:
        raise messages.overwrite_unobserved(display) from exc


# --- streaming -----------------------------------------------------------------------------


@asynccontextmanager
async def _stream_text(
    key: str, display: str, chunk_size: int, versions: VersionBook
) -> AsyncIterator[_TextChunks]:
    fd, info = await to_thread.run_sync(_open_regular, key, "read", display)
    chunks = _TextChunks(fd, display, chunk_size, info, versions)
    try:
        yield chunks
    finally:
        chunks.close()


_RWF_NOWAIT: int | None = getattr(os, "RWF_NOWAIT", None)


class _TextChunks:
    """Decoded chunks of an open file, read on the event loop while the page cache has them.

    Each chunk is first read with ``RWF_NOWAIT`` (Linux): the kernel copies what is cached
    and refuses (EAGAIN) rather than wait for the disk; only then does the read go to a
    worker thread. Decoding runs on the loop.

    Measured reason (2 cores, 100 MiB, window in the middle; the validating baseline reads,
    decodes and counts in ~145 ms): with a worker-thread hop per chunk, or a read-ahead
    task, the stream took ~210 ms, ~0.5 ms per chunk going to hops and GIL hand-offs
    between the two threads rather than to work. A decode holds the loop ~1.2 ms per MiB
    chunk (~4 ms for 4-byte characters), far inside the 50 ms p99 a concurrent small read
    is allowed; a cold disk never blocks it.

    A whole stream of a file small enough (or racy enough) is fingerprinted on the way, so
    its version can be backed by content like a `read_text`'s.
    """

    def __init__(
        self, fd: int, display: str, chunk_size: int, info: os.stat_result, versions: VersionBook
    ) -> None:
        self._fd = fd
        self._display = display
        self._buffer = bytearray(chunk_size + 3)  # room for a carried partial character
        self._offset = 0
        self._info = info
        self._versions = versions
        self._hash = hashlib.sha256() if versions.wants_digest(info) else None
        # An unfinished character's bytes, moved to the buffer's start for the next read.
        # `codecs.utf_8_decode` on the buffer itself: an incremental decoder first copies
        # each chunk onto its leftover (~1.43 vs ~1.17 ms per MiB, measured).
        self._carry = 0
        self._nowait = _RWF_NOWAIT
        self._done = False
        self._closed = False

    def __aiter__(self) -> _TextChunks:
        return self

    async def __anext__(self) -> str:
        while not self._done:
            count = self._read_cached()
            if count is None:
                count = await to_thread.run_sync(self._read_waiting)
            else:
                await anyio.lowlevel.checkpoint()  # other tasks run between chunks
            if self._closed:
                break  # the block that opened the stream was left meanwhile
            text = self._decode(count)
            if text:
                return text
        raise StopAsyncIteration

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._done = True
            os.close(self._fd)

    def _read_cached(self) -> int | None:
        """Bytes read into the buffer without waiting for the disk; None: it would wait."""
        if self._nowait is None or self._closed:
            return None
        try:
            return os.preadv(self._fd, [self._free()], self._offset, self._nowait)
        except BlockingIOError:
            return None
        except OSError as exc:
            if exc.errno in (errno.EOPNOTSUPP, errno.EINVAL):
                self._nowait = None  # this filesystem can't; wait in a thread from now on
                return None
            raise translate(exc, "read", self._display) from exc

    def _read_waiting(self) -> int:
        if self._closed:
            return 0  # the fd may belong to another file by now
        try:
            return os.preadv(self._fd, [self._free()], self._offset)
        except OSError as exc:
            raise translate(exc, "read", self._display) from exc

    def _free(self) -> memoryview:
        return memoryview(self._buffer)[self._carry :]

    def _decode(self, count: int) -> str:
        carry, end = self._carry, self._carry + count
        self._offset += count
        if self._buffer.find(0, carry, end) != -1:
            self._done = True
            raise messages.binary_file("read", self._display)
        if self._hash is not None:
            self._hash.update(memoryview(self._buffer)[carry:end])
        final = count == 0
        try:
            text, used = codecs.utf_8_decode(memoryview(self._buffer)[:end], "strict", final)
        except UnicodeDecodeError as exc:
            self._done = True
            raise messages.invalid_utf8("read", self._display) from exc
        self._carry = end - used
        self._buffer[: self._carry] = self._buffer[used:end]
        if final:
            self._done = True
            if self._hash is not None and _unchanged(self._fd, self._info):
                self._versions.remember(self._info, self._hash.digest())
        return text


# --- in-process locks ------------------------------------------------------------------------


class _TargetLocks:
    """One `anyio.Lock` per target key, dropped once nobody holds or awaits it."""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[anyio.Lock, list[int]]] = {}

    @asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = (anyio.Lock(), [0])
        lock, users = entry
        users[0] += 1
        try:
            async with lock:
                yield
        finally:
            users[0] -= 1
            if users[0] == 0:
                del self._entries[key]

    def __len__(self) -> int:
        return len(self._entries)
