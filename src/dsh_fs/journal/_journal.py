"""`Journal`: list, diff and undo the changes a store recorded (SPEC §9), through the same
provider and fence the tools use."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import re
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import anyio
from anyio import to_thread

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import (
    CreateIfAbsent,
    FileSystem,
    FsCapture,
    FsChangeMeta,
    FsFileType,
    FsPreImage,
    FsTarget,
    FsVersion,
    JournalEntry,
    JournalProblem,
    JournalStore,
    JournalUsage,
    ReplaceIfVersion,
    SetFileRecord,
    SetRecord,
    SetRecords,
    apply_delta,
    delete_dir_journaled,
    transcoded_utf8,
)

from . import _diff, _hunks
from ._hunks import HunkResult
from ._plugin import DEFAULT_MAX_AGE_SECONDS, DEFAULT_MAX_BYTES, capture, session_label

__all__ = ["DIFF_LIMIT", "SHORT_ID", "Journal", "UndoResult", "parse_since", "printable"]

DIFF_LIMIT = 16 * 1024 * 1024
"""The largest side a `diff` shows (bigger: a line saying so)."""

_UNDO_MARK = "-undo-"
"""What names the intent record of a set's undo (``<group>-undo-<token>``)."""

HUNK_TOOL = "undo-hunks"
"""The tool of a revert by hunk's entry (its `undoes` names the change): an undo that did
not put the file back as it was before the change."""

SHORT_ID = 8
"""The fewest characters of an id that name an entry (a unique prefix)."""

_DURATION = re.compile(r"\A([0-9]+)([smhd])\Z")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


@dataclass(frozen=True, slots=True, kw_only=True)
class UndoResult:
    """What an undo did to one change: ``undone``, or ``refused`` with the reason."""

    id: str
    path: str
    result: str
    reason: str | None
    hunks: tuple[HunkResult, ...] | None = None
    """For a revert by hunk, what became of each hunk asked for (None otherwise)."""

    def to_json(self) -> dict[str, object]:
        """``{id, path, result, reason}``, and ``hunks: [{n, result, reason}]`` for a revert
        by hunk."""
        item: dict[str, object] = {
            "id": self.id,
            "path": self.path,
            "result": self.result,
            "reason": self.reason,
        }
        if self.hunks is not None:
            item["hunks"] = [hunk.to_json() for hunk in self.hunks]
        return item


def parse_since(text: str, now: dt.datetime | None = None) -> str:
    """An RFC 3339 time or a duration back from now (``90s``, ``10m``, ``2h``, ``1d``), as
    the id prefix it bounds (ids sort by time).

    Raises:
        ValueError: neither.
    """
    now = now or dt.datetime.now(dt.timezone.utc)
    match = _DURATION.match(text.strip())
    try:
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
    except OverflowError:
        # A duration reaching before the year 1, or a time whose offset takes it out of
        # the years 1-9999 in UTC.
        raise ValueError(f"--since {text!r} is outside the years 1 to 9999 (UTC)") from None
    return moment.strftime("%Y%m%dT%H%M%S") + f".{moment.microsecond:06d}Z"


