"""The local change journal's store (SPEC §9): entries and pre-images on the local disk.

Layout: ``<location>/<sha256 of the root, 32 hex>/`` (0700) holds ``root`` (the canonical
root it records), and per change ``<id>.pre`` (the pre-image: the replaced inode kept by a
hard link when it is on the same filesystem and has no other link, else a reflink, else a
copy; 0600 when copied), ``<id>.pending`` (written, fsynced and `flock`ed before the
publication, and before its name exists where the filesystem has ``O_TMPFILE``; its writer
holds the lock until the commit; made before the pre-image it names; marked ``"pending":
true``) and ``<id>.json`` (the committed entry, 0600: the pending record itself, its bytes
written over in place and renamed, or, larger than a page, staged as
``<id>.<random>.tmp``). A crash between the pending record and the commit leaves the
pending record unlocked: the next reader completes it (the file changed from its `before`:
published, the entry is kept with the version found) or drops it with its pre-image and
staged entry (not published: no entry, no stray); an entry still marked (a power loss kept
its name, not its bytes) is completed likewise. Several processes append safely: every
name is new (``O_EXCL``), ids carry a random suffix, and pruning holds ``lock``. Nothing in
the store is trusted: every name is opened without following links and without blocking
(a FIFO put there is refused, not waited on), checked to be a regular file and read within
a bound.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import secrets
import stat as st_mode
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from dsh_fs import _platform
from dsh_fs._platform import copy_in_kernel, sync
from dsh_fs.fs import (
    ENTRY_ID,
    ChangeKind,
    EncodedText,
    FsChangeMeta,
    FsChangeStart,
    FsPreImage,
    FsVersion,
    JournalEntry,
)

from .._journal_records import (
    COUNT_LIMIT,
    RECORD_LIMIT,
    Damaged,
    content_fields,
    count_lines,
    new_record,
    record_owner,
)
from .._journal_store import PendingChange, RecordStore, StoredName, parse_record
from ._io import write_all
from ._versions import VersionBook, same_inode

__all__ = [
    "LocalJournalStore",
    "LocalKept",
    "LocalReplaced",
    "default_journal_location",
    "read_kept",
]

_OPEN_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_OPEN_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
"""How anything in the store is opened for reading: a link is refused (ELOOP) and a FIFO
or device does not block the open; `fstat` then refuses what is not a regular file."""
_OPEN_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
"""A directory the journal looks at in a root: never through a link."""

_IN_PLACE_LIMIT = 4096
"""The largest entry a commit writes over its pending record (`_commit_in_place`): one page
(no system has a smaller one), copied by the kernel whole or not at all."""

_RACY_NS = 2_000_000_000
"""A record changed more recently than this (by its ctime) is read again at every reading:
a rewrite within the clock's coarse tick leaves its stamp as it was."""


@dataclass(frozen=True, slots=True, kw_only=True)
class LocalReplaced(FsPreImage):
    """The entry `name` of the locked directory `dir_fd` that a change replaces (stat
    `info`), handed to the store inside the critical section."""

    dir_fd: int
    name: str
    info: os.stat_result


@dataclass(frozen=True, slots=True)
class LocalKept(FsPreImage):
    """A pre-image in the store: the file an undo copies its bytes from, and the replaced
    file's recorded size, mode and owner (an undo that recreates the file gives them back
    when it may)."""

    path: str
    """The pre-image's path in the store."""
    size: int | None = None
    """Its recorded size (another size: damaged, refused)."""
    mode: int | None = None
    """The replaced file's permission bits."""
    uid: int | None = None
    """The replaced file's owner."""
    gid: int | None = None
    """The replaced file's group."""


def default_journal_location() -> str:
    """``$XDG_STATE_HOME/dsh-fs/journal``, else ``~/.local/state/dsh-fs/journal``."""
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state"
    )
    return os.path.join(os.path.abspath(state), "dsh-fs", "journal")


def read_kept(kept: LocalKept, limit: int | None = None) -> bytes | None:
    """The bytes of a kept pre-image: a regular file of its recorded size (a link, a FIFO
    or another size put in its place is refused); None when larger than `limit`.

    Raises:
        OSError: from the system calls (ELOOP for a symbolic link put in its place, EINVAL
            for what is not a regular file of its recorded size).
    """
    fd = os.open(kept.path, _OPEN_READ)
    try:
        info = _regular(fd, "the kept pre-image")
        if kept.size is not None and info.st_size != kept.size:
            raise OSError(errno.EINVAL, "the kept pre-image is not of its recorded size")
        if limit is not None and info.st_size > limit:
            return None
        return _read_exactly(fd, info.st_size, "the kept pre-image")
    finally:
        os.close(fd)


def _regular(fd: int, what: str) -> os.stat_result:
    """The stat of `fd`, a regular file (else EINVAL: never read)."""
    info = os.fstat(fd)
    if not st_mode.S_ISREG(info.st_mode):
        raise OSError(errno.EINVAL, f"{what} is not a regular file")
    return info


