"""`TargetLocks`: one holder per key, the waiters served in arrival order, keys independent,
a cancelled caller never holding the key (before it waits, while it waits, or just as the
key is handed to it), and nothing left behind once nobody holds or waits."""

from __future__ import annotations

import asyncio

import anyio
import pytest

from dsh_fs.providers._locks import TargetLocks

pytestmark = pytest.mark.anyio


async def test_one_holder_per_key_and_waiters_in_arrival_order() -> None:
    locks = TargetLocks()
    order: list[str] = []
    inside = 0

    async def hold(name: str, pause: float) -> None:
        nonlocal inside
        async with locks.hold("a"):
            inside += 1
            assert inside == 1
            order.append(name)
            await anyio.sleep(pause)
            inside -= 1

    async with anyio.create_task_group() as tg:
        for n in range(5):
            tg.start_soon(hold, f"w{n}", 0.01)
            await anyio.sleep(0.001)  # arrive in this order
    assert order == [f"w{n}" for n in range(5)]
    assert len(locks) == 0


async def test_keys_are_independent() -> None:
    locks = TargetLocks()
    async with locks.hold("a"):
        with anyio.fail_after(5):
            async with locks.hold("b"):
                assert len(locks) == 2
    assert len(locks) == 0


async def test_a_caller_cancelled_before_it_asks_never_holds() -> None:
    locks = TargetLocks()
    ran = False
    with anyio.CancelScope() as scope:
        scope.cancel()
        async with locks.hold("a"):
            ran = True
    assert scope.cancelled_caught
    assert not ran
    assert len(locks) == 0


async def test_a_waiter_cancelled_while_it_waits_leaves_the_line() -> None:
    locks = TargetLocks()
    order: list[str] = []
    cancelled = anyio.CancelScope()

    async def wait(name: str, scope: anyio.CancelScope) -> None:
        with scope:
            async with locks.hold("a"):
                order.append(name)

    async with anyio.create_task_group() as tg, locks.hold("a"):
        tg.start_soon(wait, "cancelled", cancelled)
        await anyio.sleep(0.01)
        tg.start_soon(wait, "served", anyio.CancelScope())
        await anyio.sleep(0.01)
        cancelled.cancel()
        await anyio.sleep(0.01)
    assert order == ["served"]
    assert len(locks) == 0


async def test_a_waiter_cancelled_as_the_key_is_handed_to_it_passes_it_on() -> None:
    locks = TargetLocks()
    order: list[str] = []

    async def wait(name: str) -> None:
        async with locks.hold("a"):
            order.append(name)

    async with locks.hold("a"):
        first = asyncio.ensure_future(wait("first"))
        await asyncio.sleep(0.01)
        second = asyncio.ensure_future(wait("second"))
        await asyncio.sleep(0.01)
    # The block's end handed the key to "first"; cancelled before it resumes, it must hand
    # the key on rather than keep it (or drop it with "second" still waiting).
    first.cancel()
    with anyio.fail_after(5):
        await asyncio.gather(first, second, return_exceptions=True)
    assert first.cancelled()
    assert order == ["second"]
    assert len(locks) == 0
