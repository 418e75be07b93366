"""What the local and the fsspec journal stores share (SPEC §9, §9.1): the capture handed to
a provider (the author already attached), reading and vetting the records, usage, pruning
(records count; a running store prunes as it goes) and making room when the store's
filesystem is full. A backend supplies the primitives: list its names, read records
(regular and bounded), keep and commit a change, replace and remove names, and a lock
around pruning.
"""

from __future__ import annotations

import contextlib
import errno
import json
import threading
import time
from abc import abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from dsh_fs.errors import FsError
from dsh_fs.fs import (
    ENTRY_ID,
    EncodedText,
    FsCapture,
    FsChangeMeta,
    FsChangeStart,
    FsVersion,
    JournalEntry,
    JournalProblem,
    JournalStore,
    JournalUsage,
    messages,
)

from ._journal_records import (
    COUNT_LIMIT,
    Damaged,
    count_lines,
    id_time_ns,
    record_entry,
    record_reason,
)

__all__ = [
    "AUTO_PRUNE_SHARE",
    "PRUNE_INTERVAL_SECONDS",
    "PendingChange",
    "RecordStore",
    "StoredName",
    "no_lock",
    "parse_record",
]

AUTO_PRUNE_SHARE = 0.75
"""A store pruning as it goes brings itself down to this share of `max_bytes`, so that it
does not prune again at the very next change."""

PRUNE_INTERVAL_SECONDS = 3600.0
"""A store pruning as it goes applies `max_age` at least this often."""

_RECORD_ESTIMATE = 1024
"""What a record adds to the store, roughly, before its paths and label (the estimate only
decides when to prune; pruning measures)."""

_NO_SPACE = (errno.ENOSPC, errno.EDQUOT)


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredName:
    """One name in a store, as its listing shows it (nothing opened)."""

    size: int
    """Its size in bytes (0 when not asked, see `RecordStore._names`)."""
    regular: bool
    """A regular file (an object): anything else is damaged, never opened."""
    stamp: object = None
    """What the listing tells of this name's content without opening it (a local file's
    inode, size, mtime and ctime; an object's size and mtime): a record read before under
    the same name and stamp is not read again. None: nothing tells; it is read every time."""


@dataclass(frozen=True, slots=True, kw_only=True)
class _Read:
    """A committed record as read and vetted before, and what it was read at."""

    stamp: object
    """The record's `StoredName.stamp` when it was read."""
    pre: StoredName | None
    """Its pre-image as listed then (the vetting depends on it)."""
    entry: JournalEntry | None
    """The entry (None: the record is damaged)."""
    problems: tuple[JournalProblem, ...]
    """What reading or vetting it reported."""


@dataclass(slots=True, kw_only=True)
class PendingChange:
    """A change between `prepare` and `commit` as a backend keeps it: its pending record."""

    id: str
    """The entry's id (the names of its records and its pre-image)."""
    record: dict[str, Any]
    """The pending record, completed at the commit."""
    kept: bool
    """Whether a pre-image was kept."""
    before: bytes | None = None
    """The replaced content, when the provider had it in memory (else read from `.pre`)."""
    before_utf8: bool = False
    """`before` is known to be valid UTF-8 (the provider read it as text)."""


@dataclass(slots=True)
class _Ticket:
    """A change between `prepare` and `commit`: the backend's ticket and what it adds."""

    inner: object
    estimate: int
    """What the change adds to the store, estimated before its record is complete."""
    pre_image: int
    """Its pre-image's size (0: none kept)."""