def _read_exactly(fd: int, size: int, what: str) -> bytes:
    """The `size` bytes of the regular file `fd` (its `O_NONBLOCK` means nothing for one),
    in one read where it can (no chunks joined: one copy in memory); a file that grew
    meanwhile is refused rather than read without end (the read asks one byte more)."""
    parts = [os.read(fd, size + 1)]
    got = len(parts[0])
    # A short read of a regular file is its end; only an interrupted one reads on.
    while got < size and (chunk := os.read(fd, size + 1 - got)):
        parts.append(chunk)
        got += len(chunk)
    if got > size:
        raise OSError(errno.EINVAL, f"{what} grew while it was read")
    return parts[0] if len(parts) == 1 else b"".join(parts)


@dataclass(slots=True, kw_only=True)
class _Ticket(PendingChange):
    """A change between `prepare` and `commit`: its pending record, locked."""

    fd: int
    """The pending record, open and locked (`flock`) while its writer lives."""
    written: bytes = b""
    """The pending record's bytes, as `prepare` wrote them (the commit writes over them)."""
    fields: dict[str, Any] | None = None
    """The record's `content_fields`, made while the content was written (the provider told
    it ahead, `FsChangeStart.after`); None: made at the commit."""
    after: object = None
    """The content they are made from (used only for a commit of that very content)."""


