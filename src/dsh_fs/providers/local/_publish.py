"""Publication: stage content privately, fsync it, and make it the file.

Content is staged in an unnamed ``O_TMPFILE`` file of the target's directory where the
platform and the filesystem have one (unless `TMPFILE_PUBLICATION` is off), else in a
private staging directory.
Every step works relative to the locked directory's descriptor (`*at` system calls), so the
content lands in the directory that was locked and checked, whatever happens to its path.
Synchronous: runs in the mutation's worker thread, locks held.
"""

from __future__ import annotations

import contextlib
import os
import stat as st_mode
import threading
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass

from dsh_fs import _platform
from dsh_fs._platform import sync
from dsh_fs.fs import EncodedText, messages

from ._io import Hasher, write_all
from ._staging import new_stage_dir_at, stage_file_name

__all__ = [
    "TMPFILE_PUBLICATION",
    "DeferredSync",
    "Publication",
    "Staged",
    "deferred_sync",
    "deferring",
    "publish",
    "writable_in_place",
]

PUBLICATION_ENV = "DSH_FS_PUBLICATION"
"""``staging`` chooses the private staging directory; anything else (the default) the
unnamed-file path where the platform has it. The torture runs and the bench choose each path
with it. The unnamed file is the default since issue 44: it costs what the leanest durable
rename costs (bench/publication.py: 7.6-8.0 ms against the rename's 7.8 ms at load ~9, the
staging directory 10.2-11.1 ms), where the directory's mkdir, cross-directory rename, rmdir
and the close that frees it were a fifth of a 1 MB write."""

TMPFILE_PUBLICATION = os.environ.get(PUBLICATION_ENV) != "staging"
"""Whether publication tries an unnamed ``O_TMPFILE`` file first, where the platform has
one and ``/proc`` to link it by (`_platform.open_unnamed`, `_platform.link_descriptor`); a
filesystem without ``O_TMPFILE`` still falls back per call."""

_OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_OPEN_STAGED = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC

_STAGED = "content"
"""The staged file's name inside its private staging directory."""


class DeferredSync:
    """What the publications of one batch (`LocalFileSystem.batch`) leave to its end: the
    directories they published into, each fsynced once there, and the journal commits that
    wait for it (an entry says a change happened only once the change is durable).

    Why it is safe: a publication's content is fsynced before its rename as always, so a
    power loss before the batch's end can only lose renames (a file then has its old
    content, whole), never tear a file; the batch's user makes its own record of what it
    changes durable first and removes it only after the end (a change set's intent record:
    a file found old is rolled back with the others). Ten files of one directory cost one
    directory fsync instead of ten. Used from the mutations' worker threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._directories: dict[tuple[int, int], int] = {}
        """A descriptor of each directory to fsync (opened through the publication's own:
        the directory it locked and checked, whatever happens to its path), by device and
        inode."""
        self._commits: list[tuple[Callable[[], None], Callable[[], None]]] = []
        """Each journaled change's commit, and its abandon should the fsync fail."""

    def directory(self, dir_fd: int) -> None:
        """Fsync the directory `dir_fd` (a publication's) when the batch ends."""
        info = os.fstat(dir_fd)
        with self._lock:
            if (info.st_dev, info.st_ino) not in self._directories:
                # Opened afresh, not `dup`ed: a duplicate would share the open file
                # description, and with it the directory's `flock`, held to the batch's end.
                self._directories[info.st_dev, info.st_ino] = os.open(".", _OPEN_DIR, dir_fd=dir_fd)

    def commit(self, commit: Callable[[], None], abandon: Callable[[], None]) -> None:
        """Run `commit` once the batch's changes are durable (`abandon` if they cannot be)."""
        with self._lock:
            self._commits.append((commit, abandon))

    def settle(self) -> None:
        """Fsync every directory, then commit the journaled changes in the order they were
        made (abandoned instead when a fsync failed, as a publication whose directory
        fsync fails abandons its record).

        Raises:
            OSError: a fsync failed (every descriptor is closed, every record settled).
        """
        with self._lock:
            directories, self._directories = list(self._directories.values()), {}
            commits, self._commits = self._commits, []
        failure: OSError | None = None
        for fd in directories:
            try:
                if failure is None:
                    sync(fd)
            except OSError as exc:
                failure = exc
            finally:
                os.close(fd)
        for commit, abandon in commits:
            (commit if failure is None else abandon)()
        if failure is not None:
            raise failure


_DEFERRED: ContextVar[DeferredSync | None] = ContextVar("dsh_fs_deferred_sync", default=None)
"""The batch the current task (and the worker threads it runs, which copy its context)
publishes in; None outside one."""


def deferred_sync() -> DeferredSync | None:
    """The current batch's `DeferredSync`, None outside a batch."""
    return _DEFERRED.get()


