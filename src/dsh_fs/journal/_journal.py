"""`Journal`: list, diff and undo the changes a store recorded (SPEC §9), through the same
provider and fence the tools use."""

from __future__ import annotations

import datetime as dt
import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from anyio import to_thread

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import (
    ENTRY_ID,
    CreateIfAbsent,
    FileSystem,
    FsChangeMeta,
    FsFileType,
    FsPreImage,
    FsTarget,
    FsVersion,
    JournalEntry,
    JournalProblem,
    JournalStore,
    JournalUsage,
    delete_dir_journaled,
    utf16_as_utf8,
)

from ._plugin import DEFAULT_MAX_AGE_SECONDS, DEFAULT_MAX_BYTES, capture, session_label

__all__ = ["DIFF_LIMIT", "Journal", "UndoResult", "parse_since"]

DIFF_LIMIT = 16 * 1024 * 1024
"""The largest side a `diff` shows (bigger: a line saying so)."""

_DURATION = re.compile(r"\A([0-9]+)([smhd])\Z")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


@dataclass(frozen=True, slots=True, kw_only=True)
class UndoResult:
    """What an undo did to one change: ``undone``, or ``refused`` with the reason."""

    id: str
    path: str
    result: str
    reason: str | None

    def to_json(self) -> dict[str, object]:
        """``{id, path, result, reason}``."""
        return {"id": self.id, "path": self.path, "result": self.result, "reason": self.reason}


def parse_since(text: str, now: dt.datetime | None = None) -> str:
    """An RFC 3339 time or a duration back from now (``90s``, ``10m``, ``2h``, ``1d``), as
    the id prefix it bounds (ids sort by time).

    Raises:
        ValueError: neither.
    """
    now = now or dt.datetime.now(dt.timezone.utc)
    match = _DURATION.match(text.strip())
    if match:
        moment = now - dt.timedelta(seconds=int(match.group(1)) * _UNITS[match.group(2)])
    else:
        try:
            moment = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(
                f"--since {text!r} is neither an RFC 3339 time nor a duration like 10m"
            ) from None
        if moment.tzinfo is None:
            raise ValueError(f"--since {text!r} has no time zone (add Z or an offset)")
    moment = moment.astimezone(dt.timezone.utc)
    return moment.strftime("%Y%m%dT%H%M%S") + f".{moment.microsecond:06d}Z"


