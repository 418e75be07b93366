"""The change journal's store on fsspec storage (SPEC §9): entries and pre-images as objects
beside the served root, on the same storage.

Layout: ``<location>/<sha256 of the root URL, 32 hex>/`` holds ``root`` (the root URL it
records) and per change ``<id>.pre`` (the pre-image: on S3 a server-side ``CopyObject``
conditioned on the replaced object's ETag, elsewhere a copy of the bytes read in the
critical section), ``<id>.pending`` (written before the publication, naming the process
that writes it) and ``<id>.json`` (the committed entry). Every record is created with
``If-None-Match: *`` (an exclusive create elsewhere), so several processes, on one machine
or many, append safely.

The default location is a hidden sibling of the root (``s3://bucket/.dsh-fs-journal`` for
``s3://bucket/ws``); a root with no parent on its storage (a bucket's top) keeps it inside,
as ``<root>/.dsh-fs-journal``, which the provider then fences out. A pending record whose
writer is gone is settled by the next reader, as on the local disk: the file moved on from
its `before` (published: the entry is kept with the version found) or not (the record and
its pre-image go). Whether the writer is gone: in this process, it is not in flight; on this
machine, its process id no longer runs (with the same start time); from another machine,
the record is older than `LEASE_SECONDS`. Nothing in the store is trusted: a record that is
not an object or is larger than `RECORD_LIMIT` is damaged and never read whole.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import threading
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from dsh_fs._platform import process_started
from dsh_fs.fs import (
    ENTRY_ID,
    EncodedText,
    FsChangeMeta,
    FsChangeStart,
    FsFileType,
    FsPreImage,
    FsVersion,
    messages,
)

from .._journal_records import (
    COUNT_LIMIT,
    RECORD_LIMIT,
    Damaged,
    count_lines,
    id_time_ns,
    new_record,
)
from .._journal_store import PendingChange, RecordStore, StoredName, no_lock, parse_record
from ._errors import backend_error
from ._store import Store

__all__ = [
    "DEFAULT_DIRECTORY",
    "LEASE_SECONDS",
    "FsspecJournalStore",
    "FsspecKept",
    "FsspecReplaced",
]

DEFAULT_DIRECTORY = ".dsh-fs-journal"
"""The name of the default store beside (or, at a storage's top, inside) the root."""

LEASE_SECONDS = 3600.0
"""A pending record written on another machine is settled once it is this old (its writer
could be alive there; no critical section lasts an hour)."""

_HOST = socket.gethostname()

_in_flight: set[str] = set()
_in_flight_lock = threading.Lock()


@dataclass(frozen=True, slots=True, kw_only=True)
class FsspecReplaced(FsPreImage):
    """The file a change replaces, handed to the store inside the critical section: its
    fsspec `path`, the `version` checked, and its bytes when the provider read them."""

    path: str
    version: FsVersion
    data: bytes | None


@dataclass(frozen=True, slots=True)
class FsspecKept(FsPreImage):
    """A pre-image in the store: the fsspec path an undo reads its bytes from."""

    path: str


class FsspecJournalStore(RecordStore):
    """The journal of one root URL, in a sub-store of the URL `location` on the same storage.

    Args:
        store: The provider's storage family (the same fsspec instance and credentials).
        location: The store's URL (sub-stores per root inside).
        path: `location` as an fsspec path (protocol stripped).
        root: The root URL whose changes it records.
    """

    def __init__(self, store: Store, location: str, path: str, root: str) -> None:
        super().__init__()
        self.root = root
        self._store = store
        digest = hashlib.sha256(root.encode()).hexdigest()[:32]
        self.location = f"{location.rstrip('/')}/{digest}"
        self._base = f"{path.rstrip('/')}/{digest}"
        self._cache: dict[str, bytes] = {}
        with contextlib.suppress(FileExistsError):
            if store.stat(self._path("root")) is None:
                store.put(self._path("root"), root.encode() + b"\n", if_absent=True)

    def _path(self, name: str) -> str:
        return f"{self._base}/{name}"

    # The capture: inside the provider's critical section.

    def _prepare(self, meta: FsChangeMeta, start: FsChangeStart) -> object:
        target = start.target
        record = new_record(
            meta, start, self._relative(target.display_path), str(target.target_key)
        )
        record.update(host=_HOST, pid=os.getpid(), started=process_started(os.getpid()))
        entry_id = record["id"]
        replaced = start.pre_image if isinstance(start.pre_image, FsspecReplaced) else None
        kept = False
        with _in_flight_lock:
            _in_flight.add(entry_id)
        try:
            if replaced is not None:
                self._store.keep(
                    replaced.path, self._path(entry_id + ".pre"), replaced.version, replaced.data
                )
                kept = True
            record["kept"] = kept
            self._store.put(
                self._path(entry_id + ".pending"), json.dumps(record).encode(), if_absent=True
            )
        except BaseException:
            self._forget(entry_id, kept)
            raise
        before = replaced.data if replaced is not None else None
        return PendingChange(id=entry_id, record=record, kept=kept, before=before)

    def _failure(self, exc: Exception, start: FsChangeStart) -> str:
        return _what(exc, start.verb, start.target.display_path)

    def _commit(
        self,
        ticket: object,
        after: FsVersion | None,
        content: bytes | EncodedText | None,
        digest: bytes | None = None,
    ) -> None:
        assert isinstance(ticket, PendingChange)
        try:
            record = self._completed(ticket, after, content, digest)
            # The entry is created, never overwritten: a reader on another machine that took
            # this writer for gone (its lease ran out) may have completed it first; the
            # entry it wrote stands.
            with contextlib.suppress(FileExistsError):
                self._put_new(ticket.id + ".json", record)
            self._store.discard(self._path(ticket.id + ".pending"))
        except Exception:
            pass  # a pending record left is completed by the next reader
        finally:
            # From now on a reader in this process may settle what is left pending: this
            # writer is done with it.
            with _in_flight_lock:
                _in_flight.discard(ticket.id)

    def _pending_pre_image(self, entry_id: str, limit: int) -> bytes | None:
        return self.pre_image_bytes(entry_id, limit)

    def _abandon(self, ticket: object) -> None:
        assert isinstance(ticket, PendingChange)
        self._forget(ticket.id, ticket.kept)

    # Reading, undoing and pruning.

    def _read_records(self, names: list[str], listed: dict[str, StoredName]) -> dict[str, Any]:
        sized = {n: listed[n].size for n in names if n in listed}
        out: dict[str, Any] = {}
        fit = []
        for name in names:
            if sized.get(name, 0) > RECORD_LIMIT:
                out[name] = Damaged(f"larger than {RECORD_LIMIT} bytes")
            else:
                fit.append(name)
        fetched = self._records(fit, sized)
        for name in fit:
            data = fetched.get(name)
            if data is None:
                out[name] = ValueError("it could not be read")
                continue
            try:
                out[name] = parse_record(data)
            except (ValueError, RecursionError) as exc:
                out[name] = exc
        return out

    def _records(self, wanted: list[str], names: dict[str, int]) -> dict[str, bytes]:
        """The bytes of the committed records `wanted`: the ones read before at the same
        size from this store's cache (a record changes only when pruning marks it, which
        makes it longer), the others in one batch (concurrent GETs on S3)."""
        out: dict[str, bytes] = {}
        missing: list[str] = []
        for name in wanted:
            cached = self._cache.get(name)
            if cached is not None and len(cached) == names.get(name):
                out[name] = cached
            else:
                missing.append(name)
        if missing:
            read = self._store.read_all([self._path(name) for name in missing])
            for name in missing:
                data = read.get(self._path(name))
                if data is not None:
                    out[name] = self._cache[name] = data
        return out

    def pre_image(self, entry_id: str) -> FsPreImage | None:
        if not ENTRY_ID.match(entry_id):
            return None
        path = self._path(entry_id + ".pre")
        kept = self._store.stat(path)
        if kept is None or kept.type is not FsFileType.FILE:
            return None  # none, or not an object of its own: never applied
        try:
            size = self._read_json(entry_id + ".json").get("size")
        except Exception:
            return None  # its record is damaged or gone: never applied
        if isinstance(size, int) and kept.size != size:
            return None
        return FsspecKept(path)

    def pre_image_bytes(self, entry_id: str, limit: int) -> bytes | None:
        if not ENTRY_ID.match(entry_id):
            return None
        try:
            blob = self._store.read(self._path(entry_id + ".pre"), limit)
        except Exception:
            return None
        return blob.data if blob is not None else None

    def _replace_record(self, entry_id: str, record: dict[str, Any]) -> None:
        self._store.put(self._path(entry_id + ".json"), json.dumps(record).encode())

    def _remove(self, *names: str | None) -> None:
        for name in names:
            if name is not None:
                self._store.discard(self._path(name))

    def _locked(self) -> AbstractContextManager[None]:
        # No lock across machines: two pruners do the same idempotent steps (remove the
        # pre-image, mark the entry pruned), so racing ones agree.
        return no_lock()

    # Helpers.

    def _relative(self, url: str) -> str:
        if url == self.root:
            return "."
        prefix = self.root.rstrip("/") + "/"
        return url[len(prefix) :] if url.startswith(prefix) else url

    def _names(self, sized: bool = True) -> dict[str, StoredName]:
        # One listing gives every size: `sized` costs nothing here.
        return {
            entry.path: StoredName(
                size=entry.size,
                regular=entry.type is FsFileType.FILE,
                # A record is replaced only when pruning marks it (longer, and newer).
                stamp=(entry.size, entry.mtime_ns) if entry.type is FsFileType.FILE else None,
            )
            for entry in self._store.find(self._base)
            if "/" not in entry.path
        }

    def _put_new(self, name: str, record: dict[str, Any]) -> None:
        self._store.put(self._path(name), json.dumps(record).encode(), if_absent=True)

    def _read_json(self, name: str) -> dict[str, Any]:
        blob = self._store.read(self._path(name), RECORD_LIMIT)
        if blob is None:
            raise FileNotFoundError(name)
        if blob.data is None:
            raise Damaged(f"larger than {RECORD_LIMIT} bytes")
        return parse_record(blob.data)

    def _forget(self, entry_id: str, kept: bool) -> None:
        """Remove a change's pending record and pre-image (nothing was published)."""
        try:
            for name in (entry_id + ".pending", entry_id + ".pre" if kept else None):
                if name is not None:
                    with contextlib.suppress(Exception):
                        self._store.discard(self._path(name))
        finally:
            with _in_flight_lock:
                _in_flight.discard(entry_id)

    def _settle(self, stem: str, names: dict[str, StoredName]) -> dict[str, Any] | None:
        """A pending record whose writer is gone: published (the file is no longer at its
        `before`) becomes an entry at the version found; else it goes with its pre-image.
        A record whose writer may still be at work is left alone (None), and so is one whose
        entry exists (its writer removes it)."""
        if stem + ".json" in names:
            return None
        try:
            record = self._read_json(stem + ".pending")
        except FileNotFoundError:
            return None
        except Exception:
            if self._writer_alive({}, stem):
                return None
            self._forget(stem, True)
            return None
        if self._writer_alive(record, stem):
            return None
        key = record.get("key")
        try:
            path = str(self._store.fs._strip_protocol(key)) if isinstance(key, str) else None
            entry = self._store.stat(path) if path is not None else None
        except Exception:
            return None  # the storage did not answer: settle another time
        now = entry.version if entry is not None else None
        if now == record.get("before"):
            self._forget(stem, True)  # never published
            return None
        # Published, or the file moved on by a later change (another server went on
        # writing it before anyone settled this record): the version the change left is
        # then the `before` of the first later change of the same file, never the later
        # change's own version.
        later = self._first_later(stem, key, names)
        if later is not None and later.get("before") == record.get("before"):
            # A later change found the file still at this one's `before`: this one was never
            # published, whatever the file is now (else it would be a bogus entry, undoing
            # which would wipe the later change).
            self._forget(stem, True)
            return None
        record["after"] = later["before"] if later is not None else now
        if later is None and path is not None and now is not None:
            # What the dead writer's commit would have kept of the content (its digest, line
            # counts and delta), read at exactly the version found.
            with contextlib.suppress(Exception):
                blob = self._store.read(path, COUNT_LIMIT)
                if blob is not None and blob.version == now and blob.data is not None:
                    before = None
                    if record.get("before") is not None:
                        before = self.pre_image_bytes(stem, COUNT_LIMIT)
                    count_lines(record, before, blob.data)
        try:
            with contextlib.suppress(FileExistsError):
                self._put_new(stem + ".json", record)
            self._store.discard(self._path(stem + ".pending"))
            return self._read_json(stem + ".json")
        except Exception:
            return None

    def _first_later(
        self, stem: str, key: object, names: dict[str, StoredName]
    ) -> dict[str, Any] | None:
        """The first record after `stem` (committed or pending) of the file `key` (read in
        one batch; a damaged one is passed over)."""
        later = sorted(
            name
            for name in names
            if name.rpartition(".")[2] in ("json", "pending")
            and name.rpartition(".")[0] > stem
            and ENTRY_ID.match(name.rpartition(".")[0])
        )
        if not later:
            return None
        records = self._read_records(later, names)
        for name in later:
            record = records.get(name)
            if (
                isinstance(record, dict)
                and record.get("key") == key
                and (record.get("before") is None or isinstance(record.get("before"), str))
            ):
                return record
        return None

    def _writer_alive(self, record: dict[str, Any], stem: str) -> bool:
        with _in_flight_lock:
            if stem in _in_flight:
                return True
        pid = record.get("pid")
        if record.get("host") == _HOST and isinstance(pid, int):
            if pid == os.getpid():
                return False  # not in flight here: its change ended without a commit
            started = process_started(pid)
            return started is not None and started == record.get("started")
        return time.time_ns() - id_time_ns(stem) < LEASE_SECONDS * 1_000_000_000


def _what(exc: Exception, verb: messages.Verb, display: str) -> str:
    """A backend failure's reason, in the words of the journal's refusal."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    message = backend_error(exc, verb, display).message
    return message.partition(": ")[2] or type(exc).__name__