@contextlib.contextmanager
def deferring(batch: DeferredSync) -> Iterator[None]:
    """Make `batch` the current task's for the block (`LocalFileSystem.batch`)."""
    token = _DEFERRED.set(batch)
    try:
        yield
    finally:
        _DEFERRED.reset(token)


def _sync_directory(dir_fd: int) -> None:
    """Make a publication in `dir_fd` durable now, or at the current batch's end."""
    batch = _DEFERRED.get()
    if batch is None:
        sync(dir_fd)
    else:
        batch.directory(dir_fd)


@dataclass(frozen=True, slots=True, kw_only=True)
class Staged:
    """What a publication needs to know about the content and the file it replaces."""

    data: bytes | EncodedText
    """The bytes to publish (an encoded text's pieces, in order)."""
    prior: os.stat_result | None
    """The replaced file's stat (its mode and owner are kept); None for a new file."""
    new_file_mode: int
    """Permission bits of a new file (0o666 less the umask)."""
    mode: int | None = None
    """Permission bits to publish with instead (an undo restores the recorded mode)."""
    owner: tuple[int, int] | None = None
    """The owner and group a new file is given back when the process may (an undo that
    recreates a file, a copy across filesystems); None: the process's own."""
    hasher: Hasher | None = None
    """Fed the content as it is written (the version's digest, with no second pass)."""
    stamp: bool = False
    """Give the staged file a modification time no kernel stamp can equal (`_stamp`)."""


@dataclass(frozen=True, slots=True)
class Publication:
    """A published file."""

    info: os.stat_result
    """The stat of the published inode, taken once every link-count change is done."""
    generation: int | None
    """The published inode's generation when it carries the modification time
    `Staged.stamp` gave it (the filesystem kept every nanosecond of it): a file with that
    inode's version and generation was not changed since. None: not stamped."""


def publish(
    dir_fd: int,
    name: str,
    staged: Staged,
    display: str,
    check: Callable[[], None],
) -> Publication:
    """Stage `staged.data` in a fresh private directory in `dir_fd`, fsync it, run `check`
    (a wrapper's last look at the locked directory), then publish it as `name` and fsync the
    directory (in a batch: once, at its end, `DeferredSync`).

    A new file (`staged.prior` is None) is published with a hard link, which never replaces:
    a file that appeared meanwhile is `FS_NOT_OBSERVED`. A replacement is a rename. Returns
    the stat of the published inode, taken once every link-count change is done (unlinking
    a staged hard link changes its ctime). Nothing staged survives a failure.

    With `TMPFILE_PUBLICATION` the content is an unnamed file of the directory instead (no
    name exists before publication): a new file is linked as `name` directly (a link never
    replaces); a replacement is linked to a staging name (`stage_file_name`, swept like a
    staging directory if the process dies right there) and renamed over `name`.

    Returns the published inode's stat, and its generation when it kept `staged.stamp`'s
    time.

    Raises:
        FsError: `check`'s refusal, or `FS_NOT_OBSERVED` for a lost create.
        OSError: from the system calls; the caller maps it.
    """
    if TMPFILE_PUBLICATION and _platform.CURRENT.proc_fd:
        fd = _platform.open_unnamed(dir_fd)
        if fd is not None:
            return _publish_unnamed(fd, dir_fd, name, staged, display, check)
    return _publish_staged(dir_fd, name, staged, display, check)


def _publish_unnamed(
    fd: int, dir_fd: int, name: str, staged: Staged, display: str, check: Callable[[], None]
) -> Publication:
    """`publish` of the unnamed file `fd` (closed here): nothing to clean up on a failure
    before its link, and only the staging name between the link and the rename."""
    try:
        stamp = _fill(fd, staged)
        check()
        if staged.prior is None:
            try:
                _platform.link_descriptor(fd, name, dir_fd)
            except FileExistsError as exc:
                raise messages.overwrite_unobserved(display) from exc
        else:
            temporary = _link_to_stage_name(fd, dir_fd)
            try:
                os.replace(temporary, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary, dir_fd=dir_fd)
                raise
        _sync_directory(dir_fd)
        return _publication(os.fstat(fd), stamp)
    finally:
        os.close(fd)


def _publication(info: os.stat_result, stamp: tuple[int, int] | None) -> Publication:
    """The published inode (stat `info`), with its generation if `stamp` (the time set and
    the generation) held."""
    if stamp is None or info.st_mtime_ns != stamp[0]:
        return Publication(info=info, generation=None)
    return Publication(info=info, generation=stamp[1])


def _link_to_stage_name(fd: int, dir_fd: int) -> str:
    """Link the unnamed file `fd` into `dir_fd` under a fresh staging name; returns it."""
    while True:
        temporary = stage_file_name()
        try:
            _platform.link_descriptor(fd, temporary, dir_fd)
        except FileExistsError:
            continue
        return temporary


