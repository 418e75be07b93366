"""Change sets' intent records on the local disk (SPEC §13): one file per running set.

A record is written whole into an unnamed file, locked (``flock``), named ``<id>.set``, then
fsynced with its directory, before the set publishes anything (where the system has no
unnamed files: written under a temporary name, fsynced, renamed); its writer keeps the lock
until the set is whole, then removes the name and fsyncs the directory again. The
lock is how another process tells a running set (locked) from one whose writer was killed
(the kernel dropped its lock): only the latter is an orphan to finish or roll back.

A file's old text is not copied into the record where the file itself can be kept: a hard
link to the file the set is about to replace, ``<id>.<token>.<k>.kept`` beside the record,
made before the record is written and checked to hold exactly the text the set read (a
publication replaces the file with a new inode, so the linked one keeps the old bytes). The
record names it instead of holding the bytes, and the one directory fsync that makes the
record's name durable makes the links durable too: no copy of 1 MB of old text to write and
fsync before the first publication (issue 42's cost). A file on another filesystem, one the
process may not link, or one whose bytes are not the text read (another encoding, a change
since) has its old text in the record, as before.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import secrets
import stat
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

from anyio import to_thread

from dsh_fs import _platform
from dsh_fs._platform import sync
from dsh_fs.fs import SET_RECORD_MAGIC, SetRecord, SetRecords

from .._oserrors import map_os_errors
from ._io import write_all

__all__ = ["LocalSetRecords", "default_set_records_location", "set_records_directory"]

_OPEN_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_OPEN_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_SUFFIX = ".set"
_TEMP = ".set-tmp"
_KEPT = ".kept"
_KEEP_FROM = 8 * 1024
"""The smallest old text kept as a link: a smaller one costs less copied into the record
than a link, a read to check it and an unlink."""
_STRAY_KEPT_NS = 24 * 3600 * 1_000_000_000
"""How old a kept link with no record must be before `orphans` removes it (its writer was
killed while ending its set: between removing the record and removing the links). A
writer's links are younger than its running set by far; a day leaves no doubt."""


def default_set_records_location() -> str:
    """``$XDG_STATE_HOME/dsh-fs/sets``, else ``~/.local/state/dsh-fs/sets``: where a
    root's sets keep their records when no journal is configured."""
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state"
    )
    return os.path.join(os.path.abspath(state), "dsh-fs", "sets")


def set_records_directory(location: str, root: str) -> str:
    """The directory of `root`'s records under `location` (one per canonical root)."""
    digest = hashlib.sha256(os.fsencode(root)).hexdigest()[:32]
    return os.path.join(os.path.abspath(location), digest)