class _StoreCapture(FsCapture):
    """The capture of one change, made by its store where the call starts (the author in
    `meta`): the provider's calls inside its critical section go straight to the store."""

    __slots__ = ("_meta", "_store")

    def __init__(self, store: RecordStore, meta: FsChangeMeta) -> None:
        self._store = store
        self._meta = meta

    def prepare(self, start: FsChangeStart) -> object:
        return self._store._prepare_with_room(self._meta, start)

    def commit(
        self,
        ticket: object,
        after: FsVersion | None,
        content: bytes | EncodedText | None,
        digest: bytes | None = None,
    ) -> None:
        assert isinstance(ticket, _Ticket)
        written = self._store._commit(ticket.inner, after, content, digest)
        # Pruning as it goes comes after the commit, off the critical section's steps: the
        # change is published by now, and `_recorded` never raises into the call. The record
        # counts as written (a forward delta makes it up to ~1 MiB), where the backend knows.
        added = ticket.estimate if written is None else ticket.pre_image + written
        self._store._recorded(added)

    def approved(self, by: str, note: str | None) -> FsCapture:
        return _StoreCapture(self._store, replace(self._meta, approved_by=by, approval_note=note))

    def abandon(self, ticket: object) -> None:
        assert isinstance(ticket, _Ticket)
        self._store._abandon(ticket.inner)


