"""The local provider's file management (SPEC §10): move, mkdir, and the removal of an empty
directory or of a symbolic link, each one critical section like a write's.

A move holds the `flock` of both parent directories (in path order, so two movers never
deadlock) and works through their descriptors: the source entry is looked at without
following it, a file checked against the version its mover saw, the destination checked
against its guard, the guards asked about both directories, then one no-replace rename
(``renameat2(RENAME_NOREPLACE)``, else a hard link and an unlink for a file). Across
filesystems (``EXDEV``) a file is copied (staged and published like a write), verified
byte for byte and only then removed at its source, guarded again.

Synchronous: runs in a worker thread with the provider's in-process locks held.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import stat as st_mode
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Protocol

from dsh_fs._platform import renameat2, sync
from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import (
    ChangeKind,
    FsCapture,
    FsChangeStart,
    FsFileType,
    FsMkdirOutcome,
    FsMoveOutcome,
    FsTarget,
    FsVersion,
    ReplaceIfVersion,
    WriteGuard,
    messages,
)

from .._oserrors import map_os_errors
from ._dirs import directory_lock, make_parents
from ._guards import LocalGuards
from ._io import LazyContent, read_fd
from ._journal_store import LocalReplaced
from ._open import Opened, fd_path, open_existing
from ._publish import Staged, publish
from ._realpath import real_path
from ._versions import VersionBook, digest

__all__ = ["LocalManagement", "VersionCheck", "rename_no_replace"]

_CHANGE_KINDS = {FsFileType.DIRECTORY: ChangeKind.DIRECTORY, FsFileType.SYMLINK: ChangeKind.LINK}
"""The journal's kind of a moved entry that is not a regular file."""


_RENAME_NOREPLACE = 1


def rename_no_replace(src_fd: int, src: str, dst_fd: int, dst: str, *, is_dir: bool) -> None:
    """Rename `src` in `src_fd` to `dst` in `dst_fd`, never replacing anything.

    ``renameat2(RENAME_NOREPLACE)`` where libc and the filesystem have it; else, for a file
    or a link, a hard link then the unlink of the old name (a link never replaces); else a
    check then a plain rename, which only the directory locks protect (a directory where
    ``renameat2`` is missing, or a filesystem without hard links).

    Raises:
        FileExistsError: something is at `dst`.
        OSError: the rest (``EXDEV`` across filesystems); nothing was renamed.
    """
    function = renameat2()
    if function is not None:
        result = function(src_fd, os.fsencode(src), dst_fd, os.fsencode(dst), _RENAME_NOREPLACE)
        if result == 0:
            return
        code = ctypes.get_errno()
        if code not in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):
            raise OSError(code, os.strerror(code), src, None, dst)
    if not is_dir:
        try:
            os.link(src, dst, src_dir_fd=src_fd, dst_dir_fd=dst_fd, follow_symlinks=False)
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EMLINK):
                raise
        else:
            os.unlink(src, dir_fd=src_fd)
            return
    try:
        os.stat(dst, dir_fd=dst_fd, follow_symlinks=False)
    except FileNotFoundError:
        os.rename(src, dst, src_dir_fd=src_fd, dst_dir_fd=dst_fd)
        return
    raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), dst)


class VersionCheck(Protocol):
    """Whether an opened file is at `expected` (the mutations' version check)."""

    def __call__(self, key: str, opened: Opened, content: LazyContent, expected: FsVersion) -> bool:
        """True when the file opened as `opened` is at `expected`."""
        ...


