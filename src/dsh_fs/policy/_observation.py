"""`ObservationPolicy`: who observed which file at which version, and the guards that follow.

State per owner (the `AgentSession` of the acting `ToolExecution`, held weakly) per target
key: unseen (no entry), `Absent`, or `Present(version)`. The write, edit and delete
intents are decided from that state without deferring to `next()`; `fs/observed` records into it,
`fs/forget` drops from it.
Each owner keeps at most `max_observations` entries, least recently used first out.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from typing import Literal

from dsh_fs.fs import (
    FS_DELETE_INTENT,
    FS_EDIT_INTENT,
    FS_FORGET,
    FS_MOVE_INTENT,
    FS_OBSERVED,
    FS_WRITE_INTENT,
    Absent,
    CreateIfAbsent,
    FsForget,
    FsIntent,
    FsObserved,
    FsTargetKey,
    FsVersion,
    Observation,
    Present,
    ReplaceIfVersion,
    WriteGuard,
    messages,
)
from dsh_fs.runtime import AgentSession, Next, Plugin, PluginScope, ToolExecution

__all__ = ["DEFAULT_MAX_OBSERVATIONS", "ObservationPolicy"]

DEFAULT_MAX_OBSERVATIONS = 4096
"""How many files one session's observations cover at most (see `ObservationPolicy`)."""


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

    Args:
        max_observations: Targets remembered per session (at least 1).

    Raises:
        ValueError: `max_observations` is less than 1.
    """

    name = "fs-observation-policy"

    def __init__(self, *, max_observations: int = DEFAULT_MAX_OBSERVATIONS) -> None:
        if max_observations < 1:
            raise ValueError(f"max_observations must be at least 1, not {max_observations}")
        self.max_observations = max_observations
        """Targets remembered per session."""

    def apply(self, scope: PluginScope, config: None) -> None:
        """Install the four listeners over fresh, empty state."""
        capacity = self.max_observations
        # Created here, reachable only from the listeners' closures: disposal drops it. Per
        # owner, targets in least-recently-used order (the first one goes first).
        state: weakref.WeakKeyDictionary[AgentSession, OrderedDict[FsTargetKey, Observation]] = (
            weakref.WeakKeyDictionary()
        )

        def seen(actor: object, key: FsTargetKey) -> Observation | None:
            owner = _owner(actor)
            if owner is None:
                return None
            observations = state.get(owner)
            if observations is None:
                return None
            observation = observations.get(key)
            if observation is not None:
                observations.move_to_end(key)
            return observation

        async def on_write_intent(
            intent: FsIntent, next: Next[WriteGuard | None]
        ) -> WriteGuard | None:
            observation = seen(intent.actor, intent.target.target_key)
            if isinstance(observation, Present):
                return ReplaceIfVersion(observation.version)
            return CreateIfAbsent()

        def seen_version(intent: FsIntent, verb: Literal["edit", "delete", "move"]) -> FsVersion:
            # An edit or a delete needs the version the session saw; a file it saw absent is
            # not found, one it never saw needs a read.
            observation = seen(intent.actor, intent.target.target_key)
            if isinstance(observation, Present):
                return observation.version
            if isinstance(observation, Absent):
                raise messages.not_found(verb, intent.target.display_path)
            raise messages.not_observed(verb, intent.target.display_path)

        async def on_edit_intent(intent: FsIntent, next: Next[FsVersion | None]) -> FsVersion:
            return seen_version(intent, "edit")

        async def on_delete_intent(intent: FsIntent, next: Next[FsVersion | None]) -> FsVersion:
            return seen_version(intent, "delete")

        async def on_move_intent(intent: FsIntent, next: Next[FsVersion | None]) -> FsVersion:
            return seen_version(intent, "move")

        def on_observed(event: FsObserved) -> None:
            owner = _owner(event.actor)
            if owner is None:
                return
            observations = state.get(owner)
            if observations is None:
                observations = state[owner] = OrderedDict()
            key = event.target.target_key
            observations[key] = event.observation
            observations.move_to_end(key)
            if len(observations) > capacity:
                observations.popitem(last=False)

        def on_forget(event: FsForget) -> None:
            owner = _owner(event.actor)
            observations = None if owner is None else state.get(owner)
            if observations is None:
                return
            for key in [key for key in observations if event.forgotten(key)]:
                del observations[key]

        scope.on_waterfall(FS_WRITE_INTENT, on_write_intent)
        scope.on_waterfall(FS_EDIT_INTENT, on_edit_intent)
        scope.on_waterfall(FS_DELETE_INTENT, on_delete_intent)
        scope.on_waterfall(FS_MOVE_INTENT, on_move_intent)
        scope.on_signal(FS_OBSERVED, on_observed)
        scope.on_signal(FS_FORGET, on_forget)
        scope.add_disposer(state.clear)