class RecordStore(JournalStore):
    """A journal store of named records (``<id>.pending``, ``<id>.json``) and pre-images
    (``<id>.pre``); the backends supply the primitives below."""

    def __init__(self) -> None:
        self._bounds: tuple[int, float] | None = None
        self._bounds_lock = threading.Lock()
        self._held = 0  # what the store held after the last prune (bytes)
        self._written = 0  # what the changes recorded since added, estimated
        self._pruned_ns = 0
        self._pruning = False
        # The records read before, by name: the stamp they were read at, and the entry
        # (with what vetting it reported) or the failure they gave. A reading opens only
        # the records that are new or changed since (a page polling a 10,000-entry store
        # reads one listing, not 10,000 files); the records stay the truth.
        self._read_before: dict[str, _Read] = {}
        self._read_lock = threading.Lock()

    # The backend's primitives.

    @abstractmethod
    def _names(self, sized: bool = True) -> dict[str, StoredName]:
        """Every name in the store (not below it), without opening any. Not `sized`: only
        the pre-images' sizes are needed (a backend may leave the others 0)."""

    @abstractmethod
    def _read_records(self, names: list[str], listed: dict[str, StoredName]) -> dict[str, Any]:
        """The records `names`, parsed: each a dict, or the exception that makes it damaged
        (a record that is not a regular file or larger than `RECORD_LIMIT` is never read
        into memory). `listed` is what `_names` said about them."""

    @abstractmethod
    def _prepare(self, meta: FsChangeMeta, start: FsChangeStart) -> object:
        """Keep the pre-image and a pending record, durably (`FsCapture.prepare`); on a
        failure nothing of it is left and the backend's exception is raised as it is."""

    @abstractmethod
    def _commit(
        self,
        ticket: object,
        after: FsVersion | None,
        content: bytes | EncodedText | None,
        digest: bytes | None = None,
    ) -> int | None:
        """`FsCapture.commit`: never raises. Returns the bytes the entry's record holds
        when the backend knows them (bounds while serving count them), else None."""

    @abstractmethod
    def _abandon(self, ticket: object) -> None:
        """`FsCapture.abandon`."""

    @abstractmethod
    def _pending_pre_image(self, entry_id: str, limit: int) -> bytes | None:
        """The bytes of the pre-image kept for `entry_id`, whose record is not committed
        yet (so not vetted against it); None when larger than `limit`. May raise."""

    @abstractmethod
    def _settle(self, stem: str, names: dict[str, StoredName]) -> dict[str, Any] | None:
        """A pending record whose writer is gone, completed (the record of the entry it
        became) or dropped (None); None too while its writer may be at work."""

    @abstractmethod
    def _replace_record(self, entry_id: str, record: dict[str, Any]) -> None:
        """Replace the committed record of `entry_id`, whole or not at all."""

    @abstractmethod
    def _remove(self, *names: str | None) -> None:
        """Remove these names (absent ones are no error)."""

    @abstractmethod
    def _locked(self) -> contextlib.AbstractContextManager[None]:
        """Held while pruning (one pruner at a time where the backend can lock)."""

    @abstractmethod
    def _failure(self, exc: Exception, start: FsChangeStart) -> str:
        """A backend failure of `_prepare`, in the words of the journal's refusal."""

    def _completed(
        self,
        change: PendingChange,
        after: FsVersion | None,
        content: bytes | EncodedText | None,
        digest: bytes | None,
    ) -> dict[str, Any]:
        """The pending record of `change` completed as its entry's (the first step of a
        backend's `_commit`): the version published and the line counts. The replaced
        content is the one the provider read (an edit): no second read of the file; else
        the pre-image, read as it is. May raise (the backend leaves the pending record for
        the next reader to complete)."""
        record = change.record
        record["after"] = after
        before = change.before
        if before is None and change.kept:
            before = self._pending_pre_image(change.id, COUNT_LIMIT)
        count_lines(record, before, content, digest, change.before_utf8 and before is change.before)
        return record

    def _sweep(self, names: dict[str, StoredName]) -> None:
        """Remove what a pruner killed mid-way left behind (under the lock), and take it out
        of `names` (what is gone holds nothing)."""

    # The capture.

    def capture(self, meta: FsChangeMeta) -> FsCapture:
        return _StoreCapture(self, meta)

    def _prepare_with_room(self, meta: FsChangeMeta, start: FsChangeStart) -> _Ticket:
        """`_prepare`; when the store's filesystem is full, the oldest pre-image dropped to
        make room and the change tried again, as often as it takes; refused (`FS_IO_ERROR`
        naming the journal) only when nothing is left to drop."""
        estimate = (start.size or 0) + _RECORD_ESTIMATE + len(meta.session)
        estimate += 3 * len(start.target.display_path)
        while True:
            try:
                return _Ticket(self._prepare(meta, start), estimate, start.size or 0)
            except FsError:
                raise
            except Exception as exc:
                no_space = isinstance(exc, OSError) and exc.errno in _NO_SPACE
                if no_space and self._make_room():
                    continue
                what = self._failure(exc, start)
                raise messages.journal_failed(
                    start.verb, start.target.display_path, self.location, what
                ) from exc

    def _make_room(self) -> bool:
        """Drop the oldest pre-image (its entry stays, not undoable); whether one went. One
        at a time, the change tried again after each: no more history goes than the disk
        needs. The pre-image goes before its record is marked: the mark needs the room the
        pre-image frees, and an entry without its pre-image is not undoable anyway."""
        with self._locked():
            entries, _ = self.entries()
            names = self._names()
            for entry in entries:
                if entry.undoable and entry.id + ".pre" in names:
                    self._drop_pre_image(entry.id, names)
                    return True
        return False

    # Bounds while serving.

    def bound(self, max_bytes: int, max_age_seconds: float) -> None:
        self._bounds = (max_bytes, max_age_seconds)
        now = time.time_ns()
        # What the store holds and how old its oldest pre-image is, from the listing alone
        # (ids carry their time): the records are read, to prune, only when a bound is
        # exceeded. Opening a store for one `undo` or `log` reads it once, not twice.
        names = self._names()
        # Dead writers' pending records are settled now, before this process changes their
        # files (the records of committed entries are not read for it).
        for name in [n for n in names if n.endswith(".pending") and names[n].regular]:
            stem = name[: -len(".pending")]
            if ENTRY_ID.match(stem):
                with contextlib.suppress(Exception):  # `log` reports what is damaged
                    self._settle(stem, names)
        held = sum(stored.size for stored in names.values() if stored.regular)
        oldest = min(
            (
                id_time_ns(stem)
                for name in names
                if name.endswith(".pre") and ENTRY_ID.match(stem := name[: -len(".pre")])
            ),
            default=now,
        )
        if held > max_bytes or oldest < now - int(max_age_seconds * 1_000_000_000):
            self.prune(max_bytes, max_age_seconds, now)
            return
        with self._bounds_lock:
            self._held, self._written, self._pruned_ns = held, 0, now

    def _recorded(self, estimate: int) -> None:
        """A change was committed: prune now when the store, by estimate, holds more than
        its bound or has not applied its age bound for a while. Never raises (the change
        is published)."""
        bounds = self._bounds
        if bounds is None:
            return
        with self._bounds_lock:
            self._written += estimate
        # A change committed while another thread prunes only adds its estimate (it does
        # not wait); that prune keeps what came in meanwhile (`_prune`), so the pruner looks
        # again once: were it the last change of a run, nothing else would bring it back.
        for _ in range(2):
            now = time.time_ns()
            with self._bounds_lock:
                over = self._held + self._written > bounds[0]
                stale = now - self._pruned_ns > PRUNE_INTERVAL_SECONDS * 1_000_000_000
                if self._pruning or not (over or stale):
                    return
                self._pruning = True
            try:
                self._prune(bounds[1], now, int(bounds[0] * AUTO_PRUNE_SHARE))
            except Exception:
                return  # the next change tries again
            finally:
                with self._bounds_lock:
                    self._pruning = False

    # Reading.

    def entries(self) -> tuple[list[JournalEntry], list[JournalProblem]]:
        names = self._names(sized=False)
        entries: list[JournalEntry] = []
        problems: list[JournalProblem] = []
        committed: list[str] = []
        for name in sorted(names):
            stem, _, suffix = name.rpartition(".")
            if suffix not in ("pending", "json", "pre"):
                continue
            if not names[name].regular:
                problems.append(JournalProblem(name=name, reason="not a regular file"))
                continue
            if suffix == "pending" and ENTRY_ID.match(stem):
                try:
                    record = self._settle(stem, names)
                except Damaged as exc:
                    problems.append(JournalProblem(name=name, reason=str(exc)))
                    continue
                if record is not None and stem + ".json" not in names:
                    names[stem + ".json"] = StoredName(size=0, regular=True)
                    try:
                        entries.append(self._vetted(record, names, problems))
                    except (KeyError, TypeError, ValueError) as exc:
                        problems.append(JournalProblem(name=name, reason=record_reason(exc)))
                continue
            if suffix != "json":
                continue
            if not ENTRY_ID.match(stem):
                problems.append(JournalProblem(name=name, reason="not an entry's name"))
                continue
            committed.append(name)
        for read in self._committed(committed, names):
            if read.entry is not None:
                entries.append(read.entry)
            problems.extend(read.problems)
        entries.sort(key=lambda entry: entry.id)
        return entries, problems

    def _committed(self, committed: list[str], names: dict[str, StoredName]) -> list[_Read]:
        """The committed records `committed`, each vetted: the ones read before at the same
        stamp (and with the same pre-image listed) as they were, the others read now."""
        with self._read_lock:
            before = self._read_before
            # Names gone from the store are forgotten (pruned, removed): the memory holds
            # what the store holds, no more.
            if len(before) > len(committed):
                self._read_before = before = {n: before[n] for n in committed if n in before}
            known: dict[str, _Read] = {}
            for name in committed:
                read = before.get(name)
                stamp = names[name].stamp
                pre = names.get(name[: -len("json")] + "pre")
                if (
                    read is not None
                    and stamp is not None
                    and (read.stamp, read.pre) == (stamp, pre)
                ):
                    known[name] = read
        fresh = [name for name in committed if name not in known]
        records = self._read_records(fresh, names) if fresh else {}
        out = []
        for name in committed:
            read = known.get(name)
            if read is None:
                read = self._vet_one(name, records, names)
                if read.stamp is not None:
                    with self._read_lock:
                        self._read_before[name] = read
            out.append(read)
        return out

    def _vet_one(self, name: str, records: dict[str, Any], names: dict[str, StoredName]) -> _Read:
        """The record `name` as `_read_records` gave it (a dict, or the exception that
        makes it damaged), vetted."""
        problems: list[JournalProblem] = []
        entry = None
        try:
            record = records[name]
            if isinstance(record, BaseException):
                raise record
            assert isinstance(record, dict)
            entry = self._vetted(record, names, problems, name.rpartition(".")[0])
        except (OSError, ValueError, KeyError, TypeError, RecursionError) as exc:
            problems.append(JournalProblem(name=name, reason=record_reason(exc)))
        return _Read(
            stamp=names[name].stamp,
            pre=names.get(name[: -len("json")] + "pre"),
            entry=entry,
            problems=tuple(problems),
        )

    def _vetted(
        self,
        record: dict[str, Any],
        names: dict[str, StoredName],
        problems: list[JournalProblem],
        stem: str | None = None,
    ) -> JournalEntry:
        """The entry of `record`, vetted, with its pre-image: kept only when it is a regular
        file of the recorded size (else reported damaged, and the entry not undoable)."""
        entry_id = record.get("id")
        pre = names.get(f"{entry_id}.pre") if isinstance(entry_id, str) else None
        has_pre = pre is not None
        entry = record_entry(record, has_pre, stem)
        if pre is not None and not pre.regular:
            entry = record_entry(record, False, stem)  # reported as not a regular file
        elif pre is not None and entry.size is not None and pre.size != entry.size:
            name = f"{entry.id}.pre"
            problems.append(JournalProblem(name=name, reason="not of its recorded size"))
            entry = record_entry(record, False, stem)
        return entry

    def usage(self) -> JournalUsage:
        names = self._names()
        return JournalUsage(
            location=self.location,
            entries=sum(1 for name in names if name.endswith(".json")),
            pre_images=sum(1 for name in names if name.endswith(".pre")),
            bytes=sum(stored.size for stored in names.values()),
        )

    # Pruning.

    def prune(self, max_bytes: int, max_age_seconds: float, now_ns: int) -> int:
        return self._prune(max_age_seconds, now_ns, max_bytes)

    def _prune(self, max_age_seconds: float, now_ns: int, target: int) -> int:
        """Drop pre-images older than `max_age_seconds`, and oldest first while the store
        holds more than `target` bytes (records included); when the records alone hold more,
        the oldest entries go whole. Returns how many pre-images went."""
        with self._locked():
            # What changes recorded before the listing below added is in its total; what
            # they add from here on is not, and stays counted (taken off at the end).
            with self._bounds_lock:
                counted = self._written
            entries, _ = self.entries()
            names = self._names()
            self._sweep(names)
            total = _held(names, entries)
            oldest = now_ns - int(max_age_seconds * 1_000_000_000)
            pruned = 0
            for entry in entries:  # oldest first
                pre = names.get(entry.id + ".pre")
                too_old = id_time_ns(entry.id) < oldest
                if pre is None or not entry.undoable or not (too_old or total > target):
                    continue
                self._drop_pre_image(entry.id, names)
                del names[entry.id + ".pre"]
                total -= pre.size
                pruned += 1
            # Records count toward the bound: once no pre-image is left to drop, the oldest
            # entries themselves go (oldest first out), so a flood of records can't grow the
            # store without end.
            for entry in entries:
                if total <= target:
                    break
                record = names.get(entry.id + ".json")
                if record is None:
                    continue
                pre = names.pop(entry.id + ".pre", None)
                self._remove(entry.id + ".pre", entry.id + ".json")
                total -= record.size + (pre.size if pre is not None and pre.regular else 0)
            with self._bounds_lock:
                self._held, self._pruned_ns = max(total, 0), now_ns
                self._written = max(self._written - counted, 0)
            return pruned

    def _drop_pre_image(self, entry_id: str, names: dict[str, StoredName]) -> None:
        """Remove a pre-image, then mark its entry pruned (a crash between leaves an entry
        without a pre-image: not undoable all the same, and no stray kept forever)."""
        self._remove(entry_id + ".pre")
        name = entry_id + ".json"
        with contextlib.suppress(Exception):
            record = self._read_records([name], names)[name]
            if isinstance(record, dict):
                record["pruned"] = True
                self._replace_record(entry_id, record)


def _held(names: dict[str, StoredName], entries: list[JournalEntry]) -> int:
    """What the store's own files hold: the entries' records and pre-images, the pending
    and staged records. A damaged name is not counted: pruning can't remove it (it is left
    for a person to look at), and a planted huge file must not push every entry out."""
    ids = {entry.id for entry in entries}
    total = 0
    for name, stored in names.items():
        stem, _, suffix = name.rpartition(".")
        if stored.regular and (stem in ids or suffix in ("pending", "tmp")):
            total += stored.size
    return total


def parse_record(data: bytes) -> dict[str, Any]:
    """A record's bytes as its JSON object.

    Raises:
        ValueError: not JSON, or not an object.
    """
    record = json.loads(data)
    if not isinstance(record, dict):
        raise ValueError("not a JSON object")
    return record


@contextlib.contextmanager
def no_lock() -> Iterator[None]:
    """For a backend that can't lock its pruning (racing pruners do idempotent steps)."""
    yield
