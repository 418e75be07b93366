"""`ObservationPolicy`: who observed which file at which version, and the guards that follow.

State per owner (the `AgentSession` of the acting `ToolExecution`) per target key: unseen
(no entry), `Absent`, or `Present(version)`. The write, edit and delete intents are decided
from that state without deferring to `next()`; `fs/observed` records into it, `fs/settle`
stores what was recorded, `fs/forget` drops from it. The state lives in an
`ObservationLedger` (in memory by default, bounded to `max_observations` entries per owner;
Redis for a fleet): the decisions here are pure, the ledger is their only I/O.
"""

from __future__ import annotations

import logging
from typing import Literal, TypeAlias

from dsh_fs.fs import (
    FS_DELETE_INTENT,
    FS_EDIT_INTENT,
    FS_FORGET,
    FS_MOVE_INTENT,
    FS_OBSERVED,
    FS_SETTLE,
    FS_WRITE_INTENT,
    Absent,
    CreateIfAbsent,
    FsForget,
    FsIntent,
    FsObserved,
    FsSettle,
    FsVersion,
    LedgerUnreachable,
    Observation,
    ObservationLedger,
    Present,
    ReplaceIfVersion,
    WriteGuard,
    messages,
)
from dsh_fs.runtime import AgentSession, Next, Plugin, PluginScope, ToolExecution

from ._memory_ledger import DEFAULT_MAX_OBSERVATIONS, MemoryLedger

__all__ = ["DEFAULT_MAX_OBSERVATIONS", "ObservationPolicy"]


logger = logging.getLogger(__name__)

_Verb: TypeAlias = Literal["write", "edit", "delete", "move"]


def _owner(actor: object) -> AgentSession | None:
    """The session an actor belongs to; None for anything that is not a session's call."""
    if isinstance(actor, ToolExecution):
        return actor.session
    return None


class ObservationPolicy(Plugin[None]):
    """The default `fs-observation-policy`: overwrite and edit only what this session saw.

    | event         | unseen                  | Absent                  | Present(v)            |
    |---------------|-------------------------|-------------------------|-----------------------|
    | write-intent  | `CreateIfAbsent`        | `CreateIfAbsent`        | `ReplaceIfVersion(v)` |
    | edit-intent   | raise `FS_NOT_OBSERVED` | raise `FS_NOT_FOUND`    | guard `v`             |
    | delete-intent | raise `FS_NOT_OBSERVED` | raise `FS_NOT_FOUND`    | guard `v`             |
    | observed      | record                  | record                  | record                |

    An actor without a session can create files but never overwrite, edit or delete one,
    and its observations are not recorded. Apply with ``context.use(ObservationPolicy(), None)``;
    disposing the handle removes the listeners and drops every recorded observation.

    Memory is bounded: a session remembers its `max_observations` (default 4096) most
    recently used targets (observed, or guarded by an intent), and forgets the least
    recently used one to make room. Forgetting is always safe: a forgotten target is unseen
    again, so the next write may only create (`FS_NOT_OBSERVED` for an existing file) and
    the next edit or delete is `FS_NOT_OBSERVED`, each with the remedy "read the file, then
    retry"; never a guard for the wrong version. Only the model's re-read is lost.

    With a shared `ledger` (SPEC §14) the state outlives this process; a ledger that does not
    answer makes every write, edit, delete and move refuse with `FS_NOT_OBSERVED`, while
    reads keep being served (what they saw is then not remembered).

    Args:
        max_observations: Targets remembered per session (at least 1) by the default ledger.
        ledger: Where observations live; None: in this process's memory.

    Raises:
        ValueError: `max_observations` is less than 1.
    """

    name = "fs-observation-policy"

    def __init__(
        self,
        *,
        max_observations: int = DEFAULT_MAX_OBSERVATIONS,
        ledger: ObservationLedger | None = None,
    ) -> None:
        if max_observations < 1:
            raise ValueError(f"max_observations must be at least 1, not {max_observations}")
        self.max_observations = max_observations
        """Targets remembered per session (by the default, in-memory ledger)."""
        self.ledger = ledger
        """Where observations are stored; None: a fresh `MemoryLedger` per application."""

    def apply(self, scope: PluginScope, config: None) -> None:
        """Install the listeners over the ledger (a fresh, empty one by default)."""
        ledger = self.ledger or MemoryLedger(capacity=self.max_observations)

        async def seen(intent: FsIntent, verb: _Verb) -> Observation | None:
            owner = _owner(intent.actor)
            if owner is None:
                return None
            try:
                return await ledger.lookup(owner, intent.target.target_key)
            except LedgerUnreachable:
                # Without the ledger nothing is known: refuse rather than guess (SPEC §14).
                raise messages.ledger_unreachable(verb, intent.target.display_path) from None

        async def on_write_intent(
            intent: FsIntent, next: Next[WriteGuard | None]
        ) -> WriteGuard | None:
            observation = await seen(intent, "write")
            if isinstance(observation, Present):
                return ReplaceIfVersion(observation.version)
            return CreateIfAbsent()

        async def seen_version(
            intent: FsIntent, verb: Literal["edit", "delete", "move"]
        ) -> FsVersion:
            # An edit or a delete needs the version the session saw; a file it saw absent is
            # not found, one it never saw needs a read.
            observation = await seen(intent, verb)
            if isinstance(observation, Present):
                return observation.version
            if isinstance(observation, Absent):
                raise messages.not_found(verb, intent.target.display_path)
            raise messages.not_observed(verb, intent.target.display_path)

        async def on_edit_intent(intent: FsIntent, next: Next[FsVersion | None]) -> FsVersion:
            return await seen_version(intent, "edit")

        async def on_delete_intent(intent: FsIntent, next: Next[FsVersion | None]) -> FsVersion:
            return await seen_version(intent, "delete")

        async def on_move_intent(intent: FsIntent, next: Next[FsVersion | None]) -> FsVersion:
            return await seen_version(intent, "move")

        def on_observed(event: FsObserved) -> None:
            owner = _owner(event.actor)
            if owner is not None:
                ledger.record(owner, event.target.target_key, event.observation)

        async def on_settle(event: FsSettle, next: Next[None]) -> None:
            owner = _owner(event.actor)
            if owner is not None:
                try:
                    await ledger.settle(owner)
                except LedgerUnreachable:
                    # The read still answers; what it saw is unseen, so the next mutation
                    # needs the ledger back (and a read) before it can happen.
                    logger.warning("observation ledger unreachable: an observation was dropped")
            return await next()

        def on_forget(event: FsForget) -> None:
            owner = _owner(event.actor)
            if owner is not None:
                ledger.forget(owner, event.forgotten)

        scope.on_waterfall(FS_WRITE_INTENT, on_write_intent)
        scope.on_waterfall(FS_EDIT_INTENT, on_edit_intent)
        scope.on_waterfall(FS_DELETE_INTENT, on_delete_intent)
        scope.on_waterfall(FS_MOVE_INTENT, on_move_intent)
        scope.on_signal(FS_OBSERVED, on_observed)
        if ledger.buffers:
            # Else `settle` does nothing, and a read need not dispatch `fs/settle` at all.
            scope.on_waterfall(FS_SETTLE, on_settle)
        scope.on_signal(FS_FORGET, on_forget)
        scope.add_disposer(ledger.clear)