class Journal:
    """The journal of a workspace: `entries`, `diff`, `undo` (`ws.journal`).

    Args:
        fs: The workspace's provider (undo goes through it, and through its fence).
        store: Where the entries are.
        max_bytes, max_age_seconds: The bounds `prune` applies.
    """

    def __init__(
        self,
        fs: FileSystem,
        store: JournalStore,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        max_age_seconds: float = DEFAULT_MAX_AGE_SECONDS,
    ) -> None:
        self.fs = fs
        self.store = store
        self.max_bytes = max_bytes
        self.max_age_seconds = max_age_seconds

    @property
    def location(self) -> str:
        """Where the store is."""
        return self.store.location

    async def entries(
        self,
        *,
        session: str | None = None,
        since: str | None = None,
        paths: Sequence[str] = (),
    ) -> list[JournalEntry]:
        """The entries, newest first, filtered by session label (exact, or a prefix of it
        ending before a ``-``: ``claude-code`` selects ``claude-code-stdio-1a2b3c``), time
        (RFC 3339 or a duration, inclusive) and paths (display or relative to the root)."""
        entries, _ = await self.read()
        return _select(entries, session=session, since=since, paths=paths)[::-1]

    async def read(self) -> tuple[list[JournalEntry], list[JournalProblem]]:
        """Every entry, oldest first, and the records that could not be read."""
        return await to_thread.run_sync(self.store.entries)

    async def usage(self) -> JournalUsage:
        """How much the store holds."""
        return await to_thread.run_sync(self.store.usage)

    async def prune(self) -> int:
        """Apply the bounds now; returns how many pre-images went."""
        now = dt.datetime.now(dt.timezone.utc)
        now_ns = int(now.timestamp() * 1_000_000_000)
        return await to_thread.run_sync(
            self.store.prune, self.max_bytes, self.max_age_seconds, now_ns
        )

    async def entry(self, entry_id: str) -> JournalEntry:
        """The entry `entry_id` (a unique prefix will do).

        Raises:
            KeyError: no such entry (or the prefix is not unique).
        """
        entries, _ = await self.read()
        return _find(entries, entry_id)

    async def diff(self, entry_id: str) -> str:
        """The unified diff of one change (`--- a/<rel>` / `+++ b/<rel>`; `/dev/null` for a
        create's before and a delete's after).

        Raises:
            KeyError: no such entry.
        """
        entries, _ = await self.read()
        entry = _find(entries, entry_id)
        old_name = "/dev/null" if entry.before is None else f"a/{entry.rel}"
        new_name = "/dev/null" if entry.after is None else f"b/{entry.rel}"
        if entry.directory or entry.link:
            what = "a directory" if entry.directory else "a symbolic link"
            moved = f" moved from {entry.source}" if entry.source is not None else ""
            return f"--- {old_name}\n+++ {new_name}\n({what}{moved}: no text to diff)\n"
        before = await self._before_text(entry)
        after = await self._after_text(entry, entries)
        if before is None or after is None:
            missing = "before" if before is None else "after"
            return (
                f"--- {old_name}\n+++ {new_name}\n"
                f"(the content {missing} this change is no longer kept, or is not text)\n"
            )
        lines = difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            old_name,
            new_name,
        )
        out = []
        for line in lines:
            out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
        return "".join(out) or f"--- {old_name}\n+++ {new_name}\n"

    async def undo(
        self,
        *,
        ids: Iterable[str] = (),
        session: str | None = None,
        since: str | None = None,
        dry_run: bool = False,
        label: str = "api",
    ) -> list[UndoResult]:
        """Undo the selected changes, newest first, each only if its file is exactly where
        the change left it; the undos are journaled under session `label`.

        Raises:
            KeyError: an id names no entry.
            ValueError: nothing selects the changes, or a bad `since`.
        """
        ids = list(ids)
        if not ids and session is None and since is None:
            raise ValueError("name the changes to undo: ids, a session or a time")
        entries, _ = await self.read()
        chosen = [_find(entries, entry_id) for entry_id in ids]
        if session is not None or since is not None:
            chosen += _select(entries, session=session, since=since, paths=())
        unique = {entry.id: entry for entry in chosen}
        undone_by = {e.undoes: e for e in entries if e.undoes is not None}
        # The version a file has after an undo, for the older change it exposes again.
        restored: dict[FsVersion | None, FsVersion | None] = {}
        for undo_entry in entries:
            if undo_entry.undoes is not None and undo_entry.id not in undone_by:
                original = next((e for e in entries if e.id == undo_entry.undoes), None)
                if original is not None:
                    restored[original.before] = undo_entry.after
        owner = session_label(label)
        results: list[UndoResult] = []
        for entry in sorted(unique.values(), key=lambda e: e.id, reverse=True):
            if entry.source is not None and (entry.directory or entry.link):
                results.append(await self._undo_entry_move(entry, undone_by, owner, dry_run))
                continue
            if entry.directory:
                result, new_version = await self._undo_directory(
                    entry, undone_by, restored, owner, dry_run
                )
                results.append(result)
                if result.result == "undone" and entry.before is not None:
                    restored[entry.before] = new_version  # a delete's undo made it again
                continue
            if entry.source is not None:
                result, new_version = await self._undo_move(
                    entry, undone_by, restored, owner, dry_run
                )
                if result.result == "undone" and entry.source_version is not None:
                    # The older change of the source left the file at `source_version`.
                    restored[entry.source_version] = new_version
                results.append(result)
                continue
            result, new_version = await self._undo_one(entry, undone_by, restored, owner, dry_run)
            results.append(result)
            if result.result == "undone":
                restored[entry.before] = new_version
        return results

    async def _undo_directory(
        self,
        entry: JournalEntry,
        undone_by: dict[str, JournalEntry],
        restored: dict[FsVersion | None, FsVersion | None],
        owner: str,
        dry_run: bool,
    ) -> tuple[UndoResult, FsVersion | None]:
        """A made directory removed again, only while it is exactly as the change left it
        (its version, or the one a later change's undo made it again at; the removal itself
        refuses a directory that is not empty); a removed one (a delete, an undone mkdir)
        made again, only where nothing is now. The undo is journaled; returns the version
        the directory is made again at (None otherwise)."""

        def result(reason: str | None) -> tuple[UndoResult, FsVersion | None]:
            return _verdict(entry, reason), None

        if entry.id in undone_by:
            return result(f"already undone by {undone_by[entry.id].id}")
        meta = FsChangeMeta(tool="undo", session=owner, undoes=entry.id)
        try:
            target = await self.fs.resolve(entry.path)
            info = await self.fs.stat(target)
            if entry.after is None:  # a removal: make the directory again
                if info is not None:
                    return result("a file exists there now")
                if dry_run:
                    return result(None)
                await self.fs.mkdir(target, capture=capture(self.store, meta))
                made = await self.fs.stat(target)
                return _verdict(entry), made.version if made is not None else None
            if info is None or info.type is not FsFileType.DIRECTORY:
                return result("the directory is gone" if info is None else "a file is there now")
            expected = self._expected(entry.after, restored)
            if info.version != expected:
                return result(await self._changed_since(entry, info.version))
            if dry_run:
                return result(None)
            await self._remove_directory(target, info.version, meta)
        except FsError as error:
            return result(error.message)
        return result(None)

    async def _remove_directory(
        self, target: FsTarget, version: FsVersion, meta: FsChangeMeta
    ) -> None:
        """Remove the empty directory `target` (at `version`), journaled as an undo: the
        pending record first, then the removal (a directory carries no content to keep)."""
        await delete_dir_journaled(self.fs, target, capture(self.store, meta), version)

    async def _undo_entry_move(
        self, entry: JournalEntry, undone_by: dict[str, JournalEntry], owner: str, dry_run: bool
    ) -> UndoResult:
        """A directory's or a link's move moved back: only while the same entry (the
        identity its `after` names) is at the destination and nothing is at the source.
        What changed inside a directory since moves back with it (a rename loses nothing);
        the provider checks the identity again in its critical section. Journaled."""

        assert entry.source is not None
        what, kind = (
            ("directory", FsFileType.DIRECTORY) if entry.directory else ("link", FsFileType.SYMLINK)
        )
        if entry.id in undone_by:
            return _verdict(entry, f"already undone by {undone_by[entry.id].id}")
        if entry.after is None:
            return _verdict(entry, f"the move left no {what} to move back; it can't be undone")
        try:
            info = await self.fs.lstat(entry.path)
            if info is None:
                return _verdict(entry, f"the {what} is gone")
            if info.type is not kind:
                return _verdict(
                    entry, f"a {_kind_name(info.type)} is there now, not the moved {what}"
                )
            if await self.fs.lstat(entry.source) is not None:
                return _verdict(entry, f"a file exists at {entry.source} now")
            if dry_run:
                return _verdict(entry)
            destination = await self.fs.resolve(entry.path)
            source = await self.fs.resolve(entry.source)
            meta = FsChangeMeta(tool="undo", session=owner, undoes=entry.id)
            await self.fs.move(
                destination,
                source,
                entry.after,
                CreateIfAbsent(),
                capture=capture(self.store, meta),
            )
        except FsError as error:
            if error.code is FsErrorCode.STALE_VERSION:
                return _verdict(
                    entry, f"another {what} is there now (not the one this change moved)"
                )
            if error.code is FsErrorCode.ALREADY_EXISTS:
                return _verdict(entry, f"a file exists at {entry.source} now")
            return _verdict(entry, error.message)
        return _verdict(entry)

    async def _undo_move(
        self,
        entry: JournalEntry,
        undone_by: dict[str, JournalEntry],
        restored: dict[FsVersion | None, FsVersion | None],
        owner: str,
        dry_run: bool,
    ) -> tuple[UndoResult, FsVersion | None]:
        """A file's move moved back (only if the destination is still exactly what the move
        left and nothing is at the source), then the file it replaced, if any, recreated
        from its pre-image."""

        def refused(reason: str) -> tuple[UndoResult, FsVersion | None]:
            return _verdict(entry, reason), None

        assert entry.source is not None
        ready = await self._ready(entry, undone_by, restored, moved=True)
        if isinstance(ready, str):
            return refused(ready)
        expected, pre_image = ready
        try:
            destination = await self.fs.resolve(entry.path)
            source = await self.fs.resolve(entry.source)
            info = await self.fs.stat(destination)
            current = info.version if info is not None else None
            expected = self._guard(expected, current)
            if current != expected:
                return refused(await self._changed_since(entry, current))
            if await self.fs.stat(source) is not None:
                return refused(f"a file exists at {entry.source} now")
            if dry_run:
                return _verdict(entry), None
            meta = FsChangeMeta(tool="undo", session=owner, undoes=entry.id)
            outcome = await self.fs.move(
                destination, source, expected, CreateIfAbsent(), capture=capture(self.store, meta)
            )
            if pre_image is not None:
                await self.fs.restore(
                    destination,
                    pre_image,
                    None,
                    mode=entry.mode,
                    capture=capture(self.store, meta),
                )
        except FsError as error:
            if error.code in (FsErrorCode.STALE_VERSION, FsErrorCode.NOT_OBSERVED):
                return refused(await self._changed_since(entry, None))
            if error.code is FsErrorCode.ALREADY_EXISTS:
                return refused(f"a file exists at {entry.source} now")
            return refused(error.message)
        return _verdict(entry), outcome.version

    async def _undo_one(
        self,
        entry: JournalEntry,
        undone_by: dict[str, JournalEntry],
        restored: dict[FsVersion | None, FsVersion | None],
        owner: str,
        dry_run: bool,
    ) -> tuple[UndoResult, FsVersion | None]:
        def refused(reason: str) -> tuple[UndoResult, FsVersion | None]:
            return _verdict(entry, reason), None

        ready = await self._ready(entry, undone_by, restored)
        if isinstance(ready, str):
            return refused(ready)
        expected, pre_image = ready
        try:
            target = await self.fs.resolve(entry.path)
            info = await self.fs.stat(target)
            current = info.version if info is not None else None
            expected = self._guard(expected, current)
            if current != expected:
                return refused(await self._changed_since(entry, current))
            if dry_run:
                return _verdict(entry), None
            meta = FsChangeMeta(tool="undo", session=owner, undoes=entry.id)
            version = await self.fs.restore(
                target, pre_image, expected, mode=entry.mode, capture=capture(self.store, meta)
            )
        except FsError as error:
            if error.code in (FsErrorCode.STALE_VERSION, FsErrorCode.NOT_OBSERVED):
                return refused(await self._changed_since(entry, None))
            return refused(error.message)
        return _verdict(entry), version

    async def _ready(
        self,
        entry: JournalEntry,
        undone_by: dict[str, JournalEntry],
        restored: dict[FsVersion | None, FsVersion | None],
        *,
        moved: bool = False,
    ) -> tuple[FsVersion | None, FsPreImage | None] | str:
        """What undoing `entry` starts from: the version its file should be at now and its
        pre-image (None for a change that created the file); or why it can't be undone (a
        move, `moved`, also when it left nothing to move back)."""
        if entry.id in undone_by:
            return f"already undone by {undone_by[entry.id].id}"
        if not entry.undoable or (moved and entry.after is None):
            return "its pre-image was pruned or never kept; it can't be undone"
        pre_image = None
        if entry.before is not None:
            pre_image = await to_thread.run_sync(self.store.pre_image, entry.id)
            if pre_image is None:
                return "its pre-image is missing from the journal"
        return self._expected(entry.after, restored), pre_image

    def _guard(self, expected: FsVersion | None, current: FsVersion | None) -> FsVersion | None:
        """The version an undo is guarded on: `current` when the store tells it apart from
        `expected` only by what its own pre-images move (the ctime), else `expected`."""
        if (
            expected is not None
            and current is not None
            and current != expected
            and self.store.unchanged(expected, current)
        ):
            return current  # the guard is the file as it is now
        return expected

    def _expected(
        self, after: FsVersion | None, restored: dict[FsVersion | None, FsVersion | None]
    ) -> FsVersion | None:
        """Where the file of a change that left it at `after` should be now: there, or where
        a later change's undo put it back (`restored`, keyed by that change's `before`)."""
        if after is None:
            return None
        if after in restored:
            return restored[after]
        for before, now in restored.items():
            if before is not None and self.store.unchanged(after, before):
                return now
        return after

    async def _changed_since(self, entry: JournalEntry, current: FsVersion | None) -> str:
        entries, _ = await self.read()
        later = [
            e for e in entries if e.id > entry.id and e.rel == entry.rel and e.after == current
        ]
        if entry.after is None:
            base = "a file exists there now"
        else:
            base = "the file changed since" if current is not None else "the file is gone"
        if later:
            return f"{base} (by {later[-1].session}, entry {later[-1].id})"
        return f"{base} (not by a journaled change)"

    async def _before_text(self, entry: JournalEntry) -> str | None:
        if entry.before is None:
            return ""
        data = await to_thread.run_sync(self.store.pre_image_bytes, entry.id, DIFF_LIMIT)
        return _text(data)

    async def _after_text(self, entry: JournalEntry, entries: list[JournalEntry]) -> str | None:
        if entry.after is None:
            return ""
        for later in entries:
            if later.id > entry.id and later.rel == entry.rel and later.before == entry.after:
                data = await to_thread.run_sync(self.store.pre_image_bytes, later.id, DIFF_LIMIT)
                if data is not None:
                    return _text(data)
        try:
            target = await self.fs.resolve(entry.path)
            info = await self.fs.stat(target)
            if info is None or info.version != entry.after:
                return None
            return _text(await self.fs.read_bytes(target, DIFF_LIMIT))
        except FsError:
            return None