class Journal:
    """The journal of a workspace: `entries`, `diff`, `undo` (`ws.journal`).

    Args:
        fs: The workspace's provider (undo goes through it, and through its fence).
        store: Where the entries are.
        max_bytes, max_age_seconds: The bounds `prune` applies.
        set_records: Where a change set's undo keeps its intent record while it restores
            (SPEC §13; None: the undo is all or none against a concurrent writer only, not
            against a kill).
    """

    def __init__(
        self,
        fs: FileSystem,
        store: JournalStore,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        max_age_seconds: float = DEFAULT_MAX_AGE_SECONDS,
        set_records: SetRecords | None = None,
    ) -> None:
        self.fs = fs
        self.store = store
        self.set_records = set_records
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
        entries: Sequence[JournalEntry] | None = None,
    ) -> list[JournalEntry]:
        """The entries, newest first, filtered by session label (exact, or a prefix of it
        ending before a ``-``: ``claude-code`` selects ``claude-code-stdio-1a2b3c``), time
        (RFC 3339 or a duration, inclusive) and paths (display or relative to the root).
        `entries`: what `read` returned, when the caller read the store already (then it is
        not read again)."""
        if entries is None:
            entries, _ = await self.read()
        return _select(list(entries), session=session, since=since, paths=paths)[::-1]

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

    async def entry(
        self, entry_id: str, *, entries: Sequence[JournalEntry] | None = None
    ) -> JournalEntry:
        """The entry `entry_id` (a unique prefix will do); for the id of a change set
        (SPEC §13), the set's first change. `entries`: what `read` returned, when the caller
        read the store already (then it is not read again).

        Raises:
            KeyError: no such entry (or the prefix is not unique).
        """
        if entries is None:
            entries, _ = await self.read()
        members = [entry for entry in entries if entry.group == entry_id]
        return members[0] if members else _find(entries, entry_id)

    async def diff(self, entry_id: str, *, roots: Sequence[str] = ()) -> str:
        """The unified diff of one change (`--- a/<rel>` / `+++ b/<rel>`; `/dev/null` for a
        create's before and a delete's after); for the id of a change set (SPEC §13), the
        diffs of every change of the set, one after the other, in the order they were made.
        `roots`: the folders a path is shown relative to, the first that holds it (a change
        recorded under another root's store names its file relative to that root); a path
        under none keeps `rel`.

        Raises:
            KeyError: no such entry.
        """
        entries, _ = await self.read()
        members = [entry for entry in entries if entry.group == entry_id]
        if members:
            return "".join([await self._diff(member, entries, roots) for member in members])
        return await self._diff(_find(entries, entry_id), entries, roots)

    async def _diff(
        self, entry: JournalEntry, entries: list[JournalEntry], roots: Sequence[str]
    ) -> str:
        rel = printable(_relative(entry, roots))
        old_name = "/dev/null" if entry.before is None else f"a/{rel}"
        new_name = "/dev/null" if entry.after is None else f"b/{rel}"
        if entry.directory or entry.link:
            what = "a directory" if entry.directory else "a symbolic link"
            moved = f" moved from {printable(entry.source)}" if entry.source is not None else ""
            return f"--- {old_name}\n+++ {new_name}\n({what}{moved}: no text to diff)\n"
        if entry.source is not None and entry.before is None:
            # A file moved to a free name: its content moved with it, nothing to diff.
            return (
                f"--- {old_name}\n+++ {new_name}\n"
                f"(a file moved from {printable(entry.source)}: its content unchanged)\n"
            )
        header = ""
        if entry.source is not None:
            header = f"(a file moved from {printable(entry.source)}, over the file there)\n"
        before_bytes = await self._before_bytes(entry)
        before = _text(before_bytes, entry.codec)
        after = await self._after_text(entry, entries, before_bytes)
        if before is None or after is None:
            missing = "before" if before is None else "after"
            return (
                f"{header}--- {old_name}\n+++ {new_name}\n"
                f"(the content {missing} this change is no longer kept, or is not text)\n"
            )
        # Off the event loop: a large change takes a while even matched in near-linear
        # time, and a server (the review page) keeps answering meanwhile.
        return header + await to_thread.run_sync(_unified, before, after, old_name, new_name)

    async def undo(
        self,
        *,
        ids: Iterable[str] = (),
        session: str | None = None,
        since: str | None = None,
        dry_run: bool = False,
        label: str = "api",
        hunks: Iterable[int] = (),
        merge: bool = False,
        paths: Sequence[str] = (),
        entries: Sequence[JournalEntry] | None = None,
        problems: Sequence[JournalProblem] = (),
    ) -> list[UndoResult]:
        """Undo the selected changes, newest first, each only if its file is exactly where
        the change left it; the undos are journaled under session `label`.

        `hunks` (numbers from 1, in `diff`'s order) or `merge` (every hunk) revert one text
        change named by id hunk by hunk in a file that changed since (SPEC §9.1): a hunk is
        reverted only where the lines the change wrote are still exactly there with their
        context, found once; the others are refused and kept. The result is published
        guarded by the file's version now and journaled as an undo of the change.

        `paths` narrows a selection to these files and folders (as `entries` takes them).

        The store is read once (or not at all when the caller passes what `read` returned
        as `entries`, and its `problems`, which name the damaged pre-images): every undo,
        refusal and reason is decided from that reading, and each change is applied through
        the provider's guards, which see the files as they are.

        An id may name a change set (SPEC §13: the `group` its entries carry): every change
        of the set is undone, each guarded, all or none (one that would be refused refuses
        them all, and nothing is undone).

        A selection (`session`, `since`) puts each selected file back as it was before the
        earliest selected change still in force (SPEC §9.1): undo entries in it are
        skipped, and so are changes already undone, whoever undid them; run twice, it finds
        nothing the second time. Only an explicit id may name an undo (a redo).

        Raises:
            KeyError: an id names no entry.
            ValueError: nothing selects the changes, or a bad `since`.
        """
        ids = list(ids)
        numbers = sorted(set(hunks))
        if not ids and session is None and since is None:
            raise ValueError("name the changes to undo: ids, a session or a time")
        if (numbers or merge) and (len(ids) != 1 or session is not None or since is not None):
            raise ValueError("a revert by hunk names one change, by its id")
        if entries is None:
            entries, problems = await self.read()
        damaged = {
            p.name.removesuffix(".pre"): p.reason for p in problems if p.name.endswith(".pre")
        }
        entries = list(entries)
        history = _History(entries, damaged)
        members = {
            entry_id: _left(
                [entry for entry in entries if entry.group == entry_id], history.undone_by
            )
            for entry_id in ids
        }
        sets = [entry_id for entry_id in ids if members[entry_id]]
        if sets and not dry_run and not (numbers or merge):
            # A change set is undone whole or not at all (SPEC §13): every file is tried
            # first, and one that would be refused refuses the set.
            trial = await self.undo(
                ids=ids, dry_run=True, label=label, paths=paths, entries=entries
            )
            refused = [result for result in trial if result.result != "undone"]
            if refused:
                why = f"{refused[0].path}: {refused[0].reason}"
                return [
                    result
                    if result.result != "undone"
                    else dataclasses.replace(
                        result, result="refused", reason=f"the change set is refused ({why})"
                    )
                    for result in trial
                ]
        chosen = [
            entry for entry_id in ids for entry in (members[entry_id] or [_find(entries, entry_id)])
        ]
        if numbers or merge:
            owner = session_label(label)
            result, _ = await self._revert_hunks(chosen[0], history, owner, numbers, dry_run)
            return [result]
        if session is not None or since is not None:
            chosen += [
                entry
                for entry in _select(entries, session=session, since=since, paths=paths)
                if entry.undoes is None and entry.id not in history.undone_by
            ]
        unique = {entry.id: entry for entry in chosen}
        undone_by = history.undone_by
        restored = history.restored
        owner = session_label(label)
        results: list[UndoResult] = []
        if sets and not dry_run and not (numbers or merge):
            return await self._undo_set(sorted(unique.values(), key=lambda e: e.id), owner)
        for entry in sorted(unique.values(), key=lambda e: e.id, reverse=True):
            if entry.id in history.reverted:
                # Reverted in part by hunk: only the hunks still in force are taken back,
                # where the file still has them; the reverted ones are never put back.
                result, new_version = await self._revert_hunks(entry, history, owner, [], dry_run)
                results.append(result)
                if new_version is not None:  # the file is as it was before the change
                    restored[entry.before] = new_version
                continue
            if entry.source is not None and (entry.directory or entry.link):
                results.append(await self._undo_entry_move(entry, undone_by, owner, dry_run))
                continue
            if entry.directory:
                result, new_version = await self._undo_directory(entry, history, owner, dry_run)
                results.append(result)
                if result.result == "undone" and entry.before is not None:
                    history.put_back(entry.path, entry.before, new_version, dry_run)
                elif result.result == "undone" and dry_run:
                    history.simulated[entry.path] = None  # a made directory removed
                continue
            if entry.source is not None:
                result, new_version = await self._undo_move(entry, history, owner, dry_run)
                if result.result == "undone":
                    # The older change of the source left the file at `source_version` (None
                    # in older records: unknown, nothing exposed); the file it replaced is
                    # back at the destination (`_undo_move` records its version).
                    if entry.source_version is not None:
                        history.put_back(entry.source, entry.source_version, new_version, dry_run)
                    elif dry_run:
                        history.simulated[entry.source] = entry.after  # back, version unknown
                    if dry_run:
                        history.put_back(entry.path, entry.before, None, dry_run)
                results.append(result)
                continue
            result, new_version = await self._undo_one(entry, history, owner, dry_run)
            results.append(result)
            if result.result == "undone":
                history.put_back(entry.path, entry.before, new_version, dry_run)
        return results

    async def _undo_set(self, chosen: list[JournalEntry], owner: str) -> list[UndoResult]:
        """Undo the changes of a set (already tried, all would be undone), newest first,
        each guarded; if one is refused after all (a writer got in since the trial), the
        files already undone are put back as the set left them (each guarded by the version
        its undo made, journaled as an undo of the undo) and the whole set is refused."""
        records = self.set_records
        record = await self._undo_intent(chosen)
        if records is not None and record is not None:
            # The intent, durable before the first restore: a process killed from here on
            # leaves it, and the next start rolls the half-done undo back (`recover_sets`).
            try:
                await records.begin(record)
            except FsError as error:  # not stored: nothing is undone, as a set publishes
                reason = f"the change set is refused ({error.message})"
                return [_verdict(entry, reason) for entry in reversed(chosen)]
        try:
            results = await self._undo_members(chosen, owner)
        finally:
            if records is not None and record is not None:
                # Whole now (all undone, or put back): the intent goes before the call
                # answers. Shielded: a cancellation here must not strand it.
                with anyio.CancelScope(shield=True):
                    await records.end(record.id)
        return results

    async def _undo_intent(self, chosen: list[JournalEntry]) -> SetRecord | None:
        """The intent record of a set's undo: each file in restore order, its text now as
        "before" and the digest of the text its undo restores as "after" (None: the undo
        deletes it). None when there is nowhere to keep it, or a file or a pre-image is not
        text (then the undo is guarded against a concurrent writer only)."""
        if self.set_records is None:
            return None
        files = []
        try:
            for entry in reversed(chosen):
                target = await self.fs.resolve(entry.path)
                info = await self.fs.stat(target)
                current: str | None = None
                if info is not None:
                    if info.type is not FsFileType.FILE:
                        return None
                    current = _text(await self.fs.read_bytes(target, DIFF_LIMIT), entry.codec)
                    if current is None:
                        return None
                restored = _text(await self._before_bytes(entry), entry.codec)
                if restored is None:
                    return None
                after = None if entry.before is None else SetFileRecord.digest(restored)
                files.append(SetFileRecord(path=entry.path, before=current, after=after))
        except FsError:
            return None  # the undo itself meets the same error and refuses
        group = chosen[0].group or chosen[0].id
        return SetRecord(id=f"{group}{_UNDO_MARK}{secrets.token_hex(4)}", files=tuple(files))

    async def recovery_capture(self, record: SetRecord, item: SetFileRecord) -> FsCapture | None:
        """How the next start journals its roll-back of one file of a killed set undo
        (`recover_sets`' `capture_for`): as an undo of that file's undo (a redo), so the
        journal says the set's change is in force again and undoing the set again undoes
        every file. None for a set's own record (its roll-back is not journaled) or a file
        whose undo the journal does not have (killed before it was recorded)."""
        if _UNDO_MARK not in record.id:
            return None
        entries, _ = await self.read()
        # Recovery runs before anything else: the file's newest entry is the killed undo's.
        newest = next((e for e in reversed(entries) if e.path == item.path), None)
        if newest is None or newest.undoes is None or newest.tool != "undo":
            return None
        meta = FsChangeMeta(tool="undo", session=session_label("recovery"), undoes=newest.id)
        return capture(self.store, meta)

    async def _undo_members(self, chosen: list[JournalEntry], owner: str) -> list[UndoResult]:
        """`_undo_set`'s restores, put back on a refusal."""
        results: list[UndoResult] = []
        for entry in reversed(chosen):
            results.append(await self._undo_single(entry, owner))
            if results[-1].result != "undone":
                break
        if all(result.result == "undone" for result in results):
            return results
        failed = results[-1]
        why = f"{failed.path}: {failed.reason}"
        done = {result.id for result in results if result.result == "undone"}
        entries, _ = await self.read()
        # The undos this call made, newest first: undone in turn, each guarded.
        undos = [e.id for e in entries if e.undoes in done and e.session == owner]
        if undos:
            await self.undo(ids=sorted(undos, reverse=True), label=owner)
        reason = f"the change set is refused ({why})"
        return [
            UndoResult(id=entry.id, path=entry.path, result="refused", reason=reason)
            if entry.id != failed.id
            else failed
            for entry in reversed(chosen)
        ]

    async def _undo_single(self, entry: JournalEntry, owner: str) -> UndoResult:
        """One change of a set undone, guarded (its file is a plain text change's)."""
        entries, _ = await self.read()
        history = _History(entries)
        result, _ = await self._undo_one(entry, history, owner, False)
        return result

    async def _revert_hunks(
        self,
        entry: JournalEntry,
        history: _History,
        owner: str,
        numbers: list[int],
        dry_run: bool,
    ) -> tuple[UndoResult, FsVersion | None]:
        """The hunks `numbers` of `entry` (every hunk not reverted yet when empty) reverted
        in its file as it is now; the file published guarded by the version read, journaled
        as an undo that names the hunks it reverted. A hunk an earlier revert in force took
        back is refused, never put back. Returns the result, and the version published when
        the file is now exactly as it was before the change (None otherwise).

        Raises:
            ValueError: a hunk number the change does not have.
        """

        def refused(
            reason: str, done: list[HunkResult] | None = None
        ) -> tuple[UndoResult, FsVersion | None]:
            result = UndoResult(
                id=entry.id,
                path=entry.path,
                result="refused",
                reason=reason,
                hunks=tuple(done) if done is not None else (),
            )
            return result, None

        if entry.id in history.undone_by:
            return refused(f"already undone by {history.undone_by[entry.id].id}")
        if entry.directory or entry.link or entry.source is not None or entry.after is None:
            return refused("only a change of a file's text has hunks; undo it whole")
        if entry.before is None:
            # Every hunk reverted would leave an empty file where there was none.
            return refused("it created the file; undo it whole")
        before_bytes = await self._before_bytes(entry)
        before = _text(before_bytes, entry.codec)
        after = await self._after_text(entry, history.entries, before_bytes)
        if before is None or after is None:
            return refused("the text of this change is no longer kept, or is not text")
        found = _hunks.hunks(_diff.lines(before), _diff.lines(after))
        taken = history.reverted.get(entry.id, {})
        wanted = numbers or [hunk.n for hunk in found if hunk.n not in taken]
        unknown = [n for n in wanted if not 1 <= n <= len(found)]
        if unknown:
            raise ValueError(
                f"change {entry.id} has {len(found)} hunk{'s' if len(found) != 1 else ''}; "
                f"no hunk {unknown[0]}"
            )
        already = [
            HunkResult(n=n, result="refused", reason=f"already reverted by {taken[n].id}")
            for n in wanted
            if n in taken
        ]
        wanted = [n for n in wanted if n not in taken]
        if not wanted:
            return refused("no hunk could be reverted", already)
        target: FsTarget | None = None
        try:
            target = await self.fs.resolve(entry.path)
            info = await self.fs.stat(target)
            if info is None:
                return refused("the file is gone")
            # The file as the change's codec reads it (SPEC §12): the write below keeps the
            # file's codec, so every byte outside the reverted hunks stays as it is.
            current = _text(await self.fs.read_bytes(target, DIFF_LIMIT), entry.codec)
            if current is None:
                return refused("the file is not text now")
            lines, done = _hunks.revert(
                _diff.lines(current), [found[n - 1] for n in wanted], _diff.lines(after)
            )
            done = sorted(done + already, key=lambda hunk: hunk.n)
            if not any(hunk.result == "reverted" for hunk in done):
                return refused("no hunk could be reverted", done)
            result = UndoResult(
                id=entry.id, path=entry.path, result="undone", reason=None, hunks=tuple(done)
            )
            if dry_run:
                return result, None
            meta = FsChangeMeta(
                tool=HUNK_TOOL,
                session=owner,
                undoes=entry.id,
                hunks=tuple(hunk.n for hunk in done if hunk.result == "reverted"),
                hunk_count=len(found),
            )
            # The version read before the content: a change in between (or during the
            # write) fails the guard and refuses the whole revert.
            text = "".join(lines)
            outcome = await self.fs.write_text(
                target, text, ReplaceIfVersion(info.version), capture=capture(self.store, meta)
            )
        except FsError as error:
            if error.code in (FsErrorCode.STALE_VERSION, FsErrorCode.NOT_OBSERVED):
                return refused(
                    await self._changed_since(entry, await self._now(target), history.entries)
                )
            return refused(error.message)
        # Every hunk taken back and nothing else changed: the file is as it was before the
        # change, so an older change's undo may follow it (its `after` is exposed again).
        return result, (outcome.version if text == before else None)

    async def _undo_directory(
        self, entry: JournalEntry, history: _History, owner: str, dry_run: bool
    ) -> tuple[UndoResult, FsVersion | None]:
        """A made directory removed again, only while it is as the change left it (its
        version, or the one a later change's undo made it again at, or the same directory
        with the same mode, `JournalStore.same_directory`; the removal itself refuses a
        directory that is not empty); a removed one (a delete, an undone mkdir)
        made again, only where nothing is now. The undo is journaled; returns the version
        the directory is made again at (None otherwise)."""

        def result(reason: str | None) -> tuple[UndoResult, FsVersion | None]:
            return _verdict(entry, reason), None

        undone_by = history.undone_by
        if entry.id in undone_by:
            return result(f"already undone by {undone_by[entry.id].id}")
        meta = FsChangeMeta(tool="undo", session=owner, undoes=entry.id)
        info = None
        try:
            target = await self.fs.resolve(entry.path)
            info = await self.fs.stat(target)
            if dry_run and entry.path in history.simulated:
                return self._directory_as_simulated(entry, history)
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
            expected, remade = _directory_expected(entry, history)
            maker = (await self._maker(expected, history) or entry) if remade else entry
            # Entries added and removed since move its timestamps, not what it is: the same
            # directory with its mode is removed (the removal refuses one not empty).
            if info.version != expected and not self.store.same_directory(maker, info.version):
                return result(await self._changed_since(entry, info.version, history.entries))
            if dry_run:
                return result(None)
            await self._remove_directory(target, info.version, meta)
        except FsError as error:
            if error.code is FsErrorCode.NOT_EMPTY and info is not None:
                # Something was made in it since: a change the undo must not take back.
                return result(await self._changed_since(entry, info.version, history.entries))
            return result(error.message)
        return result(None)

    async def _maker(self, version: FsVersion | None, history: _History) -> JournalEntry | None:
        """The entry that published `version`: from the history, else (an undo of this
        very run made it) from the store read again."""
        if version is None:
            return None
        if version in history.published:
            return history.published[version]
        entries, _ = await self.read()
        return next((e for e in entries if e.after == version), None)

    def _directory_as_simulated(
        self, entry: JournalEntry, history: _History
    ) -> tuple[UndoResult, FsVersion | None]:
        """A dry run's verdict on a directory an earlier undo of the run would have made or
        removed (`_History.simulated`), as the real run would give it."""
        now = history.simulated[entry.path]
        if entry.after is None:
            return _verdict(entry, None if now is None else "a file exists there now"), None
        if now is None:
            return _verdict(entry, "the directory is gone"), None
        expected, _ = _directory_expected(entry, history)
        reason = None if now == expected else "the directory changed since"
        return _verdict(entry, reason), None

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
        self, entry: JournalEntry, history: _History, owner: str, dry_run: bool
    ) -> tuple[UndoResult, FsVersion | None]:
        """A file's move moved back (only if the destination is still exactly what the move
        left and nothing is at the source), then the file it replaced, if any, recreated
        from its pre-image."""

        def refused(reason: str) -> tuple[UndoResult, FsVersion | None]:
            return _verdict(entry, reason), None

        assert entry.source is not None
        ready = await self._ready(entry, history, moved=True)
        if isinstance(ready, str):
            return refused(ready)
        expected, pre_image = ready
        destination: FsTarget | None = None
        try:
            destination = await self.fs.resolve(entry.path)
            source = await self.fs.resolve(entry.source)
            info = await self.fs.stat(destination)
            current = history.now(entry.path, info.version if info is not None else None, dry_run)
            expected = await self._guard(expected, current, history)
            if current != expected:
                return refused(await self._changed_since(entry, current, history.entries))
            there = await self.fs.stat(source)
            if history.now(entry.source, there.version if there else None, dry_run) is not None:
                return refused(f"a file exists at {entry.source} now")
            if dry_run:
                return _verdict(entry), None
            meta = FsChangeMeta(tool="undo", session=owner, undoes=entry.id)
            outcome = await self.fs.move(
                destination, source, expected, CreateIfAbsent(), capture=capture(self.store, meta)
            )
            if pre_image is not None:
                made = await self.fs.restore(
                    destination,
                    pre_image,
                    None,
                    mode=entry.mode,
                    capture=capture(self.store, meta),
                )
                # The replaced file is back: an older change of it finds it there.
                history.restored[entry.before] = made
        except FsError as error:
            if error.code in (FsErrorCode.STALE_VERSION, FsErrorCode.NOT_OBSERVED):
                return refused(
                    await self._changed_since(entry, await self._now(destination), history.entries)
                )
            if error.code is FsErrorCode.ALREADY_EXISTS:
                return refused(f"a file exists at {entry.source} now")
            return refused(error.message)
        return _verdict(entry), outcome.version

    async def _undo_one(
        self, entry: JournalEntry, history: _History, owner: str, dry_run: bool
    ) -> tuple[UndoResult, FsVersion | None]:
        def refused(reason: str) -> tuple[UndoResult, FsVersion | None]:
            return _verdict(entry, reason), None

        ready = await self._ready(entry, history)
        if isinstance(ready, str):
            return refused(ready)
        expected, pre_image = ready
        target: FsTarget | None = None
        try:
            target = await self.fs.resolve(entry.path)
            info = await self.fs.stat(target)
            current = history.now(entry.path, info.version if info is not None else None, dry_run)
            expected = await self._guard(expected, current, history)
            if current != expected:
                return refused(await self._changed_since(entry, current, history.entries))
            if dry_run:
                return _verdict(entry), None
            meta = FsChangeMeta(tool="undo", session=owner, undoes=entry.id)
            version = await self.fs.restore(
                target, pre_image, expected, mode=entry.mode, capture=capture(self.store, meta)
            )
        except FsError as error:
            if error.code in (FsErrorCode.STALE_VERSION, FsErrorCode.NOT_OBSERVED):
                return refused(
                    await self._changed_since(entry, await self._now(target), history.entries)
                )
            return refused(error.message)
        return _verdict(entry), version

    async def _ready(
        self, entry: JournalEntry, history: _History, *, moved: bool = False
    ) -> tuple[FsVersion | None, FsPreImage | None] | str:
        """What undoing `entry` starts from: the version its file should be at now and its
        pre-image (None for a change that created the file); or why it can't be undone (a
        move, `moved`, also when it left nothing to move back)."""
        if entry.id in history.undone_by:
            return f"already undone by {history.undone_by[entry.id].id}"
        if entry.id in history.damaged and not entry.undoable:
            return f"its pre-image is damaged ({history.damaged[entry.id]}); it can't be undone"
        if not entry.undoable or (moved and entry.after is None):
            return "its pre-image was pruned or never kept; it can't be undone"
        pre_image = None
        if entry.before is not None:
            pre_image = await to_thread.run_sync(self.store.pre_image, entry.id)
            if pre_image is None:
                return "its pre-image is missing from the journal"
        return await self._expected(entry, history), pre_image

    async def _guard(
        self, expected: FsVersion | None, current: FsVersion | None, history: _History
    ) -> FsVersion | None:
        """The version an undo is guarded on: `current` when the store proves the file
        there still exactly what the change that published `expected` left (content, size,
        mode, identity: only what the journal's own pre-image links move, the ctime,
        differs), else `expected`."""
        if expected is None or current is None or current == expected:
            return expected
        publisher = history.published.get(expected)
        if publisher is not None and await to_thread.run_sync(
            self.store.as_published, publisher, current
        ):
            return current  # the guard is the file as it is now
        return expected

    async def _expected(self, entry: JournalEntry, history: _History) -> FsVersion | None:
        """Where the file `entry` left at its `after` should be now: there, or where a
        later change's undo put it back (`restored`, keyed by that change's `before`)."""
        after, restored = entry.after, history.restored
        if after is None:
            return None
        if after in restored:
            return history.followed(after)
        for later in history.entries:
            if (
                later.id > entry.id
                and later.before is not None
                and later.before in restored
                and self.store.unchanged(after, later.before)
                and await self._same_content(entry, later)
            ):
                return history.followed(later.before)
        return after

    async def _same_content(self, entry: JournalEntry, later: JournalEntry) -> bool:
        """Whether the file `later` replaced is exactly what `entry` published, though its
        version moved in between (a ctime): the same mode and the same bytes, else the
        move was a change (a chmod, a rewrite whose mtime was put back)."""
        if entry.after_mode is None or later.mode != entry.after_mode:
            return False
        own = None
        if entry.digest is None and entry.before is not None:
            # No digest recorded: the delta says what it published (`published_digest`).
            own = await to_thread.run_sync(self.store.pre_image_bytes, entry.id, DIFF_LIMIT)
        expected = entry.published_digest(own)
        if expected is None:
            return False
        data = await to_thread.run_sync(self.store.pre_image_bytes, later.id, DIFF_LIMIT)
        return data is not None and hashlib.sha256(data).hexdigest() == expected

    async def _now(self, target: FsTarget | None) -> FsVersion | None:
        """The version of `target` now (None: absent, or unknown)."""
        if target is None:
            return None
        try:
            info = await self.fs.stat(target)
        except FsError:
            return None
        return info.version if info is not None else None

    async def _changed_since(
        self, entry: JournalEntry, current: FsVersion | None, entries: Sequence[JournalEntry]
    ) -> str:
        """Why `entry` can't be undone with its file at `current`, from the entries the
        undo read (never a second reading of the store per refusal)."""
        later = [
            e for e in entries if e.id > entry.id and (e.rel == entry.rel or e.source == entry.path)
        ]
        what = "directory" if entry.directory else "file"
        if entry.after is None:
            base = "a file exists there now"
        else:
            base = f"the {what} changed since" if current is not None else f"the {what} is gone"
        by = [e for e in later if e.after == current and e.rel == entry.rel]
        if by:
            return f"{base} (by {by[-1].session}, entry {by[-1].id})"
        if current is None and later and later[-1].source == entry.path:
            # Moved away by a journaled change: nothing happened outside the journal.
            moved = later[-1]
            return f"{base} (moved to {moved.path} by {moved.session}, entry {moved.id})"
        if later:
            last = later[-1]
            return f"{base} (last journaled by {last.session}, entry {last.id}; then outside it)"
        return f"{base} (not by a journaled change)"

    async def _before_bytes(self, entry: JournalEntry) -> bytes | None:
        """The content before `entry` (empty for a create; None: not kept)."""
        if entry.before is None:
            return b""
        return await to_thread.run_sync(self.store.pre_image_bytes, entry.id, DIFF_LIMIT)

    async def _after_text(
        self, entry: JournalEntry, entries: list[JournalEntry], before: bytes | None
    ) -> str | None:
        """The content `entry` published: its forward delta applied to the pre-image (so
        the diff outlives the file: format-on-save, the user's edits), else the pre-image
        of the next change that found it, else the file while still at `after`."""
        if entry.after is None:
            return ""
        if entry.delta is not None and before is not None:
            # The delta is relative to the pre-image's text as UTF-8 (SPEC §12).
            made = apply_delta(transcoded_utf8(before, entry.codec) or b"", entry.delta)
            if made is not None:
                return _text(made, None)
        for later in entries:
            if later.id > entry.id and later.rel == entry.rel and later.before == entry.after:
                data = await to_thread.run_sync(self.store.pre_image_bytes, later.id, DIFF_LIMIT)
                if data is not None:
                    return _text(data, entry.codec)
        try:
            target = await self.fs.resolve(entry.path)
            info = await self.fs.stat(target)
            if info is None or info.version != entry.after:
                return None
            return _text(await self.fs.read_bytes(target, DIFF_LIMIT), entry.codec)
        except FsError:
            return None