class LocalJournalStore(RecordStore):
    """The journal of one canonical root, in a sub-store of `location`.

    Args:
        location: The store directory (sub-stores per root inside); created 0700.
        root: The canonical root whose changes it records.

    Raises:
        OSError: the store cannot be created or opened.
    """

    def __init__(self, location: str, root: str) -> None:
        super().__init__()
        self.root = root
        base = os.path.abspath(location)
        _make_private_dirs(base)
        digest = hashlib.sha256(os.fsencode(root)).hexdigest()[:32]
        self.location = os.path.join(base, digest)
        _make_private_dirs(self.location)
        self._dir_fd = os.open(self.location, _OPEN_DIR)
        # Its idle thread ends when the store is collected: it makes a pending record's
        # bytes durable while the caller fsyncs the directory (and closes a committed
        # record, off the path).
        self._syncer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dsh-fs-journal-sync")
        self._versions = VersionBook()
        self._spare: int | None = None
        """The next pending record's unnamed file, made ahead (`_make_spare`)."""
        self._spare_lock = threading.Lock()
        with contextlib.suppress(FileExistsError):
            fd = os.open("root", _OPEN_NEW, 0o600, dir_fd=self._dir_fd)
            try:
                write_all(fd, os.fsencode(root) + b"\n")
            finally:
                os.close(fd)

    # The capture: inside the provider's critical section.

    def _prepare(self, meta: FsChangeMeta, start: FsChangeStart) -> object:
        target = start.target
        record = new_record(meta, start, self._relative(target.target_key), target.target_key)
        entry_id = record["id"]
        kept = isinstance(start.pre_image, LocalReplaced)
        record["kept"] = kept
        if start.kind is ChangeKind.DIRECTORY and start.before is not None:
            # The directory about to be removed: which one it is (the directory a mkdir
            # made, though names came and went in it), for the undo of that mkdir.
            record["before_generation"] = self._directory_generation(
                target.target_key, start.before
            )
        before = start.content
        # The bytes of an `EncodedText` are valid UTF-8 (a provider's prior that is not
        # text is refused before publication, and the fields serve only a published one).
        before_utf8 = isinstance(before, EncodedText)
        if isinstance(before, EncodedText):
            before = before.to_bytes() if before.size <= COUNT_LIMIT else None
        elif before is not None and len(before) > COUNT_LIMIT:
            before = None  # too large to count lines of (`count_lines` would not)
        fd = -1
        fields = None
        try:
            # The pending record first, whole and locked before its name exists; then the
            # pre-image it names; then one directory fsync makes both names durable. A
            # writer killed anywhere here leaves at most an unlocked record whose file is
            # unchanged: the next reader removes it and its pre-image.
            # Marked: a committed name holding these bytes is a commit that never reached
            # the disk (`_commit_in_place`), completed by its reader as a dead writer's.
            written = json.dumps(record | {"pending": True}).encode()
            fd = self._pending(entry_id, written)
            if isinstance(start.pre_image, LocalReplaced):
                self._keep(start.pre_image, entry_id + ".pre")
            # The record's bytes and the directory's two names, both durable before the
            # publication: two fsyncs at once (a journaling filesystem commits them together).
            synced = self._syncer.submit(sync, fd)
            try:
                sync(self._dir_fd)
            finally:
                synced.result()
            # What the entry keeps of the content it will publish (line counts, delta, and
            # a digest where the delta does not tell the bytes): made here, in the thread
            # that keeps the record while the provider writes and fsyncs the content, rather
            # than after the publication or in a thread of its own (a hop cost more than the
            # ~0.1 ms of one trim and one text check of 1 MB).
            if start.after is not None and (before is not None or start.before is None):
                fields = _fields_or_none(
                    created=start.before is None,
                    before=before,
                    before_utf8=before_utf8,
                    content=start.after,
                    codec=codec if isinstance(codec := record.get("codec"), str) else None,
                )
        except BaseException:
            if fd >= 0:
                os.close(fd)
            self._remove(entry_id + ".pending", entry_id + ".pre" if kept else None)
            raise
        return _Ticket(
            id=entry_id,
            fd=fd,
            written=written,
            record=record,
            kept=kept,
            before=before,
            before_utf8=before_utf8,
            fields=fields,
            after=start.after,
        )

    def _failure(self, exc: Exception, start: FsChangeStart) -> str:
        if isinstance(exc, OSError):
            return (exc.strerror or str(exc)).lower()
        return str(exc) or type(exc).__name__

    def _commit(
        self,
        ticket: object,
        after: FsVersion | None,
        content: bytes | EncodedText | None,
        digest: bytes | None = None,
    ) -> int | None:
        assert isinstance(ticket, _Ticket)
        size = None
        try:
            fields = None
            if after is not None and content is not None and content is ticket.after:
                fields = ticket.fields
            if fields is not None:
                record = ticket.record
                record["after"] = after
                record.update(fields)  # made beside the publication, from this content
            else:
                record = self._completed(ticket, after, content, digest)
            record["after_mode"] = self._published_mode(record["key"], after)
            if record.get("kind") == ChangeKind.DIRECTORY.value and after is not None:
                record["after_generation"] = self._directory_generation(record["key"], after)
            size = self._commit_in_place(ticket, record)
            in_place = size is not None
            if size is None:
                size = self._write_entry(ticket.id, record)
        except Exception:
            written = in_place = False  # the pending record stays: its next reader completes it
            size = None  # counted by its estimate
        else:
            written = True
        # A pending record left beside its entry goes off the caller's path (freeing its
        # inode costs a journal write): once the entry exists, a reader leaves the record
        # alone while it is locked and removes it when it is not (this process died first).
        fd, name, dir_fd = ticket.fd, ticket.id + ".pending", self._dir_fd
        pre = ticket.id + ".pre" if ticket.kept else None

        def finish() -> None:
            try:
                if written and not in_place:
                    os.unlink(name, dir_fd=dir_fd)
            except OSError:
                pass
            finally:
                os.close(fd)
            if pre is not None:
                _uncache(pre, dir_fd)
            self._make_spare()

        try:
            self._syncer.submit(finish)
        except RuntimeError:  # the store is closed
            finish()
        return size

    def _commit_in_place(self, ticket: _Ticket, record: dict[str, Any]) -> int | None:
        """Make the pending record its committed entry, rather than stage the entry in a new
        file: creating an inode cost ~0.05-0.2 ms of CPU on the call's path here (under
        load), and the pending record's removal beside it goes too. The entry's bytes are
        written over the pending record's in one write that fits a page (the kernel copies
        it whole or fails before copying: a kill never leaves a torn record, a failure
        leaves the pending record as it was, and the one reader that reads a record locked
        by a live writer reads it again, `_read_live`), then the record takes the entry's
        name (a link: never over an existing entry). Returns the record's size; None, nothing
        changed, for a record larger than a page (the entry is staged then).

        A process killed after the write leaves a pending record holding its entry: the
        next reader completes it like any dead writer's. Like a staged entry, this one is
        not fsynced (its pending record is durable): a power loss may keep its new name
        without the bytes written over, that is with the marked pending record, which its
        reader completes (`_read_records`)."""
        # Padded over every byte of the pending record (JSON allows trailing spaces).
        data = json.dumps(record).encode().ljust(len(ticket.written))
        if len(data) > _IN_PLACE_LIMIT:
            return None
        if os.pwrite(ticket.fd, data, 0) != len(data):
            # A write of one page is never short (all or an error); were it ever, the
            # pending record is put back whole before anything depends on it.
            os.pwrite(ticket.fd, ticket.written, 0)
            os.ftruncate(ticket.fd, len(ticket.written))
            raise OSError(errno.EIO, "the entry was written short")
        name = ticket.id + ".pending"
        os.link(name, ticket.id + ".json", src_dir_fd=self._dir_fd, dst_dir_fd=self._dir_fd)
        with contextlib.suppress(OSError):  # left beside its entry: a reader removes it
            os.unlink(name, dir_fd=self._dir_fd)
        return len(data)

    def _pending_pre_image(self, entry_id: str, limit: int) -> bytes | None:
        return read_kept(LocalKept(os.path.join(self.location, entry_id + ".pre")), limit)

    def _abandon(self, ticket: object) -> None:
        assert isinstance(ticket, _Ticket)
        try:
            self._remove(ticket.id + ".pending", ticket.id + ".pre" if ticket.kept else None)
        finally:
            os.close(ticket.fd)

    # Reading, undoing and pruning (the rest is `RecordStore`'s).

    def _names(self, sized: bool = True) -> dict[str, StoredName]:
        names: dict[str, StoredName] = {}
        # The directory's entry types tell a regular file without a stat (one system call
        # per name saved on every `log`); a size is looked up only where it is needed, and
        # a record's stamp (what tells a record read before from a rewritten one: a new
        # inode, or the same one written in place, which moves its ctime). The clock a
        # ctime is taken from ticks coarsely: a file changed within the last seconds gets
        # no stamp (read every time), so a same-size rewrite in the same tick is never
        # taken for the record read before it (git's "racy" entries, likewise).
        settled = time.time_ns() - _RACY_NS
        with os.scandir(self._dir_fd) as found:
            for entry in found:
                name = entry.name
                stamp: object = None
                try:
                    regular = entry.is_file(follow_symlinks=False)
                    if sized or name.endswith((".pre", ".json")):
                        info = entry.stat(follow_symlinks=False)
                        size = info.st_size
                        if regular and info.st_ctime_ns < settled:
                            stamp = (info.st_ino, size, info.st_mtime_ns, info.st_ctime_ns)
                    else:
                        size = 0
                except FileNotFoundError:
                    continue
                names[name] = StoredName(size=size, regular=regular, stamp=stamp)
        return names

    def _read_records(self, names: list[str], listed: dict[str, StoredName]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in names:
            try:
                record = self._read_json(name)
                if record.get("pending") is True and name.endswith(".json"):
                    record = self._recommitted(name[: -len(".json")], record, listed)
                out[name] = record
            except (OSError, ValueError, RecursionError) as exc:
                out[name] = exc
        return out

    def _recommitted(
        self, stem: str, record: dict[str, Any], names: dict[str, StoredName]
    ) -> dict[str, Any]:
        """An entry that holds its marked pending record: a commit in place whose bytes a
        power loss lost after its name was kept (`_commit_in_place`; or an older reader
        settled a pending record without removing the mark). Its change was published (a
        commit follows the publication), so it is completed as a dead writer's record
        would be, and stored so.

        Raises:
            Damaged: the disk shows the change was never published after all.
        """
        completed = self._completed_as_found(stem, record, names)
        if completed is None:
            raise Damaged("a record never committed")
        self._write_entry(stem, completed, replace=True)
        return completed

    def pre_image(self, entry_id: str) -> FsPreImage | None:
        if not ENTRY_ID.match(entry_id):
            return None
        path = os.path.join(self.location, entry_id + ".pre")
        try:
            info = os.lstat(path)
            record = self._read_json(entry_id + ".json")
            size = record.get("size")
            mode, uid, gid = record_owner(record)
        except (OSError, ValueError, TypeError):
            return None  # no pre-image, or one whose record is damaged: never applied
        if not st_mode.S_ISREG(info.st_mode) or (isinstance(size, int) and info.st_size != size):
            return None
        return LocalKept(
            path, size=size if isinstance(size, int) else None, mode=mode, uid=uid, gid=gid
        )

    def pre_image_bytes(self, entry_id: str, limit: int) -> bytes | None:
        kept = self.pre_image(entry_id)
        if not isinstance(kept, LocalKept):
            return None
        try:
            return read_kept(kept, limit)
        except OSError:
            return None

    def _replace_record(self, entry_id: str, record: dict[str, Any]) -> None:
        self._write_entry(entry_id, record, replace=True)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        lock = self._open_lock()
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield
        finally:
            os.close(lock)

    def _open_lock(self) -> int:
        """``lock``, a regular file: opened without following a link or blocking on a
        FIFO; anything else found there is removed (nobody can hold a lock on it) and the
        file made anew."""
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        for _ in range(3):
            try:
                lock = os.open("lock", flags, 0o600, dir_fd=self._dir_fd)
            except OSError as exc:
                # A link (ELOOP), a directory (EISDIR), a socket (ENXIO): nothing to lock.
                if exc.errno not in (errno.ELOOP, errno.EISDIR, errno.ENXIO):
                    raise
            else:
                if st_mode.S_ISREG(os.fstat(lock).st_mode):
                    return lock
                os.close(lock)
            self._remove("lock")
            self._remove_directory("lock")
            flags |= os.O_EXCL
        raise OSError(errno.EAGAIN, "the journal's lock keeps being replaced")

    def _sweep(self, names: dict[str, StoredName]) -> None:
        # A pruner killed mid-way left its staged entry: no pending record owns it. Counted
        # still, it kept the total over the bound until every entry went (red team).
        stray = [
            n for n in names if n.endswith(".tmp") and f"{n.rsplit('.', 2)[0]}.pending" not in names
        ]
        self._remove(*stray)
        for name in stray:
            del names[name]

    def as_published(self, entry: JournalEntry, now: FsVersion) -> bool:
        if entry.after == now:
            return True
        if entry.after is None or not self.unchanged(entry.after, now):
            return False
        if entry.after_mode is None:
            return False  # nothing to compare the mode with: not provable
        expected = entry.published_digest(
            None
            if entry.digest is not None or entry.before is None
            else self.pre_image_bytes(entry.id, COUNT_LIMIT)
        )
        if expected is None:
            return False  # nothing to compare the content with: not provable
        # Same inode, size and mtime, another ctime: the journal's own link of a pre-image,
        # or a chmod, or a same-size rewrite whose mtime was put back. Only the content and
        # the mode tell them apart; read through a descriptor that is the inode of `now`
        # (never a link, a FIFO or a file swapped in meanwhile).
        try:
            fd = os.open(
                os.path.join(self.root, entry.rel) if entry.rel != "." else self.root,
                os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
            )
        except OSError:
            return False
        try:
            info = os.fstat(fd)
            if not st_mode.S_ISREG(info.st_mode) or self._versions.version(info) != now:
                return False
            if st_mode.S_IMODE(info.st_mode) != entry.after_mode:
                return False
            hasher = hashlib.sha256()
            while chunk := os.read(fd, 1 << 20):
                hasher.update(chunk)
            return hasher.hexdigest() == expected and self._versions.version(os.fstat(fd)) == now
        except OSError:
            return False
        finally:
            os.close(fd)

    def same_directory(self, entry: JournalEntry, now: FsVersion) -> bool:
        if entry.after == now:
            return True
        if entry.after is None or entry.after_mode is None or entry.after_generation is None:
            return False  # nothing to compare the mode or the identity with: not provable
        if not same_inode(entry.after, now):
            return False  # another inode: a directory made there since
        # The same inode number may be a directory made there since on the number the made
        # one freed: its generation tells. Empty, as mkdir left it.
        path = os.path.join(self.root, entry.rel) if entry.rel != "." else self.root
        with self._directory_at(path, now) as found:
            if found is None:
                return False
            fd, info = found
            if (
                st_mode.S_IMODE(info.st_mode) != entry.after_mode
                or _platform.inode_generation(fd) != entry.after_generation
            ):
                return False
            try:
                with os.scandir(fd) as names:
                    return next(names, None) is None
            except OSError:
                return False

    def unchanged(self, recorded: FsVersion, now: FsVersion) -> bool:
        # device, inode, size, mtime: the same inode with the same bytes as far as any write
        # shows; only the ctime moved (a pre-image link made and removed, a chmod).
        return recorded.split(":")[:4] == now.split(":")[:4]

    def close(self) -> None:
        self._syncer.shutdown(wait=True)
        with self._spare_lock:
            spare, self._spare = self._spare, None
            if self._dir_fd >= 0:
                os.close(self._dir_fd)
                self._dir_fd = -1
        if spare is not None:
            os.close(spare)

    # Helpers.

    def _published_mode(self, key: object, after: FsVersion | None) -> int | None:
        """The permission bits of the file a change published at `after` (None: gone, or
        another file there already: unknown, and an undo then proves nothing by them)."""
        if after is None or not isinstance(key, str):
            return None
        try:
            info = os.lstat(key)
        except OSError:
            return None
        if self._versions.version(info) != after:
            return None
        return st_mode.S_IMODE(info.st_mode)

    def _in_root(self, key: object) -> bool:
        """Whether `key` names a path inside this store's root (by components)."""
        if not isinstance(key, str) or ".." in key.split("/"):
            return False
        return key == self.root or key.startswith(self.root.rstrip("/") + "/")

    def _directory_generation(self, key: object, version: FsVersion) -> int | None:
        """The generation of the directory at `key` while it is at `version` (None: gone,
        another directory there, or a filesystem that keeps none)."""
        if not isinstance(key, str):
            return None
        with self._directory_at(key, version) as found:
            return None if found is None else _platform.inode_generation(found[0])

    @contextlib.contextmanager
    def _directory_at(
        self, path: str, version: FsVersion
    ) -> Iterator[tuple[int, os.stat_result] | None]:
        """The directory at `path` open (never through a link) with its stat, while it is
        at `version`; None for anything else (gone, another version, not a directory, an
        error). What is read of it is read through this descriptor: the inode checked."""
        try:
            fd = os.open(path, _OPEN_DIRECTORY)
        except OSError:
            yield None
            return
        try:
            info = None
            with contextlib.suppress(OSError):
                info = os.fstat(fd)
            if info is None or self._versions.version(info) != version:
                yield None
            else:
                yield fd, info
        finally:
            os.close(fd)

    def _relative(self, key: str) -> str:
        if key == self.root:
            return "."
        prefix = self.root.rstrip("/") + "/"
        return key[len(prefix) :] if key.startswith(prefix) else key

    def _keep(self, replaced: LocalReplaced, name: str) -> None:
        """Keep the replaced inode as `name` in the store: a hard link when it is alone (no
        other name could change it in place) and on this filesystem, else a reflink, else a
        copy. The kept inode must be the one checked (not a file swapped in meanwhile)."""
        info = replaced.info
        if info.st_nlink == 1:
            try:
                os.link(
                    replaced.name,
                    name,
                    src_dir_fd=replaced.dir_fd,
                    dst_dir_fd=self._dir_fd,
                    follow_symlinks=False,
                )
            except OSError as exc:
                if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.EACCES):
                    raise
            else:
                now = os.stat(name, dir_fd=self._dir_fd, follow_symlinks=False)
                if (now.st_dev, now.st_ino) != (info.st_dev, info.st_ino):
                    os.unlink(name, dir_fd=self._dir_fd)
                    raise OSError(errno.EAGAIN, "the file was replaced while it was kept")
                return
        source = os.open(
            replaced.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=replaced.dir_fd
        )
        try:
            now = os.fstat(source)
            if (now.st_dev, now.st_ino) != (info.st_dev, info.st_ino):
                raise OSError(errno.EAGAIN, "the file was replaced while it was kept")
            copy = os.open(name, _OPEN_NEW, 0o600, dir_fd=self._dir_fd)
            try:
                _copy_fd(source, copy, now.st_size)
                sync(copy)
            except BaseException:
                os.close(copy)
                with contextlib.suppress(OSError):
                    os.unlink(name, dir_fd=self._dir_fd)
                raise
            os.close(copy)
        finally:
            os.close(source)

    def _pending(self, entry_id: str, data: bytes) -> int:
        """`<id>.pending` holding `data` (not yet fsynced: `prepare` does), locked by the
        returned descriptor before any reader can open it: an unnamed file (``O_TMPFILE``)
        given its name when complete, else (no ``O_TMPFILE`` here) a new name locked right
        after creation."""
        name = entry_id + ".pending"
        with self._spare_lock:
            fd, self._spare = self._spare, None
        if fd is None and _platform.CURRENT.proc_fd:
            fd = _platform.open_unnamed(self._dir_fd)
        if fd is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                write_all(fd, data)
                _platform.link_descriptor(fd, name, self._dir_fd)
            except FileNotFoundError:  # no /proc to name it by: the named path (which
                os.close(fd)  # raises again if the store itself is gone)
            except BaseException:
                os.close(fd)
                raise
            else:
                return fd
        fd = os.open(name, _OPEN_NEW, 0o600, dir_fd=self._dir_fd)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            write_all(fd, data)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _make_spare(self) -> None:
        """Make the next pending record's unnamed file now, between changes, rather than
        beside the next publication: creating an inode cost 0.1-0.3 ms of CPU here. Only
        where pending records are unnamed files; best effort (`_pending` makes its own)."""
        if self._spare is not None or self._dir_fd < 0 or not _platform.CURRENT.proc_fd:
            return
        try:
            fd = _platform.open_unnamed(self._dir_fd)
        except OSError:
            return
        if fd is None:
            return
        with self._spare_lock:
            if self._spare is None and self._dir_fd >= 0:
                self._spare, fd = fd, -1
        if fd >= 0:
            os.close(fd)

    def _write_entry(self, entry_id: str, record: dict[str, Any], replace: bool = False) -> int:
        """The committed entry, whole or not at all (staged under a temporary name); returns
        its size."""
        temp = f"{entry_id}.{secrets.token_hex(4)}.tmp"
        data = json.dumps(record).encode()
        fd = os.open(temp, _OPEN_NEW, 0o600, dir_fd=self._dir_fd)
        try:
            write_all(fd, data)
        finally:
            os.close(fd)
        if replace:
            os.replace(temp, entry_id + ".json", src_dir_fd=self._dir_fd, dst_dir_fd=self._dir_fd)
            return len(data)
        try:
            os.link(temp, entry_id + ".json", src_dir_fd=self._dir_fd, dst_dir_fd=self._dir_fd)
        finally:
            os.unlink(temp, dir_fd=self._dir_fd)
        return len(data)

    def _read_json(self, name: str) -> dict[str, Any]:
        """A record, vetted before it is read: a regular file (a link or a FIFO put there is
        refused, not followed or waited on) of at most `RECORD_LIMIT` bytes.

        Raises:
            OSError, ValueError (`Damaged`): it can't be read or is not a record.
        """
        fd = os.open(name, _OPEN_READ, dir_fd=self._dir_fd)
        try:
            info = os.fstat(fd)
            if not st_mode.S_ISREG(info.st_mode):
                raise Damaged("not a regular file")
            if info.st_size > RECORD_LIMIT:
                raise Damaged(f"larger than {RECORD_LIMIT} bytes")
            data = _read_exactly(fd, info.st_size, "the record")
        finally:
            os.close(fd)
        return parse_record(data)

    def _settle(self, stem: str, names: dict[str, StoredName]) -> dict[str, Any] | None:
        """A pending record whose writer died: published (the file is no longer at its
        `before`) becomes an entry at the version found; else it goes with its pre-image.
        A record still locked is in flight: left alone (None). The dead writer's staged
        entry (``<id>.*.tmp``) goes too; a record whose entry exists (the writer died
        between the two) is only removed."""
        try:
            fd = os.open(stem + ".pending", _OPEN_READ, dir_fd=self._dir_fd)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise Damaged("not a regular file") from exc  # a link put there
        try:
            if not st_mode.S_ISREG(os.fstat(fd).st_mode):
                raise Damaged("not a regular file")
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return None
            if not os.path.lexists(os.path.join(self.location, stem + ".pending")):
                return None  # its writer committed it meanwhile
            self._remove(*(n for n in names if n.startswith(stem + ".") and n.endswith(".tmp")))
            if os.path.lexists(os.path.join(self.location, stem + ".json")):
                self._remove(stem + ".pending")
                return None
            try:
                record = self._read_json(stem + ".pending")
            except (OSError, ValueError, RecursionError):
                self._remove(stem + ".pending", stem + ".pre")
                return None
            completed = self._completed_as_found(stem, record, names)
            if completed is None:
                self._remove(stem + ".pending", stem + ".pre")
                return None
            with contextlib.suppress(FileExistsError):
                self._write_entry(stem, completed)
            os.unlink(stem + ".pending", dir_fd=self._dir_fd)
            return self._read_json(stem + ".json")
        finally:
            os.close(fd)

    def _completed_as_found(
        self, stem: str, record: dict[str, Any], names: dict[str, StoredName]
    ) -> dict[str, Any] | None:
        """The record of a change whose writer died before its commit reached the disk,
        completed by what the disk shows: its entry's record, or None when the change was
        never published (the caller then removes the record and its pre-image)."""
        record = dict(record)
        record.pop("pending", None)  # the mark of a record not committed (`_prepare`)
        key = record.get("key")
        now: FsVersion | None = None
        if isinstance(key, str):
            with contextlib.suppress(OSError):
                now = self._versions.version(os.lstat(key))
        if _same_inode(now, record.get("before")):
            # Never published (a publication is always a new inode; keeping the old one
            # by a hard link changed only its ctime).
            return None
        # Published. What the file is now may be a later change's work (another server
        # went on writing it): the version the change left is then the `before` of the
        # first later change of the same file, never the later change's own version.
        later = self._first_later(stem, key, names)
        if later is not None and _same_inode(later.get("before"), record.get("before")):
            # A later change found the file still at this one's `before`: this one was
            # never published (a publication is a new inode), whatever the file is now.
            return None
        record["after"] = later["before"] if later is not None else now
        # What `commit` would have kept of the content: its digest and mode (the guard
        # proves by them that a file whose ctime alone moved since, by a later dead
        # writer's pre-image link, is still what this change published), line counts
        # and delta. Without them the entry is refused as changed outside the journal.
        with contextlib.suppress(Exception):  # best effort: the entry stands without
            record = self._settled_content(stem, record, later)
        return record

    def _settled_content(
        self, stem: str, record: dict[str, Any], later: dict[str, Any] | None
    ) -> dict[str, Any]:
        """A dead writer's published record filled in as `commit` would have: the ``digest``
        and ``after_mode`` of the content at its `after` (the file, read through a
        descriptor that is still that version; or, when a later change replaced it, the
        later change's pre-image and recorded mode), line counts and delta.

        Raises:
            OSError, ValueError: the content can't be read as that version (the record is
                kept as it is then: the entry stays provable only by its exact version).
        """
        after = record["after"]
        if later is not None:
            later_id, later_mode = later.get("id"), later.get("mode")
            if not isinstance(later_id, str) or not ENTRY_ID.match(later_id):
                raise ValueError("the later change has no id")
            size = later.get("size")
            kept = LocalKept(
                os.path.join(self.location, later_id + ".pre"),
                size=size if isinstance(size, int) else None,
            )
            data, digest, _ = _read_digest(os.open(kept.path, _OPEN_READ), kept.size)
            mode = later_mode if isinstance(later_mode, int) else None
        elif isinstance(after, str) and self._in_root(record.get("key")):
            # A record is read before it is vetted: a key outside this root (a planted
            # record naming any file) is never opened; the entry stays provable only by
            # its exact version.
            fd = os.open(record["key"], _OPEN_READ)
            data, digest, mode = _read_digest(fd, None, (self._versions.version, FsVersion(after)))
        else:
            return record
        before = None
        if record.get("before") is not None:
            size = record.get("size")
            own = LocalKept(
                os.path.join(self.location, stem + ".pre"),
                size=size if isinstance(size, int) else None,
            )
            with contextlib.suppress(OSError):
                before = read_kept(own, COUNT_LIMIT)
        filled = dict(record)  # whole or not at all: never a digest without its mode
        count_lines(filled, before, data, digest)
        filled["digest"] = digest.hex()
        filled["after_mode"] = mode
        return filled

    def _first_later(
        self, stem: str, key: object, names: dict[str, StoredName]
    ) -> dict[str, Any] | None:
        """The first record after `stem` (committed or pending) of the file `key`."""
        later = sorted(
            name
            for name in names
            if name.rpartition(".")[2] in ("json", "pending") and name.rpartition(".")[0] > stem
        )
        for name in later:
            if not ENTRY_ID.match(name.rpartition(".")[0]):
                continue
            record = self._read_live(name)
            if record is None:
                continue
            if record.get("key") == key and (
                record.get("before") is None or isinstance(record.get("before"), str)
            ):
                return record
        return None

    def _read_live(self, name: str) -> dict[str, Any] | None:
        """The record `name`, None when damaged. A pending record's live writer may be
        committing it in place (`_commit_in_place`): a read that met the write over it (a
        torn record) or came after its new name (gone) is tried again under both names."""
        names: tuple[str, ...] = (name,)
        if name.endswith(".pending"):
            names = (name, name[: -len("pending")] + "json") * 3
        for candidate in names:
            with contextlib.suppress(OSError, ValueError):
                return self._read_json(candidate)
        return None

    def _remove(self, *names: str | None) -> None:
        for name in names:
            if name is not None:
                with contextlib.suppress(OSError):
                    os.unlink(name, dir_fd=self._dir_fd)

    def _remove_directory(self, name: str) -> None:
        """A directory at `name` removed, or, holding something, moved aside under a name
        nothing reads (``<name>.<random>.aside``): nothing in it is followed or deleted."""
        try:
            os.rmdir(name, dir_fd=self._dir_fd)
        except NotADirectoryError:
            return
        except OSError:
            with contextlib.suppress(OSError):
                aside = f"{name}.{secrets.token_hex(4)}.aside"
                os.rename(name, aside, src_dir_fd=self._dir_fd, dst_dir_fd=self._dir_fd)


