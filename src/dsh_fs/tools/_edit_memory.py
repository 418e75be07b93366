"""What a session's edits remember, to explain a miss the diagnosis alone cannot (SPEC §8.3).

The diagnosis (`fs.diagnosis`) sees one file and one old_string. Two misses need the
session's history: the same old_string failing again on the file it failed on, unchanged
(the model loops: say so, and name the read to make), and stale text the session's own
earlier edit replaced (its near-copy a few lines away would otherwise be named: say which
edit replaced it and what the lines read now). The edit tool keeps this per session, weakly
keyed on the session like the policy's observations; the policy stays about versions.
"""

from __future__ import annotations

import hashlib
import time
import weakref
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from dsh_fs.errors import FsError
from dsh_fs.fs import BEFORE_LIMIT, FileSystem, FsTarget, FsTargetKey, FsVersion, messages
from dsh_fs.runtime import AgentSession

__all__ = ["EditMemory"]

_KEPT_EDITS = 16
_SHOWN_LINES = 8
_CONTEXT = 5
_READ_LIMIT = 2000
_TWIN_SHARE = 0.6
_KEPT_CHARS = 64 * 1024  # an edit larger than this is not kept for the twin check


@dataclass(frozen=True, slots=True, kw_only=True)
class _Miss:
    """A failed edit: where, with what, and the file's version after it."""

    target: FsTargetKey
    old_string: bytes
    """A digest of the old_string (a miss keeps nothing as large as what it sent)."""
    version: FsVersion


@dataclass(frozen=True, slots=True, kw_only=True)
class _Done:
    """A successful edit of the session."""

    target: FsTargetKey
    old_string: str
    new_string: str
    at: float
    """When it was made (seconds since the epoch)."""


@dataclass(slots=True)
class _Session:
    miss: _Miss | None = None
    done: deque[_Done] = field(default_factory=lambda: deque(maxlen=_KEPT_EDITS))


class EditMemory:
    """The edits of each session: its last miss and its recent successful edits.

    Args:
        clock: Seconds since the epoch (`time.time`; tests pass their own).
    """

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._sessions: weakref.WeakKeyDictionary[AgentSession, _Session] = (
            weakref.WeakKeyDictionary()
        )

    def edited(self, session: AgentSession, target: FsTarget, old: str, new: str) -> None:
        """`session` replaced `old` with `new` in `target`."""
        if len(old) + len(new) > _KEPT_CHARS:
            return
        memory = self._sessions.setdefault(session, _Session())
        memory.done.append(
            _Done(
                target=target.target_key,
                old_string=old.replace("\r\n", "\n"),
                new_string=new.replace("\r\n", "\n"),
                at=self._clock(),
            )
        )

    async def missed(
        self,
        fs: FileSystem,
        session: AgentSession,
        target: FsTarget,
        file_path: str,
        old: str,
        error: FsError,
    ) -> FsError:
        """The error an `FS_EDIT_NOT_FOUND` of `session` becomes: said to repeat the last
        miss when it does (same old_string, same file at the same version), and naming the
        session's own earlier edit when old_string is text that edit replaced."""
        memory = self._sessions.setdefault(session, _Session())
        info = await fs.stat(target)
        version = info.version if info is not None else None
        previous, memory.miss = memory.miss, None
        digest = hashlib.sha256(old.encode("utf-8", "surrogatepass")).digest()
        if version is not None:
            memory.miss = _Miss(target=target.target_key, old_string=digest, version=version)
        twin = _replaced_by(memory.done, target.target_key, old.replace("\r\n", "\n"))
        if twin is not None and info is not None and info.size <= BEFORE_LIMIT:
            error = await _now_reads(fs, target, twin, error)
        if (
            previous is not None
            and version is not None
            and previous == _Miss(target=target.target_key, old_string=digest, version=version)
        ):
            offset, limit = _read_window(error)
            call = f'read(file_path="{messages.shown(file_path)}", offset={offset}, limit={limit})'
            error = messages.repeated_miss(error, call, offset, limit)
        return error


def _replaced_by(done: deque[_Done], target: FsTargetKey, old: str) -> _Done | None:
    """The most recent edit of `target` that replaced the text `old` was written from:
    most of old_string's lines are lines that edit removed (stale text, remembered from
    before the session changed it)."""
    wanted = [line.strip() for line in old.split("\n") if line.strip()]
    if not wanted:
        return None
    for edit in reversed(done):
        if edit.target != target:
            continue
        kept = {line.strip() for line in edit.new_string.split("\n")}
        removed = {line.strip() for line in edit.old_string.split("\n")} - kept
        stale = sum(1 for line in wanted if line in removed)
        from_edit = sum(1 for line in wanted if line in removed or line in kept)
        if stale and from_edit >= _TWIN_SHARE * len(wanted) and stale * 4 >= len(wanted):
            return edit
    return None


async def _now_reads(fs: FileSystem, target: FsTarget, edit: _Done, error: FsError) -> FsError:
    """`error` opened with the lines `edit` wrote, where they are now (once in the file),
    and when the session wrote them; unchanged when they are not found once."""
    try:
        text = (await fs.read_text(target)).removeprefix("\ufeff").replace("\r\n", "\n")
    except FsError:
        return error
    new = edit.new_string
    if not new.strip("\n"):
        return error
    start = text.find(new)
    if start == -1 or text.find(new, start + 1) != -1:
        return error
    lead = len(new) - len(new.lstrip("\n"))
    first = text.count("\n", 0, start + lead) + 1
    lines = new.strip("\n").split("\n")
    shown = [(first + k, line) for k, line in enumerate(lines[:_SHOWN_LINES])]
    clock = time.strftime("%H:%M", time.gmtime(edit.at))
    return messages.replaced_by_edit(error, clock, first, first + len(lines) - 1, shown)


def _read_window(error: FsError) -> tuple[int, int]:
    """The read to make after a repeated miss: the lines the diagnosis named, with a few
    around them; the file's start when it named none."""
    where = (
        error.details.get("your_edit")
        or error.details.get("closest")
        or error.details.get("new_string_at")
    )
    if not isinstance(where, dict):
        return 1, _READ_LIMIT
    start, end = int(where["start"]), int(where["end"])
    offset = max(1, start - _CONTEXT)
    return offset, min(_READ_LIMIT, end + _CONTEXT - offset + 1)