class _History:
    """What the entries say of each other: which changes are in force, who undid the others,
    and where undos put files back.

    Args:
        entries: Every entry, oldest first.
        damaged: Why the pre-image of an entry is unusable, by entry id (the store's
            reading reported it damaged: not of its recorded size, not a regular file).
    """

    def __init__(self, entries: list[JournalEntry], damaged: dict[str, str] | None = None) -> None:
        self.entries = entries
        self.damaged = damaged or {}
        undoers: dict[str, list[JournalEntry]] = {}
        for entry in entries:
            if entry.undoes is not None:
                undoers.setdefault(entry.undoes, []).append(entry)
        # A change is in force unless an undo in force reverted it; an undo is newer than
        # what it reverts, so newest first decides every undo before what it reverted (an
        # undone undo is a redo: its change is in force again).
        in_force: dict[str, bool] = {}
        self.undone_by: dict[str, JournalEntry] = {}
        """The id of each change no longer in force, and the undo in force that reverted it."""
        self.reverted: dict[str, dict[int, JournalEntry]] = {}
        """Each change reverted in part by hunk and still in force: the hunks the reverts in
        force took back (by number, with the revert that took it). Undoing it takes back
        only the others; once every hunk is taken back the change is undone."""
        for entry in reversed(entries):
            reverts = [u for u in undoers.get(entry.id, ()) if in_force.get(u.id, False)]
            whole = [u for u in reverts if not _in_part(u)]
            taken: dict[int, JournalEntry] = {}
            count = 0
            for revert in reverts:
                if _in_part(revert):
                    assert revert.hunks is not None
                    count = revert.hunk_count or 0
                    taken.update(dict.fromkeys(revert.hunks, revert))
            every = bool(taken) and len(taken) >= count
            in_force[entry.id] = not (whole or every)
            if whole:
                self.undone_by[entry.id] = whole[-1]
            elif every:
                self.undone_by[entry.id] = max(taken.values(), key=lambda u: u.id)
            elif taken:
                self.reverted[entry.id] = taken
        by_id = {entry.id: entry for entry in entries}
        self.restored: dict[FsVersion | None, FsVersion | None] = {}
        """The version a file has after an undo in force, keyed by the version the undone
        change found (the older change's `after` it exposes again)."""
        for entry in entries:
            # A revert by hunk did not put the file back as it was: no older change's
            # `after` is exposed again by it.
            if entry.undoes is not None and in_force[entry.id] and entry.tool != HUNK_TOOL:
                original = by_id.get(entry.undoes)
                if original is None:
                    continue
                if entry.source is not None and original.source is not None:
                    # A move's undo moved the file back to the source: what an older change
                    # of the source left there (`source_version`) is exposed again. (The
                    # file the move replaced, made again, is the undo's other entry.)
                    if original.source_version is not None and not (
                        original.directory or original.link
                    ):
                        self.restored[original.source_version] = entry.after
                elif original.before is not None:
                    self.restored[original.before] = entry.after
        self.simulated: dict[str, FsVersion | None] = {}
        """A dry run's files as the undos it would have made leave them (by path: the
        version, or None for none), where it reads the disk as it is otherwise."""
        self.published: dict[FsVersion, JournalEntry] = {
            entry.after: entry for entry in entries if entry.after is not None
        }
        """The change that published each version."""

    def followed(self, version: FsVersion | None) -> FsVersion | None:
        """Where a file at `version` is now after the undos in force: an undo put it back
        at another version, which a later change replaced and its undo put back again, and
        so on (a redo, then a change, then its undo)."""
        seen = set()
        while version is not None and version in self.restored and version not in seen:
            seen.add(version)
            version = self.restored[version]
        return version

    def put_back(
        self,
        path: str,
        before: FsVersion | None,
        version: FsVersion | None,
        dry_run: bool,
    ) -> None:
        """An undo made here put the file at `path` back as it was at `before` (now at
        `version`); a dry run, which made nothing, says where each file would be, so an
        older change of the same file is judged as the real run would judge it."""
        if dry_run:
            self.simulated[path] = before
        if before is not None:  # a file absent before: nothing older is exposed again
            self.restored[before] = before if dry_run else version

    def now(self, path: str, found: FsVersion | None, dry_run: bool) -> FsVersion | None:
        """The version of the file at `path` an undo is judged on: `found` on the disk, or
        in a dry run the one an earlier undo of the same run would have left."""
        if dry_run and path in self.simulated:
            return self.simulated[path]
        return found


