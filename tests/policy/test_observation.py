"""The observation policy alone: its state machine, owners, weak references and disposal."""

from __future__ import annotations

import gc
import weakref

import pytest

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import (
    FS_DELETE_INTENT,
    FS_EDIT_INTENT,
    FS_OBSERVED,
    FS_WRITE_INTENT,
    Absent,
    CreateIfAbsent,
    FsIntent,
    FsObserved,
    FsTarget,
    FsTargetKey,
    FsVersion,
    Observation,
    Present,
    ReplaceIfVersion,
    WriteGuard,
)
from dsh_fs.policy import ObservationPolicy
from dsh_fs.runtime import AgentSession, Context, PluginHandle, ToolExecution

pytestmark = pytest.mark.anyio

TARGET = FsTarget(target_key=FsTargetKey("/real/a.txt"), display_path="/w/a.txt")
OTHER = FsTarget(target_key=FsTargetKey("/real/b.txt"), display_path="/w/b.txt")
V1 = FsVersion("v1")
V2 = FsVersion("v2")


def make_context() -> tuple[Context, PluginHandle]:
    context = Context()
    return context, context.use(ObservationPolicy(), None)


def actor(session: AgentSession | None, tool: str = "edit") -> ToolExecution:
    return ToolExecution(tool=tool, session=session)


def observe(
    context: Context,
    session: AgentSession | None,
    observation: Observation,
    target: FsTarget = TARGET,
) -> None:
    context.events.emit(
        FS_OBSERVED,
        FsObserved(target=target, observation=observation, actor=actor(session, "read")),
    )


async def write_guard(
    context: Context, who: object, target: FsTarget = TARGET
) -> WriteGuard | None:
    return await context.events.waterfall(FS_WRITE_INTENT, FsIntent(target=target, actor=who), None)


async def edit_guard(context: Context, who: object, target: FsTarget = TARGET) -> FsVersion | None:
    return await context.events.waterfall(FS_EDIT_INTENT, FsIntent(target=target, actor=who), None)


async def test_write_to_an_unseen_target_may_only_create() -> None:
    context, _ = make_context()
    assert await write_guard(context, actor(AgentSession())) == CreateIfAbsent()


async def test_write_after_observing_absence_may_only_create() -> None:
    context, _ = make_context()
    session = AgentSession()
    observe(context, session, Absent())
    assert await write_guard(context, actor(session)) == CreateIfAbsent()


async def test_write_after_observing_a_version_replaces_only_that_version() -> None:
    context, _ = make_context()
    session = AgentSession()
    observe(context, session, Present(V1))
    assert await write_guard(context, actor(session)) == ReplaceIfVersion(V1)


async def test_edit_of_an_unseen_target_requires_a_read_first() -> None:
    context, _ = make_context()
    with pytest.raises(FsError) as caught:
        await edit_guard(context, actor(AgentSession()))
    assert caught.value.code is FsErrorCode.NOT_OBSERVED
    assert caught.value.message == 'edit requires reading "/w/a.txt" first'
    assert caught.value.path == "/w/a.txt"


async def test_edit_after_observing_absence_is_not_found() -> None:
    context, _ = make_context()
    session = AgentSession()
    observe(context, session, Absent())
    with pytest.raises(FsError) as caught:
        await edit_guard(context, actor(session))
    assert caught.value.code is FsErrorCode.NOT_FOUND
    assert caught.value.message == 'cannot edit "/w/a.txt": not found'


async def test_edit_after_observing_a_version_is_guarded_by_it() -> None:
    context, _ = make_context()
    session = AgentSession()
    observe(context, session, Present(V1))
    assert await edit_guard(context, actor(session)) == V1


async def delete_guard(context: Context, who: object) -> FsVersion | None:
    return await context.events.waterfall(
        FS_DELETE_INTENT, FsIntent(target=TARGET, actor=who), None
    )


async def test_delete_of_an_unseen_target_requires_a_read_first() -> None:
    context, _ = make_context()
    with pytest.raises(FsError) as caught:
        await delete_guard(context, actor(AgentSession(), "delete"))
    assert caught.value.code is FsErrorCode.NOT_OBSERVED
    assert caught.value.message == 'delete requires reading "/w/a.txt" first'


async def test_delete_after_observing_absence_is_not_found() -> None:
    context, _ = make_context()
    session = AgentSession()
    observe(context, session, Absent())
    with pytest.raises(FsError) as caught:
        await delete_guard(context, actor(session, "delete"))
    assert caught.value.code is FsErrorCode.NOT_FOUND
    assert caught.value.message == 'cannot delete "/w/a.txt": not found'


async def test_delete_after_observing_a_version_is_guarded_by_it() -> None:
    context, _ = make_context()
    session = AgentSession()
    observe(context, session, Present(V1))
    assert await delete_guard(context, actor(session, "delete")) == V1