class LocalManagement:
    """Moves, directory creation and removals of one `LocalFileSystem`.

    Args:
        versions: The provider's version book.
        guards: The wrapper's checks (the sandbox fence).
        is_current: The mutations' version check (digests where stat can't tell).
        roots: Directories that are never moved or removed (the provider's base).
        moved: Told `(source key, destination key, version)` when a file is renamed
            (`RecentlyPublished.moved`: what was kept for the source follows the inode).
    """

    def __init__(
        self,
        versions: VersionBook,
        guards: LocalGuards,
        is_current: VersionCheck,
        roots: tuple[str, ...],
        moved: Callable[[str, str, FsVersion], None] | None = None,
    ) -> None:
        self._versions = versions
        self._guards = guards
        self._is_current = is_current
        self._moved = moved
        self._roots = tuple(real_path(root) for root in roots)

    def _refuse_root(self, verb: messages.Verb, display: str, entry: str) -> None:
        if entry == os.sep or entry in self._roots:
            raise messages.is_root(verb, display)

    def move(
        self,
        source: FsTarget,
        destination: FsTarget,
        expected: FsVersion | None,
        replace: WriteGuard | None,
        capture: FsCapture | None = None,
    ) -> FsMoveOutcome:
        """`move` inside its critical section (see `LocalFileSystem.move`)."""
        src, dst = source.display_path, destination.display_path
        src_parent, src_name = _entry(src)
        dst_name = os.path.basename(dst)
        gone = messages.move_gone if expected is not None else _not_found_move
        with map_os_errors("move", src):
            try:
                first = os.lstat(os.path.join(src_parent, src_name))
            except FileNotFoundError:
                raise gone(src) from None
        src_entry = os.path.join(src_parent, src_name)
        self._refuse_root("move", src, src_entry)
        dst_parent = real_path(os.path.dirname(dst))
        if (dst_parent, dst_name) == (src_parent, src_name):
            raise messages.move_onto_itself(src, dst)
        if st_mode.S_ISDIR(first.st_mode) and (
            dst_parent == src_entry or dst_parent.startswith(src_entry + os.sep)
        ):
            raise messages.move_into_itself(src, dst)
        with map_os_errors("move", dst):
            make_parents(
                dst_parent,
                lambda fd, path: self._guards.check_directory("move", dst, fd_path(fd, path)),
            )
            dst_parent = real_path(dst_parent)
        with (
            map_os_errors("move", src),
            _locked(src_parent, dst_parent) as (src_fd, dst_fd),
        ):
            return self._move_locked(
                source,
                destination,
                expected,
                replace,
                (src_fd, src_parent, src_name),
                (dst_fd, dst_parent, dst_name),
                capture,
            )

    def _move_locked(
        self,
        source: FsTarget,
        destination: FsTarget,
        expected: FsVersion | None,
        replace: WriteGuard | None,
        src_at: tuple[int, str, str],
        dst_at: tuple[int, str, str],
        capture: FsCapture | None = None,
    ) -> FsMoveOutcome:
        src, dst = source.display_path, destination.display_path
        src_fd, src_parent, src_name = src_at
        dst_fd, dst_parent, dst_name = dst_at
        try:
            entry = os.stat(src_name, dir_fd=src_fd, follow_symlinks=False)
        except FileNotFoundError:
            raise (messages.move_gone if expected is not None else _not_found_move)(src) from None
        kind = _kind(entry.st_mode)
        if kind is FsFileType.OTHER:
            raise messages.not_regular_file("move", src)
        if expected is not None:
            if kind is FsFileType.DIRECTORY:
                # A directory is guarded by its identity (a journal's undo moving one back):
                # what changed in it moves with it, a rename loses nothing.
                if not self._versions.same_entry(entry, expected):
                    raise messages.move_stale(src)
            elif kind is FsFileType.SYMLINK:
                # A link never changes in place: its whole version (a new link may get the
                # old one's inode number).
                if self._versions.version(entry) != expected:
                    raise messages.move_stale(src)
            else:
                self._check_version(
                    os.path.join(src_parent, src_name), src, src_fd, expected, messages.move_stale
                )
        try:
            there = os.stat(dst_name, dir_fd=dst_fd, follow_symlinks=False)
        except FileNotFoundError:
            there = None
        replacing = there is not None
        if there is not None:
            if (
                not isinstance(replace, ReplaceIfVersion)
                or not st_mode.S_ISREG(there.st_mode)
                or kind is not FsFileType.FILE
            ):
                raise messages.move_exists(src, dst)
            self._check_version(
                os.path.join(dst_parent, dst_name),
                dst,
                dst_fd,
                replace.version,
                lambda _: messages.move_destination_stale(src, dst),
            )
        self._guards.check_delete(src, fd_path(src_fd, src_parent))
        self._guards.check_publish("move", dst, fd_path(dst_fd, dst_parent))
        now = os.stat(src_name, dir_fd=src_fd, follow_symlinks=False)
        if (now.st_dev, now.st_ino) != (entry.st_dev, entry.st_ino):
            raise messages.move_stale(src)
        ticket: object = None
        if capture is not None:
            ticket = capture.prepare(
                self._start(source, destination, dst_fd, dst_name, there, now, kind)
            )
        try:
            if replacing:
                os.rename(src_name, dst_name, src_dir_fd=src_fd, dst_dir_fd=dst_fd)
            else:
                rename_no_replace(
                    src_fd, src_name, dst_fd, dst_name, is_dir=kind is FsFileType.DIRECTORY
                )
        except FileExistsError:
            if capture is not None:
                capture.abandon(ticket)
            raise messages.move_exists(src, dst) from None
        except OSError as exc:
            if exc.errno != errno.EXDEV or kind is not FsFileType.FILE:
                if capture is not None:
                    capture.abandon(ticket)
                if exc.errno == errno.EXDEV:
                    raise messages.move_across_filesystems(src) from exc
                raise
            return self._copy_move(src, dst, src_at, dst_at, entry, there, capture, ticket)
        except BaseException:
            if capture is not None:
                capture.abandon(ticket)
            raise
        after = None
        try:
            sync(dst_fd)
            if src_fd != dst_fd:
                sync(src_fd)
            # The moved entry as it is now (a rename moves a directory's or a link's ctime):
            # what an undo finds it by.
            after = self._versions.version(os.stat(dst_name, dir_fd=dst_fd, follow_symlinks=False))
        finally:
            if kind is FsFileType.FILE and self._moved is not None:
                # Renamed, whatever happens below: the kept copy follows the inode.
                self._moved(
                    source.target_key,
                    destination.target_key,
                    after if after is not None else self._versions.version(now),
                )
            if capture is not None:
                capture.commit(ticket, after, None)
        version = after if kind is FsFileType.FILE else None
        return FsMoveOutcome(type=kind, version=version, replaced=replacing)

    def _start(
        self,
        source: FsTarget,
        destination: FsTarget,
        dst_fd: int,
        dst_name: str,
        there: os.stat_result | None,
        moved: os.stat_result,
        kind: FsFileType,
    ) -> FsChangeStart:
        """What the journal is told about a move: the destination's replaced file (kept as
        the pre-image; only a file replaces one) and the source's version; a directory or
        a link says what it is."""
        moved_version = self._versions.version(moved)
        if there is None:
            return FsChangeStart(
                target=destination,
                verb="move",
                before=None,
                pre_image=None,
                source=source,
                source_version=moved_version,
                kind=_CHANGE_KINDS.get(kind, ChangeKind.FILE),
            )
        return FsChangeStart(
            target=destination,
            verb="move",
            before=self._versions.version(there),
            pre_image=LocalReplaced(dir_fd=dst_fd, name=dst_name, info=there),
            mode=st_mode.S_IMODE(there.st_mode),
            size=there.st_size,
            uid=there.st_uid,
            gid=there.st_gid,
            source=source,
            source_version=moved_version,
        )

    def _check_version(
        self,
        key: str,
        display: str,
        dir_fd: int,
        expected: FsVersion,
        stale: Callable[[str], FsError],
    ) -> None:
        opened = open_existing(key, "move", display, self._guards, dir_fd)
        if opened is None:
            raise messages.move_gone(display)
        try:
            content = LazyContent(opened.fd, opened.info.st_size)
            if not self._is_current(key, opened, content, expected):
                raise stale(display)
        finally:
            os.close(opened.fd)

    def _copy_move(
        self,
        src: str,
        dst: str,
        src_at: tuple[int, str, str],
        dst_at: tuple[int, str, str],
        entry: os.stat_result,
        there: os.stat_result | None,
        journal: FsCapture | None = None,
        ticket: object = None,
    ) -> FsMoveOutcome:
        """Across filesystems: publish a copy like a write (staged, fsynced, no-replace
        unless the destination was checked), verify it byte for byte, then remove the
        source if it is still the entry that was copied. A journaled move's entry is
        committed once the copy is published (abandoned when it is not)."""
        src_fd, src_parent, src_name = src_at
        dst_fd, dst_parent, dst_name = dst_at
        opened = open_existing(
            os.path.join(src_parent, src_name), "move", src, self._guards, src_fd
        )
        if opened is None:
            raise messages.move_gone(src)
        try:
            data = read_fd(opened.fd, opened.info.st_size)
            copied = opened.info
        finally:
            os.close(opened.fd)
        # The copy keeps the moved file's owner when the process may (else it loses its
        # set-id bits): a move, and its undo, never hand another user's file to us.
        staged = Staged(
            data=bytes(data),
            prior=there,
            new_file_mode=st_mode.S_IMODE(copied.st_mode),
            owner=(copied.st_uid, copied.st_gid),
        )
        try:
            published = publish(
                dst_fd,
                dst_name,
                staged,
                dst,
                lambda: self._guards.check_publish("move", dst, fd_path(dst_fd, dst_parent)),
            ).info
        except BaseException as error:
            if journal is not None:
                journal.abandon(ticket)
            if isinstance(error, FsError) and error.code is FsErrorCode.NOT_OBSERVED:
                raise messages.move_exists(src, dst) from error
            raise
        if journal is not None:
            journal.commit(ticket, self._versions.version(published), None)
        check = os.open(dst_name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dst_fd)
        try:
            same = digest(read_fd(check, published.st_size)) == digest(data)
        finally:
            os.close(check)
        if not same:
            raise messages.move_left_both(src, dst, "the copy does not match the source")
        try:
            now = os.stat(src_name, dir_fd=src_fd, follow_symlinks=False)
            if (now.st_dev, now.st_ino, now.st_size, now.st_mtime_ns) != (
                entry.st_dev,
                entry.st_ino,
                copied.st_size,
                copied.st_mtime_ns,
            ):
                raise messages.move_left_both(src, dst, "the source changed meanwhile")
            os.unlink(src_name, dir_fd=src_fd)
            sync(src_fd)
        except OSError as exc:
            raise messages.move_left_both(src, dst, os.strerror(exc.errno or errno.EIO)) from exc
        return FsMoveOutcome(
            type=FsFileType.FILE,
            version=self._versions.version(published),
            replaced=there is not None,
        )

    def mkdir(self, target: FsTarget, capture: FsCapture | None = None) -> FsMkdirOutcome:
        """`mkdir`: each missing directory made in a directory the guards saw; a journaled
        one is told to `capture` first and committed with the new directory's version."""
        display = target.display_path
        path = str(target.target_key)
        with map_os_errors("mkdir", display):
            try:
                info = os.stat(path)
            except FileNotFoundError:
                info = None
            except NotADirectoryError:
                raise messages.mkdir_blocked(display) from None
            if info is not None:
                if not st_mode.S_ISDIR(info.st_mode):
                    raise messages.mkdir_blocked(display)
                return FsMkdirOutcome(created=False)
            ticket: object = None
            if capture is not None:
                start = FsChangeStart(
                    target=target,
                    verb="mkdir",
                    before=None,
                    pre_image=None,
                    kind=ChangeKind.DIRECTORY,
                )
                ticket = capture.prepare(start)
            try:
                make_parents(
                    path,
                    lambda fd, at: self._guards.check_directory("mkdir", display, fd_path(fd, at)),
                )
            except (NotADirectoryError, FileExistsError):
                if capture is not None:
                    capture.abandon(ticket)
                raise messages.mkdir_blocked(display) from None
            except BaseException:
                if capture is not None:
                    capture.abandon(ticket)
                raise
            if capture is not None:
                version: FsVersion | None = None
                with contextlib.suppress(OSError):
                    version = self._versions.version(os.stat(path, follow_symlinks=False))
                capture.commit(ticket, version, None)
        return FsMkdirOutcome(created=True)

    def delete_dir(self, target: FsTarget) -> None:
        """`delete_dir`: the empty directory the path names, removed in its locked parent."""
        display = target.display_path
        parent, name = _entry(display)
        self._refuse_root("delete", display, os.path.join(parent, name))
        with map_os_errors("delete", display), directory_lock(parent) as dir_fd:
            try:
                entry = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            except FileNotFoundError:
                raise messages.not_found("delete", display) from None
            if not st_mode.S_ISDIR(entry.st_mode):
                raise messages.not_a_directory("delete", display)
            self._guards.check_delete(display, fd_path(dir_fd, parent))
            try:
                os.rmdir(name, dir_fd=dir_fd)
            except OSError as exc:
                if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
                    raise messages.not_empty(display) from None
                raise
            sync(dir_fd)

    def delete_link(self, target: FsTarget) -> None:
        """`delete_link`: the link itself, if the entry is still a link."""
        display = target.display_path
        parent, name = _entry(display)
        with map_os_errors("delete", display), directory_lock(parent) as dir_fd:
            try:
                entry = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            except FileNotFoundError:
                raise messages.not_found("delete", display) from None
            if not st_mode.S_ISLNK(entry.st_mode):
                raise messages.delete_stale(display)
            self._guards.check_delete(display, fd_path(dir_fd, parent))
            os.unlink(name, dir_fd=dir_fd)
            sync(dir_fd)


def _entry(display: str) -> tuple[str, str]:
    """The entry a display path names: its directory's real path and its own name
    (a final link not followed)."""
    return real_path(os.path.dirname(display)), os.path.basename(display)


def _kind(mode: int) -> FsFileType:
    if st_mode.S_ISLNK(mode):
        return FsFileType.SYMLINK
    if st_mode.S_ISDIR(mode):
        return FsFileType.DIRECTORY
    if st_mode.S_ISREG(mode):
        return FsFileType.FILE
    return FsFileType.OTHER


def _not_found_move(display: str) -> FsError:
    return messages.not_found("move", display)


@contextmanager
def _locked(first: str, second: str) -> Iterator[tuple[int, int]]:
    """The `flock` of both directories, taken in path order; one lock when they are the
    same directory."""
    if first == second:
        with directory_lock(first) as fd:
            yield fd, fd
        return
    low, high = sorted((first, second))
    with directory_lock(low) as low_fd, directory_lock(high) as high_fd:
        yield (low_fd, high_fd) if low == first else (high_fd, low_fd)