def _left(members: list[JournalEntry], undone_by: dict[str, JournalEntry]) -> list[JournalEntry]:
    """A change set's changes still to undo: those not undone yet, so an undo of the set
    that was cut short (a killed process) is finished by running it again; every change
    when all are undone (each then refused as already undone)."""
    left = [entry for entry in members if entry.id not in undone_by]
    return left or members


def _in_part(revert: JournalEntry) -> bool:
    """Whether `revert` took back only some hunks of the change it names (a revert by hunk
    that recorded them; an older one counts as a whole undo, as it did)."""
    return revert.tool == HUNK_TOOL and revert.hunks is not None


def _directory_expected(entry: JournalEntry, history: _History) -> tuple[FsVersion | None, bool]:
    """Where the directory `entry` made should be now, and whether a later removal's undo
    made it again there (names came and went in it, it was removed, the removal undone:
    the directory now is the one that undo made)."""
    expected = _expected_exactly(entry.after, history)
    if expected == entry.after:
        removal = _removed_later(entry, history)
        if removal is not None and removal.before is not None:
            return history.followed(removal.before), True
    return expected, False


def _removed_later(entry: JournalEntry, history: _History) -> JournalEntry | None:
    """A later journaled removal of the very directory `entry` made (its generation and
    mode), whose undo made it again: the newest such."""
    found = None
    for later in history.entries:
        if (
            later.id > entry.id
            and later.directory
            and later.source is None
            and later.after is None
            and later.rel == entry.rel
            and later.before is not None
            and later.before in history.restored
            and entry.after_generation is not None
            and later.before_generation == entry.after_generation
            and (later.mode is None or later.mode == entry.after_mode)
        ):
            found = later
    return found