class LocalSetRecords(SetRecords):
    """The records of one root's sets, in `directory` (created private, 0700, by the first
    set: a workspace that never runs one leaves no trace)."""

    def __init__(self, directory: str) -> None:
        self.location = os.path.abspath(directory)
        self._dir_fd = -1
        self._held: dict[str, tuple[int, tuple[str, ...]]] = {}
        """The records this process holds, by set id: each one's descriptor (locked) and
        the names of the links it kept."""
        self._unlinker: ThreadPoolExecutor | None = None
        """Removes an ended set's kept links after its call answered (`_end`)."""

    def _directory(self, create: bool) -> int | None:
        """The records' directory, opened once (None: it does not exist and not `create`)."""
        if self._dir_fd < 0:
            if create:
                os.makedirs(self.location, mode=0o700, exist_ok=True)
            try:
                self._dir_fd = os.open(self.location, _OPEN_DIR)
            except FileNotFoundError:
                if create:
                    raise
                return None
        return self._dir_fd

    async def begin(self, record: SetRecord) -> None:
        with map_os_errors("write", self.location):
            await to_thread.run_sync(self._begin, record)

    def _begin(self, record: SetRecord) -> None:
        self._directory(create=True)
        set_id, token = record.id, secrets.token_hex(4)
        fd = _platform.open_unnamed(self._dir_fd) if _platform.CURRENT.proc_fd else None
        if fd is None:
            self._begin_renamed(record, token)
            return
        kept: dict[int, str] = {}
        named = False
        try:
            # Locked before it has a name: no other process can take it for an orphan.
            fcntl.flock(fd, fcntl.LOCK_EX)
            kept = self._keep(record, f"{set_id}.{token}")
            write_all(fd, record.to_bytes(kept))
            # Named before it is durable, so that one commit of the filesystem's journal
            # makes its bytes, its name and the kept links durable (a file's fsync commits
            # the metadata changed with it; the directory's fsync, for filesystems that do
            # not, then finds little left): one wait on the disk, not two, before the
            # first publication. A power loss before both returned leaves at worst a torn
            # record of a set that published nothing (`_orphans` drops it).
            _platform.link_descriptor(fd, set_id + _SUFFIX, self._dir_fd)
            named = True
            sync(fd)
            sync(self._dir_fd)
        except BaseException:
            for name in (set_id + _SUFFIX,) * named + tuple(kept.values()):
                with contextlib.suppress(OSError):
                    os.unlink(name, dir_fd=self._dir_fd)
            os.close(fd)
            raise
        self._held[set_id] = (fd, tuple(kept.values()))

    def _begin_renamed(self, record: SetRecord, token: str) -> None:
        """`_begin` where the system has no unnamed files: the record written and fsynced
        under a temporary name, then renamed (never torn under its final name)."""
        set_id = record.id
        temp = f"{set_id}.{token}{_TEMP}"
        fd = os.open(temp, _OPEN_NEW, 0o600, dir_fd=self._dir_fd)
        kept: dict[int, str] = {}
        try:
            # Locked before its final name exists: no other process can take it for an
            # orphan between the rename and the lock (nor its links for a torn record's).
            fcntl.flock(fd, fcntl.LOCK_EX)
            kept = self._keep(record, f"{set_id}.{token}")
            write_all(fd, record.to_bytes(kept))
            sync(fd)
            os.rename(temp, set_id + _SUFFIX, src_dir_fd=self._dir_fd, dst_dir_fd=self._dir_fd)
            # The name (and every kept link) durable before the first publication: a crash
            # after it finds the record whole.
            sync(self._dir_fd)
        except BaseException:
            for name in (temp, *kept.values()):
                with contextlib.suppress(OSError):
                    os.unlink(name, dir_fd=self._dir_fd)
            os.close(fd)
            raise
        self._held[set_id] = (fd, tuple(kept.values()))

    def _keep(self, record: SetRecord, prefix: str) -> dict[int, str]:
        """Link each file of `record` whose old text its own bytes are (see the module),
        by index: the link's name."""
        kept: dict[int, str] = {}
        for index, item in enumerate(record.files):
            if item.source is None or item.before is None or len(item.before) < _KEEP_FROM:
                continue
            name = f"{prefix}.{index}{_KEPT}"
            try:
                os.link(item.source, name, dst_dir_fd=self._dir_fd, follow_symlinks=False)
            except OSError:
                continue  # another filesystem, not ours to link, gone: copied instead
            if self._holds(name, item.before):
                kept[index] = name
            else:
                with contextlib.suppress(OSError):
                    os.unlink(name, dir_fd=self._dir_fd)
        return kept

    def _holds(self, name: str, text: str) -> bool:
        """Whether the link `name` is a regular file of exactly `text`'s UTF-8 bytes (the
        file may have changed since the set read it, or be in another encoding)."""
        try:
            data = self._read(name)
        except OSError:
            return False
        return data is not None and data == text.encode("utf-8")

    def _read(self, name: str) -> bytes | None:
        """The bytes of the regular file `name` (None: not a regular file).

        Raises:
            OSError: it cannot be read.
        """
        fd = os.open(name, _OPEN_READ, dir_fd=self._dir_fd)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            chunks = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def _kept(self, name: str) -> bytes:
        """A kept old text, for `SetRecord.from_bytes`.

        Raises:
            OSError: it cannot be read (or is no regular file).
        """
        data = self._read(name)
        if data is None:
            raise OSError(errno.EINVAL, "not a regular file", name)
        return data

    async def end(self, set_id: str) -> None:
        with map_os_errors("delete", self.location):
            await to_thread.run_sync(self._end, set_id)

    def _end(self, set_id: str) -> None:
        fd, kept = self._held.pop(set_id, (None, ()))
        try:
            # The record goes first: a kill before its links go leaves only links no record
            # names (removed once stray, `_sweep`), never a record whose old texts are gone.
            with contextlib.suppress(FileNotFoundError):
                os.unlink(set_id + _SUFFIX, dir_fd=self._dir_fd)
            # Durable before the call returns: a record that came back after a power loss
            # would make the next start roll back files changed since the set succeeded.
            sync(self._dir_fd)
        finally:
            if fd is not None:
                os.close(fd)
        if kept:
            # The links go after the call's answer, in the helper thread: removing the last
            # name of each replaced file frees its blocks (what a lone edit's rename pays,
            # ~1 ms a 100 KB file on a disk mounted with `discard`), and nothing waits for
            # that. Links a power loss brings back, or a kill leaves, are strays (`_sweep`).
            if self._unlinker is None:
                self._unlinker = ThreadPoolExecutor(1, thread_name_prefix="dsh-fs-set-links")
            self._unlinker.submit(self._unlink, kept)

    def _unlink(self, names: tuple[str, ...]) -> None:
        """Remove the kept links `names` (of a set that ended)."""
        for name in names:
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=self._dir_fd)

    async def orphans(self) -> list[SetRecord]:
        with map_os_errors("read", self.location):
            return await to_thread.run_sync(self._orphans)

    def _orphans(self) -> list[SetRecord]:
        if self._directory(create=False) is None:
            return []
        names = self._names()
        found: list[tuple[int, SetRecord]] = []
        for name in names:
            if name.endswith(_TEMP):
                self._drop_torn(name, names)
                continue
            if not name.endswith(_SUFFIX):
                continue
            set_id = name[: -len(_SUFFIX)]
            if set_id in self._held:
                continue
            taken = self._take(name)
            if taken is None:
                continue
            fd, mtime, data = taken
            try:
                record = SetRecord.from_bytes(data, self._kept)
            except ValueError:
                if _torn(data):
                    # Cut short by a power loss before its writer's fsync returned: its set
                    # published nothing. Dropped, with what it kept (its lock is ours).
                    for stale in (*_kept_of(names, set_id), name):
                        with contextlib.suppress(OSError):
                            os.unlink(stale, dir_fd=self._dir_fd)
                # Otherwise not ours (ours are whole once named): left for a person.
                os.close(fd)
                continue
            self._held[set_id] = (fd, tuple(_kept_of(names, set_id)))
            found.append((mtime, record))
        self._sweep(names)
        found.sort(key=lambda item: item[0])
        return [record for _, record in found]

    def _names(self) -> list[str]:
        with os.scandir(self._dir_fd) as entries:
            return sorted(
                entry.name for entry in entries if entry.name.endswith((_SUFFIX, _TEMP, _KEPT))
            )

    def _sweep(self, names: list[str]) -> None:
        """Remove the kept links no record or temporary record names (`_STRAY_KEPT_NS`)."""
        present = set(names)
        now = time.time_ns()
        for name in names:
            if not name.endswith(_KEPT):
                continue
            owner = name[: -len(_KEPT)].rsplit(".", 1)[0]  # <id>.<token>
            set_id = owner.rsplit(".", 1)[0]
            if set_id + _SUFFIX in present or owner + _TEMP in present or set_id in self._held:
                continue
            try:
                info = os.stat(name, dir_fd=self._dir_fd, follow_symlinks=False)
                if now - info.st_ctime_ns > _STRAY_KEPT_NS:
                    os.unlink(name, dir_fd=self._dir_fd)
            except OSError:
                continue

    def _take(self, name: str) -> tuple[int, int, bytes] | None:
        """The record `name` locked by this process, with its mtime and bytes; None when a
        running set holds it or it is gone."""
        try:
            fd = os.open(name, _OPEN_READ, dir_fd=self._dir_fd)
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            info = os.fstat(fd)
            if info.st_nlink == 0:  # its set ended between the open and the lock
                os.close(fd)
                return None
            chunks = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
        except OSError:
            os.close(fd)
            return None
        return fd, info.st_mtime_ns, b"".join(chunks)

    def _drop_torn(self, name: str, names: list[str]) -> None:
        """Remove a record its writer never named, and the links it kept: killed before
        the rename, so before any publication (unless a running writer still holds it)."""
        try:
            fd = os.open(name, _OPEN_READ, dir_fd=self._dir_fd)
        except OSError:
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            prefix = name[: -len(_TEMP)] + "."
            for kept in names:
                if kept.startswith(prefix) and kept.endswith(_KEPT):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(kept, dir_fd=self._dir_fd)
            os.unlink(name, dir_fd=self._dir_fd)
        except OSError:
            return
        finally:
            os.close(fd)

    async def aclose(self) -> None:
        if self._unlinker is not None:
            # The links still to remove use the directory's descriptor: gone first.
            await to_thread.run_sync(self._unlinker.shutdown)
            self._unlinker = None
        for fd, _ in self._held.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self._held.clear()
        if self._dir_fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._dir_fd)
            self._dir_fd = -1


def _kept_of(names: list[str], set_id: str) -> Iterator[str]:
    """The kept links of the record of `set_id` among `names` (``<id>.<token>.<k>.kept``)."""
    for name in names:
        if not name.endswith(_KEPT):
            continue
        owner = name[: -len(_KEPT)].rsplit(".", 1)[0]
        if owner.rsplit(".", 1)[0] == set_id:
            yield name


def _torn(data: bytes) -> bool:
    """Whether `data`, which does not parse, is a record in the current format cut short
    (or nothing, or zeros a filesystem showed for blocks never written). A whole record
    whose kept text is gone is not: it is left for a person, never dropped."""
    if not (data.startswith(SET_RECORD_MAGIC) or SET_RECORD_MAGIC.startswith(data.rstrip(b"\0"))):
        return False
    try:
        SetRecord.from_bytes(data, lambda name: b"")
    except ValueError:
        return True
    return False
