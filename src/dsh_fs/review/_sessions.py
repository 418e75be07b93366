"""What the review page shows of a journal (SPEC §11.1), as values: sessions newest first,
a session's changes in order with the undo that undid each. Pure: no I/O, no HTML."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dsh_fs.fs import JournalEntry, JournalProblem

__all__ = [
    "ChangeSetView",
    "ChangeView",
    "SessionSummary",
    "StoreSnapshot",
    "grouped",
    "session_changes",
    "sessions",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class StoreSnapshot:
    """One store as it was read: its entries (oldest first) and the records it could not
    read (shown as damaged, never opened)."""

    index: int
    """The store's place among the served ROOTs (0 for the first)."""
    root: str
    """The ROOT whose changes the store records."""
    location: str
    """Where the store is."""
    entries: tuple[JournalEntry, ...]
    """Every entry, oldest first."""
    problems: tuple[JournalProblem, ...]
    """The records that could not be read."""

    @property
    def fingerprint(self) -> str:
        """Changes whenever an entry is added, undone, pruned or damaged."""
        last = self.entries[-1].id if self.entries else "-"
        undoable = sum(1 for entry in self.entries if entry.undoable)
        return f"{len(self.entries)}.{last}.{undoable}.{len(self.problems)}"


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionSummary:
    """One session's line in the list."""

    store: int
    """The store its changes are in."""
    label: str
    """The session's label (the client's name and a unique suffix)."""
    first: str
    """The time of its first change (RFC 3339)."""
    last: str
    """The time of its last change."""
    last_id: str
    """The id of its last change (sessions sort on it)."""
    files: int
    """How many distinct paths its changes touched (a move's source included)."""
    added: int
    """Lines added, over the changes whose counts are known."""
    removed: int
    """Lines removed, likewise."""
    changes: int
    """How many changes it made."""
    in_force: int
    """How many of them no undo has taken back."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ChangeView:
    """One change as a session's page lists it."""

    store: int
    """The store it is in."""
    entry: JournalEntry
    """The recorded change."""
    undone_by: JournalEntry | None
    """The undo that took it back, if one did."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ChangeSetView:
    """A change set (SPEC §13: the changes one ``edit_files`` call made, one `group`) as a
    session's page lists it: one change of several files, undone all or none."""

    store: int
    """The store it is in."""
    group: str
    """The set's id (its entries' `group`; `undo` takes it)."""
    changes: tuple[ChangeView, ...]
    """Its changes, one a file, in order."""

    @property
    def undone(self) -> bool:
        """Whether an undo took back every change of the set."""
        return all(change.undone_by is not None for change in self.changes)


def grouped(changes: Sequence[ChangeView]) -> list[ChangeView | ChangeSetView]:
    """`changes` in order, those of one change set together as one item (where its first
    change is)."""
    firsts: list[ChangeView] = []
    sets: dict[str, list[ChangeView]] = {}
    for change in changes:
        group = change.entry.group
        if group is not None and group in sets:
            sets[group].append(change)
            continue
        if group is not None:
            sets[group] = [change]
        firsts.append(change)  # a change, or the first of its set (the set's place)
    return [
        change
        if change.entry.group is None
        else ChangeSetView(
            store=change.store, group=change.entry.group, changes=tuple(sets[change.entry.group])
        )
        for change in firsts
    ]


def sessions(snapshots: Sequence[StoreSnapshot]) -> list[SessionSummary]:
    """Every session of every store, the one with the newest change first."""
    summaries: list[SessionSummary] = []
    for snapshot in snapshots:
        undone = {entry.undoes for entry in snapshot.entries if entry.undoes is not None}
        groups: dict[str, list[JournalEntry]] = {}
        for entry in snapshot.entries:
            groups.setdefault(entry.session, []).append(entry)
        for label, entries in groups.items():
            paths = {entry.rel for entry in entries}
            paths |= {entry.source for entry in entries if entry.source is not None}
            summaries.append(
                SessionSummary(
                    store=snapshot.index,
                    label=label,
                    first=entries[0].time,
                    last=entries[-1].time,
                    last_id=entries[-1].id,
                    files=len(paths),
                    added=sum(entry.added or 0 for entry in entries),
                    removed=sum(entry.removed or 0 for entry in entries),
                    changes=len(entries),
                    in_force=sum(1 for entry in entries if entry.id not in undone),
                )
            )
    summaries.sort(key=lambda summary: summary.last_id, reverse=True)
    return summaries


def session_changes(snapshot: StoreSnapshot, label: str) -> list[ChangeView]:
    """The changes of session `label` in `snapshot`, oldest first, each with the undo that
    undid it (the newest, should a redo have been undone again)."""
    undone_by = {entry.undoes: entry for entry in snapshot.entries if entry.undoes is not None}
    return [
        ChangeView(store=snapshot.index, entry=entry, undone_by=undone_by.get(entry.id))
        for entry in snapshot.entries
        if entry.session == label
    ]