def _expected_exactly(after: FsVersion | None, history: _History) -> FsVersion | None:
    """Where a directory a change left at `after` should be now (no content to compare)."""
    if after is None:
        return None
    return history.followed(after)


def _verdict(entry: JournalEntry, reason: str | None = None) -> UndoResult:
    """The undo of `entry`: refused for `reason`, else undone."""
    outcome = "undone" if reason is None else "refused"
    return UndoResult(id=entry.id, path=entry.path, result=outcome, reason=reason)


def _unified(before: str, after: str, old_name: str, new_name: str) -> str:
    """The unified diff `diff` shows, hunks as `undo --hunk N` numbers them (`_hunks` matches
    with the same `_diff.matcher`)."""
    lines = _diff.unified_diff(_diff.lines(before), _diff.lines(after), old_name, new_name)
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out) or f"--- {old_name}\n+++ {new_name}\n"


def _relative(entry: JournalEntry, roots: Sequence[str]) -> str:
    """`entry`'s path relative to the first of `roots` that holds it, else its `rel`."""
    for root in roots:
        inside = root.rstrip("/") + "/"
        if entry.path.startswith(inside):
            return entry.path[len(inside) :]
    return entry.rel


def _kind_name(kind: FsFileType) -> str:
    return {FsFileType.DIRECTORY: "directory", FsFileType.SYMLINK: "link"}.get(kind, "file")


