"""Finishing or rolling back the change sets a killed process left (SPEC §13).

A set's intent record (`dsh_fs.fs.SetRecords`) names every file it publishes with the text
before and after. A record with no running writer means its process died between the first
publication and the last, so on the next start, before anything else:

- every file has the set's new text: the set had landed whole (only its record was left),
  it is *finished*: the record goes;
- otherwise it is *rolled back*: every file holding the set's new text gets its old text back
  (a created file is deleted, a deleted one recreated), each guarded by the version just
  read. A file that holds neither text was changed by someone else since: it is left as
  they made it, and named in the result (``kept``).

The decision only ever restores the old text over the set's own new text, so a set ends all
old or all new, and a third party's change is never overwritten.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import (
    CreateIfAbsent,
    FileSystem,
    FsCapture,
    FsFileType,
    FsTarget,
    FsVersion,
    ReplaceIfVersion,
    SetFileRecord,
    SetRecord,
    SetRecords,
)

__all__ = ["CaptureFor", "SetRecovery", "recover_sets"]

_LOG = logging.getLogger("dsh_fs.sets")

_ABSENT = object()

CaptureFor = Callable[[SetRecord, SetFileRecord], Awaitable[FsCapture | None]]
"""How a roll-back's restore of one file of a record is journaled (None: not journaled)."""

_REFUSED = (FsErrorCode.STALE_VERSION, FsErrorCode.NOT_OBSERVED)
"""A guard's refusals: the file changed between the read and the restore."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SetRecovery:
    """What the start made of one set a killed process left."""

    id: str
    """The set's id (its journal `group`)."""
    outcome: Literal["finished", "rolled back"]
    """``finished``: every file had the new text; ``rolled back``: the old text is back."""
    restored: tuple[str, ...] = ()
    """The files given their old text back (display paths)."""
    kept: tuple[str, ...] = ()
    """The files someone else changed since (neither text): left as they are."""


async def recover_sets(
    fs: FileSystem, records: SetRecords, *, capture_for: CaptureFor | None = None
) -> tuple[SetRecovery, ...]:
    """Finish or roll back every set whose writer is gone; each record removed once its set
    is whole. A file that cannot be read or restored (an I/O error) leaves its record for
    the next start and is logged. `capture_for` journals a restore (the journal's own
    roll-back of a killed set undo is an undo of that undo: the set's change in force again).

    Raises:
        FsError: the records cannot be listed.
    """
    done = []
    for record in await records.orphans():
        try:
            recovery = await _recover(fs, record, capture_for)
        except FsError as error:
            _LOG.warning("change set %s: not recovered yet: %s", record.id, error.message)
            continue
        await records.end(record.id)
        if recovery.kept:
            _LOG.warning(
                "change set %s %s; changed by someone else since, left as they are: %s",
                record.id,
                recovery.outcome,
                ", ".join(recovery.kept),
            )
        else:
            _LOG.info("change set %s %s after a crash", record.id, recovery.outcome)
        done.append(recovery)
    return tuple(done)


async def _recover(
    fs: FileSystem, record: SetRecord, capture_for: CaptureFor | None
) -> SetRecovery:
    found = []
    for item in record.files:
        target = await fs.resolve(item.path)
        found.append((item, target, *await _current(fs, target)))
    if all(_is_new(text, item) for item, _, _, text in found):
        return SetRecovery(id=record.id, outcome="finished")
    restored: list[str] = []
    kept: list[str] = []
    for item, target, version, text in found:
        if _is_new(text, item):
            capture = await capture_for(record, item) if capture_for is not None else None
            done = await _restore(fs, target, item, version, capture)
            (restored if done else kept).append(item.path)
        elif not _is(text, item.before):
            kept.append(item.path)
    return SetRecovery(
        id=record.id, outcome="rolled back", restored=tuple(restored), kept=tuple(kept)
    )


def _is(text: object, wanted: str | None) -> bool:
    """Whether the file's current `text` (`_ABSENT`, None: not UTF-8 text) is `wanted`."""
    return text is _ABSENT if wanted is None else text == wanted


def _is_new(text: object, item: SetFileRecord) -> bool:
    """Whether the file's current `text` is the one the set published (its digest)."""
    if item.after is None:
        return text is _ABSENT
    return isinstance(text, str) and SetFileRecord.digest(text) == item.after


async def _current(fs: FileSystem, target: FsTarget) -> tuple[FsVersion | None, object]:
    """The file's version and text (`_ABSENT` when there is none; None when it is not a
    regular UTF-8 file: neither of the set's texts), the text read at that version."""
    info = await fs.stat(target)
    if info is None:
        return None, _ABSENT
    if info.type is not FsFileType.FILE:
        return info.version, None
    try:
        text: object = await fs.read_text(target)
    except FsError:
        text = None
    again = await fs.stat(target)
    if again is None or again.version != info.version:
        return info.version, None  # changing under us: someone else's, left alone
    return info.version, text


async def _restore(
    fs: FileSystem,
    target: FsTarget,
    item: SetFileRecord,
    version: FsVersion | None,
    capture: FsCapture | None,
) -> bool:
    """Put `item`'s old text back, only over the version holding its new text; False when
    the guard refused (someone changed the file since it was read: theirs stands).

    Raises:
        FsError: another error (then the record stays for the next start).
    """
    try:
        if item.before is None:
            assert version is not None
            await fs.delete(target, version, capture=capture)
        elif version is None:
            await fs.write_text(target, item.before, CreateIfAbsent(), capture=capture)
        else:
            await fs.write_text(target, item.before, ReplaceIfVersion(version), capture=capture)
    except FsError as error:
        if error.code not in _REFUSED:
            raise
        return False
    return True