def _fill(fd: int, staged: Staged) -> tuple[int, int] | None:
    """Write the content, give it its owner and mode (and its stamp, returned), and fsync
    it."""
    write_all(fd, staged.data, staged.hasher)
    if staged.prior is None:
        mode = staged.new_file_mode if staged.mode is None else staged.mode
        if staged.owner is None:
            os.fchmod(fd, mode)
        else:
            _give_owner_and_mode(fd, *staged.owner, mode)
    else:
        prior = staged.prior
        mode = st_mode.S_IMODE(prior.st_mode) if staged.mode is None else staged.mode
        _give_owner_and_mode(fd, prior.st_uid, prior.st_gid, mode)
    stamp = _stamp(fd) if staged.stamp else None
    sync(fd)
    return stamp


def _stamp(fd: int) -> tuple[int, int] | None:
    """Set the modification time of the staged file `fd` to one nanosecond after the one
    its writing gave it; returns that time and the inode's generation. None, and nothing
    set, where the filesystem tells no generation or the time cannot be set.

    Why: a stat tuple proves a file unchanged only if every change changes it, and a
    kernel stamps times from a clock that ticks every few milliseconds: a rewrite of the
    same size within the tick of a publication kept its tuple, so the next mutation
    compared the file's bytes with the ones published (a twelfth of a 1 MB write, issue
    44). No kernel stamp equals this time: a change in the same tick is stamped with the
    tick's own time, one nanosecond earlier, and a later tick's time is later by the tick
    (a multigrain kernel stamps a change after a stat at its fine clock: microseconds
    later). A filesystem that keeps coarser times than nanoseconds drops the extra
    nanosecond, and the publication is not stamped (`Publication.generation`).

    The time alone does not name the file: another publisher stamping the same way in the
    same tick, into an inode of the same number (freed and drawn again), of the same size,
    would leave the same tuple. The inode's generation, which the filesystem draws anew each
    time it allocates the inode (ext4 and XFS at random), tells those apart; without one
    there is no stamp."""
    generation = _platform.inode_generation(fd)
    if generation is None:
        return None
    try:
        info = os.fstat(fd)
        stamp = info.st_mtime_ns + 1
        os.utime(fd, ns=(info.st_atime_ns, stamp))
    except OSError:  # not the file's owner without the privilege, a filesystem that refuses
        return None
    return stamp, generation


def _publish_staged(
    dir_fd: int, name: str, staged: Staged, display: str, check: Callable[[], None]
) -> Publication:
    """`publish` through a fresh private staging directory (the fallback)."""
    stage = new_stage_dir_at(dir_fd)
    stage_fd = os.open(stage, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
    try:
        fd = os.open(_STAGED, _OPEN_STAGED, 0o600, dir_fd=stage_fd)
        try:
            stamp = _fill(fd, staged)
            check()
            if staged.prior is None:
                _link_no_replace(stage_fd, name, dir_fd, display)
                os.unlink(_STAGED, dir_fd=stage_fd)
            else:
                os.replace(_STAGED, name, src_dir_fd=stage_fd, dst_dir_fd=dir_fd)
            os.rmdir(stage, dir_fd=dir_fd)
            _sync_directory(dir_fd)
            return _publication(os.fstat(fd), stamp)
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


def writable_in_place(name: str, dir_fd: int) -> bool:
    """Whether this process could write the file `name` in place (its permission bits, for
    the effective ids; root may). A replace by rename needs only the directory's
    permission: asking this keeps it from overriding a read-only file."""
    return os.access(name, os.W_OK, dir_fd=dir_fd, effective_ids=True)


def _give_owner_and_mode(fd: int, uid: int, gid: int, mode: int) -> None:
    """Give the staged file the owner `uid` and group `gid` (when allowed) and the
    permission bits `mode`, less a set-user-ID (set-group-ID) bit when the file could not be
    given that owner (group): a set-id file of someone else's is never made ours."""
    if (uid, gid) != (os.geteuid(), os.getegid()):
        try:
            os.fchown(fd, uid, gid)
        except OSError:
            with contextlib.suppress(OSError):  # not root: the group alone, if we belong to it
                os.fchown(fd, -1, gid)
    # Whom the file now belongs to matters only to a set-id bit: none, no `fstat`.
    if mode & (st_mode.S_ISUID | st_mode.S_ISGID):
        now = os.fstat(fd)
        if now.st_uid != uid:
            mode &= ~st_mode.S_ISUID
        if now.st_gid != gid:
            mode &= ~st_mode.S_ISGID
    # After fchown, which clears set-id bits.
    os.fchmod(fd, mode)


def _link_no_replace(stage_fd: int, name: str, dir_fd: int, display: str) -> None:
    """Publish the staged file as `name` only if nothing is there; a hard link never replaces."""
    try:
        os.link(_STAGED, name, src_dir_fd=stage_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
    except FileExistsError as exc:
        raise messages.overwrite_unobserved(display) from exc
