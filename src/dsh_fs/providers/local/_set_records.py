"""Change sets' intent records on the local disk (SPEC §13): one file per running set.

A record is written whole under a temporary name, fsynced, locked (``flock``) and renamed to
``<id>.set``, and the directory fsynced, before the set publishes anything; its writer keeps
the lock until the set is whole, then removes the name and fsyncs the directory again. The
lock is how another process tells a running set (locked) from one whose writer was killed
(the kernel dropped its lock): only the latter is an orphan to finish or roll back.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import secrets
from collections.abc import Iterator

from anyio import to_thread

from dsh_fs._platform import sync
from dsh_fs.fs import SetRecord, SetRecords

from .._oserrors import map_os_errors
from ._io import write_all

__all__ = ["LocalSetRecords", "default_set_records_location", "set_records_directory"]

_OPEN_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_OPEN_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_SUFFIX = ".set"
_TEMP = ".set-tmp"


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
        self._held: dict[str, int] = {}
        """The descriptors (each locked) of the records this process holds, by set id."""

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
            await to_thread.run_sync(self._begin, record.id, record.to_bytes())

    def _begin(self, set_id: str, data: bytes) -> None:
        self._directory(create=True)
        temp = f"{set_id}.{secrets.token_hex(4)}{_TEMP}"
        fd = os.open(temp, _OPEN_NEW, 0o600, dir_fd=self._dir_fd)
        try:
            # Locked before its final name exists: no other process can take it for an
            # orphan between the rename and the lock.
            fcntl.flock(fd, fcntl.LOCK_EX)
            write_all(fd, data)
            sync(fd)
            os.rename(temp, set_id + _SUFFIX, src_dir_fd=self._dir_fd, dst_dir_fd=self._dir_fd)
            # The name durable before the first publication: a crash after it finds it.
            sync(self._dir_fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=self._dir_fd)
            os.close(fd)
            raise
        self._held[set_id] = fd

    async def end(self, set_id: str) -> None:
        with map_os_errors("delete", self.location):
            await to_thread.run_sync(self._end, set_id)

    def _end(self, set_id: str) -> None:
        fd = self._held.pop(set_id, None)
        try:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(set_id + _SUFFIX, dir_fd=self._dir_fd)
            # Durable before the call returns: a record that came back after a power loss
            # would make the next start roll back files changed since the set succeeded.
            sync(self._dir_fd)
        finally:
            if fd is not None:
                os.close(fd)

    async def orphans(self) -> list[SetRecord]:
        with map_os_errors("read", self.location):
            return await to_thread.run_sync(self._orphans)

    def _orphans(self) -> list[SetRecord]:
        if self._directory(create=False) is None:
            return []
        found: list[tuple[int, SetRecord]] = []
        for name in self._names():
            if name.endswith(_TEMP):
                self._drop_torn(name)
                continue
            set_id = name[: -len(_SUFFIX)]
            if set_id in self._held:
                continue
            taken = self._take(name)
            if taken is None:
                continue
            fd, mtime, data = taken
            try:
                record = SetRecord.from_bytes(data)
            except ValueError:
                # Written whole and fsynced before its name existed: a record that does not
                # parse is not ours; leave it for a person to look at.
                os.close(fd)
                continue
            self._held[set_id] = fd
            found.append((mtime, record))
        found.sort(key=lambda item: item[0])
        return [record for _, record in found]

    def _names(self) -> Iterator[str]:
        with os.scandir(self._dir_fd) as entries:
            names = sorted(entry.name for entry in entries)
        yield from (name for name in names if name.endswith((_SUFFIX, _TEMP)))

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

    def _drop_torn(self, name: str) -> None:
        """Remove a record its writer never named: killed before the rename, so before
        any publication (unless a running writer still holds it)."""
        try:
            fd = os.open(name, _OPEN_READ, dir_fd=self._dir_fd)
        except OSError:
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.unlink(name, dir_fd=self._dir_fd)
        except OSError:
            return
        finally:
            os.close(fd)

    async def aclose(self) -> None:
        for fd in self._held.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self._held.clear()
        if self._dir_fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._dir_fd)
            self._dir_fd = -1
