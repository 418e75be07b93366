"""The observation policy's memory is bounded, and forgetting is always safe.

Each session remembers its `max_observations` most recently used targets. A forgotten target
is unseen again: the model re-reads it, and no write or edit ever carries a guard for a
version it did not see.
"""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

import pytest

from dsh_fs import Workspace
from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import (
    FS_DELETE_INTENT,
    FS_OBSERVED,
    Absent,
    CreateIfAbsent,
    FsIntent,
    FsObserved,
    FsTarget,
    FsTargetKey,
    Present,
    ReplaceIfVersion,
)
from dsh_fs.policy import ObservationPolicy
from dsh_fs.policy._observation import DEFAULT_MAX_OBSERVATIONS
from dsh_fs.runtime import AgentSession, Context

from .test_observation import V1, V2, actor, edit_guard, observe, write_guard

pytestmark = pytest.mark.anyio


def target(name: str) -> FsTarget:
    return FsTarget(target_key=FsTargetKey(f"/real/{name}"), display_path=f"/w/{name}")


def bounded_context(max_observations: int) -> Context:
    context = Context()
    context.use(ObservationPolicy(max_observations=max_observations), None)
    return context


async def test_a_session_forgets_its_least_recently_used_target_first() -> None:
    context, session = bounded_context(3), AgentSession()
    a, b, c, d = (target(name) for name in "abcd")
    for one in (a, b, c):
        observe(context, session, Present(V1), one)
    # Guarding a write of `a` uses it: `b` is now the least recently used.
    assert await write_guard(context, actor(session), a) == ReplaceIfVersion(V1)
    observe(context, session, Present(V2), d)
    assert await write_guard(context, actor(session), b) == CreateIfAbsent()
    with pytest.raises(FsError) as caught:
        await edit_guard(context, actor(session), b)
    assert caught.value.code is FsErrorCode.NOT_OBSERVED
    with pytest.raises(FsError) as deleting:
        await context.events.waterfall(
            FS_DELETE_INTENT, FsIntent(target=b, actor=actor(session)), None
        )
    assert deleting.value.code is FsErrorCode.NOT_OBSERVED
    assert await edit_guard(context, actor(session), a) == V1
    assert await edit_guard(context, actor(session), c) == V1
    assert await edit_guard(context, actor(session), d) == V2


async def test_a_forgotten_absence_is_unseen_again_never_a_wrong_answer() -> None:
    context, session = bounded_context(1), AgentSession()
    a, b = target("a"), target("b")
    observe(context, session, Absent(), a)
    observe(context, session, Present(V1), b)
    # Seen absent, the edit was FS_NOT_FOUND; forgotten, it asks for a read.
    with pytest.raises(FsError) as caught:
        await edit_guard(context, actor(session), a)
    assert caught.value.code is FsErrorCode.NOT_OBSERVED
    assert await write_guard(context, actor(session), a) == CreateIfAbsent()


async def test_each_session_has_its_own_bound() -> None:
    context, first, second = bounded_context(2), AgentSession(), AgentSession()
    a, b, c = target("a"), target("b"), target("c")
    observe(context, first, Present(V1), a)
    for one in (a, b, c):
        observe(context, second, Present(V2), one)
    assert await edit_guard(context, actor(first), a) == V1
    assert await write_guard(context, actor(second), a) == CreateIfAbsent()


def test_the_bound_must_allow_at_least_one_target() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        ObservationPolicy(max_observations=0)
    assert ObservationPolicy().max_observations == DEFAULT_MAX_OBSERVATIONS


def read_missing(context: Context, session: AgentSession, numbers: range) -> None:
    """What the read tool records for distinct missing files, one per number."""
    reader = actor(session, "read")
    for n in numbers:
        key = f"/home/agent/project/src/package_{n:06d}/missing_module.py"
        observed = FsTarget(target_key=FsTargetKey(key), display_path=key)
        context.events.emit(
            FS_OBSERVED, FsObserved(target=observed, observation=Absent(), actor=reader)
        )


def traced(context: Context, session: AgentSession, numbers: range) -> tuple[int, int]:
    """Bytes allocated and still held after the first half of `numbers`' reads, and after
    all of them (only what is allocated while tracing is counted)."""
    half = numbers.start + len(numbers) // 2
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        read_missing(context, session, range(numbers.start, half))
        gc.collect()
        halfway = tracemalloc.get_traced_memory()[0] - start
        read_missing(context, session, range(half, numbers.stop))
        gc.collect()
        return halfway, tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()


def test_memory_stays_bounded_over_200k_distinct_reads() -> None:
    context, session = bounded_context(DEFAULT_MAX_OBSERVATIONS), AgentSession()
    read_missing(context, session, range(180_000))  # untraced, for speed
    halfway, end = traced(context, session, range(180_000, 200_000))
    # Every observation now held was made while tracing (20,000 > the bound): `end` is the
    # whole state. It was full before, so the last 10,000 reads added nothing.
    assert end < DEFAULT_MAX_OBSERVATIONS * 400, end
    assert end - halfway < 64 * 1024, (halfway, end)
    # Control: without the bound the same reads hold every observation.
    unbounded, session = bounded_context(10**9), AgentSession()
    unbounded_halfway, unbounded_end = traced(unbounded, session, range(20_000))
    assert unbounded_end - unbounded_halfway > 10_000 * 150, (unbounded_halfway, unbounded_end)


async def test_a_tool_call_after_eviction_asks_for_a_read_and_changes_nothing(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.txt").write_text("alpha\n", encoding="utf-8")
    async with Workspace.local(tmp_path, policy=False) as workspace:
        workspace.context.use(ObservationPolicy(max_observations=64), None)
        session = workspace.session()
        assert not (await session.call("read", {"file_path": "a.txt"})).is_error
        for n in range(64):  # a's observation is pushed out by 64 newer ones
            await session.call("read", {"file_path": f"missing-{n}.txt"})
        edit = await session.call(
            "edit", {"file_path": "a.txt", "old_string": "alpha", "new_string": "beta"}
        )
        write = await session.call("write", {"file_path": "a.txt", "content": "beta\n"})
        assert (edit.code, write.code) == ("FS_NOT_OBSERVED", "FS_NOT_OBSERVED")
        assert edit.text.endswith("— read the file, then retry")
        assert write.text.endswith("— read the file, then retry")
        assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "alpha\n"
        # The remedy works: read again, then edit.
        assert not (await session.call("read", {"file_path": "a.txt"})).is_error
        again = await session.call(
            "edit", {"file_path": "a.txt", "old_string": "alpha", "new_string": "beta"}
        )
        assert not again.is_error, again.text
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "beta\n"