def _make_private_dirs(path: str) -> None:
    """`path` and missing parents, the ones created 0700; `path` itself made 0700 (it must
    be a directory of this user, not a link)."""
    os.makedirs(path, mode=0o700, exist_ok=True)
    info = os.lstat(path)
    if not st_mode.S_ISDIR(info.st_mode):
        raise NotADirectoryError(errno.ENOTDIR, "the journal store is not a directory", path)
    if info.st_uid != os.geteuid():
        raise PermissionError(errno.EPERM, "the journal store belongs to another user", path)
    if st_mode.S_IMODE(info.st_mode) != 0o700:
        os.chmod(path, 0o700)


def _uncache(name: str, dir_fd: int) -> None:
    """Drop the pages of the kept pre-image `name` from the page cache (clean ones: an undo
    reads them back from the disk). Without the journal the replaced inode is freed at the
    publication and its pages reused by the next write; kept, its pages stayed and each
    write took fresh memory, which in a virtual machine faults on the host: a journaled
    100 MB edit's copies into the page cache cost ~170 ms CPU more (perf: the kernel's
    `copy_folio_from_iter_atomic`). Advice only: a failure changes nothing."""
    advise = getattr(os, "posix_fadvise", None)
    if advise is None:  # pragma: no cover - macOS
        return
    try:
        fd = os.open(name, _OPEN_READ, dir_fd=dir_fd)
    except OSError:
        return
    try:
        advise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    except OSError:
        pass
    finally:
        os.close(fd)