def _text(data: bytes | None, codec: str | None) -> str | None:
    """`data` as text: in `codec`, the one the change was journaled in (SPEC §12), or by a
    UTF-16 BOM, else as UTF-8; None when it is not text."""
    data = transcoded_utf8(data, codec)
    if data is None or b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _find(entries: Sequence[JournalEntry], entry_id: str) -> JournalEntry:
    """The entry `entry_id` names: its whole id, or a unique prefix of at least 8
    characters.

    Raises:
        KeyError: none; with a second argument saying why when the prefix is too short or
            names several entries.
    """
    exact = [entry for entry in entries if entry.id == entry_id]
    if exact:
        return exact[0]
    matches = [entry for entry in entries if entry.id.startswith(entry_id)] if entry_id else []
    if matches and len(entry_id) < SHORT_ID:
        raise KeyError(
            entry_id, f"{entry_id!r} is too short: give at least {SHORT_ID} characters of an id"
        )
    if len(matches) > 1:
        shown = ", ".join(entry.id for entry in matches[:3])
        more = ", …" if len(matches) > 3 else ""
        raise KeyError(
            entry_id,
            f"{entry_id!r} names {len(matches)} changes ({shown}{more}): give more of the id",
        )
    if matches:
        return matches[0]
    raise KeyError(entry_id)


