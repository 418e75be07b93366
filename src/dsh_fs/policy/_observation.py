"""`ObservationPolicy`: who observed which file at which version, and the guards that follow.

State per owner (the `AgentSession` of the acting `ToolExecution`, held weakly) per target
key: unseen (no entry), `Absent`, or `Present(version)`. The write, edit and delete
intents are decided from that state without deferring to `next()`; `fs/observed` records into it.
"""

from __future__ import annotations

import weakref

from dsh_fs.fs import (
    FS_DELETE_INTENT,
    FS_EDIT_INTENT,
    FS_OBSERVED,
    FS_WRITE_INTENT,
    Absent,
    CreateIfAbsent,
    FsIntent,
    FsObserved,
    FsTargetKey,
    FsVersion,
    Observation,
    Present,
    ReplaceIfVersion,
    WriteGuard,
)
from dsh_fs.fs import _messages as messages
from dsh_fs.runtime import AgentSession, Next, Plugin, PluginScope, ToolExecution

__all__ = ["ObservationPolicy"]


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
    """

    name = "fs-observation-policy"

    def apply(self, scope: PluginScope, config: None) -> None:
        """Install the four listeners over fresh, empty state."""
        # Created here, reachable only from the listeners' closures: disposal drops it.
        state: weakref.WeakKeyDictionary[AgentSession, dict[FsTargetKey, Observation]] = (
            weakref.WeakKeyDictionary()
        )

        def seen(actor: object, key: FsTargetKey) -> Observation | None:
            owner = _owner(actor)
            if owner is None:
                return None
            observations = state.get(owner)
            return None if observations is None else observations.get(key)

        async def on_write_intent(
            intent: FsIntent, next: Next[WriteGuard | None]
        ) -> WriteGuard | None:
            observation = seen(intent.actor, intent.target.target_key)
            if isinstance(observation, Present):
                return ReplaceIfVersion(observation.version)
            return CreateIfAbsent()

        async def on_edit_intent(intent: FsIntent, next: Next[FsVersion | None]) -> FsVersion:
            observation = seen(intent.actor, intent.target.target_key)
            if isinstance(observation, Present):
                return observation.version
            if isinstance(observation, Absent):
                raise messages.not_found("edit", intent.target.display_path)
            raise messages.edit_not_observed(intent.target.display_path)

        async def on_delete_intent(intent: FsIntent, next: Next[FsVersion | None]) -> FsVersion:
            observation = seen(intent.actor, intent.target.target_key)
            if isinstance(observation, Present):
                return observation.version
            if isinstance(observation, Absent):
                raise messages.not_found("delete", intent.target.display_path)
            raise messages.delete_not_observed(intent.target.display_path)

        def on_observed(event: FsObserved) -> None:
            owner = _owner(event.actor)
            if owner is None:
                return
            observations = state.get(owner)
            if observations is None:
                observations = state[owner] = {}
            observations[event.target.target_key] = event.observation

        scope.on_waterfall(FS_WRITE_INTENT, on_write_intent)
        scope.on_waterfall(FS_EDIT_INTENT, on_edit_intent)
        scope.on_waterfall(FS_DELETE_INTENT, on_delete_intent)
        scope.on_signal(FS_OBSERVED, on_observed)
        scope.add_disposer(state.clear)