async def test_delete_by_an_actor_without_a_session_is_never_authorized() -> None:
    context, _ = make_context()
    with pytest.raises(FsError) as caught:
        await delete_guard(context, object())
    assert caught.value.code is FsErrorCode.NOT_OBSERVED


async def test_the_latest_observation_replaces_the_previous_one() -> None:
    context, _ = make_context()
    session = AgentSession()
    observe(context, session, Present(V1))
    observe(context, session, Present(V2))
    assert await edit_guard(context, actor(session)) == V2
    observe(context, session, Absent())
    assert await write_guard(context, actor(session)) == CreateIfAbsent()
    observe(context, session, Present(V1))
    assert await write_guard(context, actor(session)) == ReplaceIfVersion(V1)


async def test_observations_are_per_target_key() -> None:
    context, _ = make_context()
    session = AgentSession()
    observe(context, session, Present(V1))
    assert await edit_guard(context, actor(session), TARGET) == V1
    with pytest.raises(FsError) as caught:
        await edit_guard(context, actor(session), OTHER)
    assert caught.value.code is FsErrorCode.NOT_OBSERVED


async def test_a_target_seen_through_another_display_path_shares_its_key() -> None:
    context, _ = make_context()
    session = AgentSession()
    observe(context, session, Present(V1))
    alias = FsTarget(target_key=TARGET.target_key, display_path="/w/link.txt")
    assert await edit_guard(context, actor(session), alias) == V1


async def test_one_sessions_observation_does_not_authorize_another_session() -> None:
    context, _ = make_context()
    reader, other = AgentSession(), AgentSession()
    observe(context, reader, Present(V1))
    assert await write_guard(context, actor(other)) == CreateIfAbsent()
    with pytest.raises(FsError) as caught:
        await edit_guard(context, actor(other))
    assert caught.value.code is FsErrorCode.NOT_OBSERVED
    assert await edit_guard(context, actor(reader)) == V1


async def test_an_actor_without_a_session_can_create_but_never_edit() -> None:
    context, _ = make_context()
    observe(context, None, Present(V1))
    assert await write_guard(context, actor(None)) == CreateIfAbsent()
    with pytest.raises(FsError) as caught:
        await edit_guard(context, actor(None))
    assert caught.value.code is FsErrorCode.NOT_OBSERVED


async def test_an_actor_that_is_not_a_tool_execution_is_treated_as_sessionless() -> None:
    context, _ = make_context()
    context.events.emit(
        FS_OBSERVED, FsObserved(target=TARGET, observation=Present(V1), actor="someone")
    )
    assert await write_guard(context, "someone") == CreateIfAbsent()
    with pytest.raises(FsError):
        await edit_guard(context, "someone")


async def test_the_policy_decides_without_deferring_to_later_listeners() -> None:
    context, _ = make_context()
    deferred: list[str] = []

    async def later(intent: FsIntent, next: object) -> WriteGuard | None:
        deferred.append("called")
        return None

    context.events.on(FS_WRITE_INTENT, later)
    assert await write_guard(context, actor(AgentSession())) == CreateIfAbsent()
    assert deferred == []


async def test_a_dropped_session_is_freed_with_its_observations() -> None:
    context, _ = make_context()
    session = AgentSession()
    observe(context, session, Present(V1))
    assert await edit_guard(context, actor(session)) == V1
    ref = weakref.ref(session)
    del session
    gc.collect()
    assert ref() is None


async def test_disposal_removes_every_listener() -> None:
    context, handle = make_context()
    session = AgentSession()
    observe(context, session, Present(V1))
    assert await edit_guard(context, actor(session)) == V1
    handle.dispose()
    # No listener decides any more: both intents fall back to the dispatcher's default,
    # and a new observation reaches nobody.
    assert await write_guard(context, actor(session)) is None
    assert await edit_guard(context, actor(session)) is None
    observe(context, session, Present(V2))
    assert context.plugin_names() == []


async def test_without_the_policy_intents_fall_back_to_unguarded() -> None:
    context, handle = make_context()
    handle.dispose()
    session = AgentSession()
    observe(context, session, Present(V1))
    assert await write_guard(context, actor(session)) is None
    assert await edit_guard(context, actor(session)) is None


async def test_a_reapplied_policy_starts_with_no_observations() -> None:
    context, handle = make_context()
    session = AgentSession()
    observe(context, session, Present(V1))
    handle.dispose()
    context.use(ObservationPolicy(), None)
    assert await write_guard(context, actor(session)) == CreateIfAbsent()
    with pytest.raises(FsError) as caught:
        await edit_guard(context, actor(session))
    assert caught.value.code is FsErrorCode.NOT_OBSERVED


async def test_two_contexts_with_the_policy_do_not_share_state() -> None:
    first, _ = make_context()
    second, _ = make_context()
    session = AgentSession()
    observe(first, session, Present(V1))
    assert await edit_guard(first, actor(session)) == V1
    assert await write_guard(second, actor(session)) == CreateIfAbsent()