_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(text: str) -> str:
    """`text` safe to print on a line of its own (SPEC §9.1): control characters and line
    breaks escaped (``\\n``, ``\\x1b``, ``\\u2028``), so no file or client name can forge a
    line or reach the terminal."""

    def escape(match: re.Match[str]) -> str:
        char = match.group()
        if char in _NAMED:
            return _NAMED[char]
        code = ord(char)
        return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"

    return _UNSAFE.sub(escape, text)


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
        if wanted and not _names_any(entry, wanted):
            continue
        chosen.append(entry)
    return chosen


def _names_any(entry: JournalEntry, wanted: set[str]) -> bool:
    """Whether `entry` changed one of the files, or a file in one of the folders, `wanted`
    names (display paths, or relative to the root): the file it changed, or a move's
    source (a move out of a folder is a change to the folder too)."""
    names = [entry.path, entry.rel]
    if entry.source is not None:
        names.append(entry.source)
        # The source's path relative to the root, as `rel` is the destination's.
        if entry.rel and entry.path.endswith("/" + entry.rel):
            root = entry.path[: -len(entry.rel)]
            if entry.source.startswith(root):
                names.append(entry.source[len(root) :])
    return any(
        name in wanted or any(name.startswith(path + "/") for path in wanted) for name in names
    )