def _fields_or_none(
    *,
    created: bool,
    before: bytes | None,
    before_utf8: bool,
    content: bytes | EncodedText,
    codec: str | None,
) -> dict[str, Any] | None:
    """`content_fields` of content about to be published; None when making them failed
    (an edit's prior still being checked may prove not text: that change is refused before
    publication, and a commit without fields makes them itself)."""
    try:
        return content_fields(
            created=created,
            removed=False,
            before=before,
            content=content,
            codec=codec,
            before_utf8=before_utf8,
        )
    except Exception:
        return None


def _copy_fd(source: int, target: int, size: int) -> None:
    """The bytes of `source` into `target`: a reflink where the filesystem shares blocks,
    else `copy_file_range` (in the kernel), else reads and writes."""
    offset = copy_in_kernel(source, target, size)
    if offset >= size:
        return
    os.lseek(source, offset, os.SEEK_SET)
    os.lseek(target, offset, os.SEEK_SET)
    while chunk := os.read(source, 1 << 20):
        write_all(target, chunk)


def _read_digest(
    fd: int,
    size: int | None,
    at: tuple[Callable[[os.stat_result], FsVersion], FsVersion] | None = None,
) -> tuple[bytes | None, bytes, int]:
    """The content of the regular file `fd` (closed here) when at most `COUNT_LIMIT` bytes
    (else None), its sha256 and its permission bits; `size` its expected size, `at` (given)
    how to take a version and the version it must be at from the open to the end of the
    read (else EINVAL: another version).

    Raises:
        OSError: it can't be read, is not a regular file of `size` bytes, or not at `at`.
    """
    try:
        info = _regular(fd, "the published content")
        if size is not None and info.st_size != size:
            raise OSError(errno.EINVAL, "the published content is not of its recorded size")
        if at is not None and at[0](info) != at[1]:
            raise OSError(errno.EINVAL, "the file is no longer at the version found")
        hasher = hashlib.sha256()
        parts: list[bytes] | None = [] if info.st_size <= COUNT_LIMIT else None
        while chunk := os.read(fd, 1 << 20):
            hasher.update(chunk)
            if parts is not None:
                parts.append(chunk)
        if at is not None and at[0](os.fstat(fd)) != at[1]:
            raise OSError(errno.EINVAL, "the file changed while it was read")
    finally:
        os.close(fd)
    data = b"".join(parts) if parts is not None else None
    return data, hasher.digest(), st_mode.S_IMODE(info.st_mode)


def _same_inode(now: FsVersion | None, before: object) -> bool:
    """Whether the file is still the inode of `before` (absent for both counts too): the
    device and inode fields of the local version token."""
    if now is None or not isinstance(before, str):
        return now is None and before is None
    return same_inode(now, before)
