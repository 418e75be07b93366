"""Change sets' intent records on fsspec storage (SPEC §13): one object per running set.

The record is created with ``If-None-Match: *`` (S3's conditional PUT; an exclusive create
elsewhere) before the set publishes anything, and removed once the set is whole. Its first
line names the writer (host, process id and start time, and when): storage has no lock a
dead process drops, so whether a record's writer is gone is decided as the journal's store
decides it for a pending record (`FsspecJournalStore`): in this process, it is not held; on
this machine, its process no longer runs; from another machine, the record is older than
`LEASE_SECONDS`. A roll-back then goes through the provider's guarded primitives
(conditional PUTs and deletes on S3).
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time

from anyio import to_thread

from dsh_fs._platform import process_started
from dsh_fs.fs import FsFileType, SetRecord, SetRecords

from ._errors import map_backend_errors
from ._journal_store import LEASE_SECONDS
from ._store import Store

__all__ = ["SETS_DIRECTORY", "FsspecSetRecords"]

SETS_DIRECTORY = ".dsh-fs-sets"
"""The name of the default place beside (or, at a storage's top, inside) the root."""

_HOST = socket.gethostname()
_SUFFIX = ".set"
_held: set[str] = set()
"""The records held in this process (by path), by every instance."""
_held_lock = threading.Lock()


class FsspecSetRecords(SetRecords):
    """The records of one root's sets under the URL `location` (`path`: the same, as an
    fsspec path), on the provider's storage `store`."""

    def __init__(self, store: Store, location: str, path: str) -> None:
        self.location = location.rstrip("/")
        self._store = store
        self._base = path.rstrip("/")

    def _path(self, set_id: str) -> str:
        return f"{self._base}/{set_id}{_SUFFIX}"

    async def begin(self, record: SetRecord) -> None:
        writer = {
            "host": _HOST,
            "pid": os.getpid(),
            "started": process_started(os.getpid()),
            "time_ns": time.time_ns(),
        }
        data = json.dumps(writer).encode() + b"\n" + record.to_bytes()
        path = self._path(record.id)
        with _held_lock:
            _held.add(path)
        try:
            with map_backend_errors("write", self.location):
                await to_thread.run_sync(lambda: self._store.put(path, data, if_absent=True))
        except BaseException:
            with _held_lock:
                _held.discard(path)
            raise

    async def end(self, set_id: str) -> None:
        path = self._path(set_id)
        try:
            with map_backend_errors("delete", self.location):
                await to_thread.run_sync(self._store.discard, path)
        finally:
            with _held_lock:
                _held.discard(path)

    async def orphans(self) -> list[SetRecord]:
        with map_backend_errors("read", self.location):
            return await to_thread.run_sync(self._orphans)

    def _orphans(self) -> list[SetRecord]:
        if self._store.stat(self._base) is None:
            return []
        found: list[tuple[int, SetRecord]] = []
        for entry in self._store.find(self._base):
            if entry.type is not FsFileType.FILE or not entry.path.endswith(_SUFFIX):
                continue
            if "/" in entry.path:
                continue
            path = f"{self._base}/{entry.path}"
            with _held_lock:
                if path in _held:
                    continue
            blob = self._store.read(path, None)
            if blob is None or blob.data is None:
                continue
            head, _, body = blob.data.partition(b"\n")
            try:
                writer = json.loads(head)
                record = SetRecord.from_bytes(body)
            except ValueError:
                continue  # not ours: left for a person to look at
            if not isinstance(writer, dict) or _writer_alive(writer):
                continue
            with _held_lock:
                if path in _held:
                    continue
                _held.add(path)
            when = writer.get("time_ns")
            found.append((when if isinstance(when, int) else 0, record))
        found.sort(key=lambda item: item[0])
        return [record for _, record in found]


def _writer_alive(writer: dict[str, object]) -> bool:
    pid = writer.get("pid")
    if writer.get("host") == _HOST and isinstance(pid, int):
        if pid == os.getpid():
            return False  # not held here: its set ended without removing it
        started = process_started(pid)
        return started is not None and started == writer.get("started")
    when = writer.get("time_ns")
    if not isinstance(when, int):
        return False
    return time.time_ns() - when < LEASE_SECONDS * 1_000_000_000