def _verdict(entry: JournalEntry, reason: str | None = None) -> UndoResult:
    """The undo of `entry`: refused for `reason`, else undone."""
    outcome = "undone" if reason is None else "refused"
    return UndoResult(id=entry.id, path=entry.path, result=outcome, reason=reason)


def _kind_name(kind: FsFileType) -> str:
    return {FsFileType.DIRECTORY: "directory", FsFileType.SYMLINK: "link"}.get(kind, "file")


def _text(data: bytes | None) -> str | None:
    # SPEC §12: a file with a UTF-16 BOM is shown as its text.
    data = utf16_as_utf8(data)
    if data is None or b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _find(entries: list[JournalEntry], entry_id: str) -> JournalEntry:
    matches = [entry for entry in entries if entry.id.startswith(entry_id)] if entry_id else []
    if len(matches) == 1 and (ENTRY_ID.match(entry_id) or len(entry_id) >= 8):
        return matches[0]
    exact = [entry for entry in matches if entry.id == entry_id]
    if exact:
        return exact[0]
    raise KeyError(entry_id)


def _select(
    entries: list[JournalEntry], *, session: str | None, since: str | None, paths: Sequence[str]
) -> list[JournalEntry]:
    bound = parse_since(since) if since is not None else None
    wanted = {path.rstrip("/") for path in paths}
    chosen = []
    for entry in entries:
        if session is not None and not (
            entry.session == session or entry.session.startswith(session + "-")
        ):
            continue
        if bound is not None and entry.id < bound:
            continue
        if wanted and not (
            {entry.path, entry.rel, entry.source} & wanted
            or any(entry.rel.startswith(path + "/") for path in wanted)
        ):
            continue
        chosen.append(entry)
    return chosen
