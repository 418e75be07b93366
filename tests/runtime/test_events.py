"""The dispatcher: `on`/`emit`/`waterfall`, ordering, `prepend`, disposal mid-dispatch."""

from __future__ import annotations

import pytest

from dsh_fs.runtime import Dispose, EventBus, Next, Signal, Waterfall

pytestmark = pytest.mark.anyio

PING: Signal[str] = Signal("test/ping")
ASK: Waterfall[int, str] = Waterfall("test/ask")


def test_emit_calls_listeners_in_order_and_prepend_goes_first() -> None:
    bus = EventBus()
    seen: list[str] = []
    bus.on(PING, lambda p: seen.append(f"a:{p}"))
    bus.on(PING, lambda p: seen.append(f"b:{p}"))
    bus.on(PING, lambda p: seen.append(f"first:{p}"), prepend=True)
    bus.emit(PING, "x")
    assert seen == ["first:x", "a:x", "b:x"]


def test_dispose_removes_only_that_listener_and_is_idempotent() -> None:
    bus = EventBus()
    seen: list[str] = []
    dispose = bus.on(PING, lambda p: seen.append("a"))
    bus.on(PING, lambda p: seen.append("b"))
    dispose()
    dispose()
    bus.emit(PING, "x")
    assert seen == ["b"]


async def test_an_event_is_listened_to_exactly_while_a_listener_remains() -> None:
    bus = EventBus()
    assert not bus.listened(PING)
    first = bus.on(PING, lambda p: None)
    second = bus.on(PING, lambda p: None)
    first()
    assert bus.listened(PING)
    assert not bus.listened(ASK)
    second()
    assert not bus.listened(PING)

    async def answer(payload: int, next: Next[str]) -> str:
        return "x"

    bus.on(ASK, answer)
    assert bus.listened(ASK)


def test_a_listener_disposing_itself_mid_emit_does_not_skip_others() -> None:
    bus = EventBus()
    seen: list[str] = []
    disposers: list[Dispose] = []

    def once(payload: str) -> None:
        seen.append("once")
        disposers[0]()

    disposers.append(bus.on(PING, once))
    bus.on(PING, lambda p: seen.append("after"))
    bus.emit(PING, "x")
    bus.emit(PING, "y")
    assert seen == ["once", "after", "after"]


def test_emit_propagates_a_listener_error() -> None:
    bus = EventBus()

    def broken(payload: str) -> None:
        raise RuntimeError("recorder bug")

    bus.on(PING, broken)
    with pytest.raises(RuntimeError, match="recorder bug"):
        bus.emit(PING, "x")


async def test_waterfall_without_listeners_returns_the_default() -> None:
    assert await EventBus().waterfall(ASK, 1, "default") == "default"


async def test_waterfall_first_listener_decides_without_calling_next() -> None:
    bus = EventBus()
    calls: list[str] = []

    async def decide(n: int, next: Next[str]) -> str:
        calls.append("decide")
        return f"decided {n}"

    async def never(n: int, next: Next[str]) -> str:
        calls.append("never")
        return "no"

    bus.on(ASK, decide)
    bus.on(ASK, never)
    assert await bus.waterfall(ASK, 7, "default") == "decided 7"
    assert calls == ["decide"]


async def test_waterfall_next_defers_down_the_chain_to_the_default() -> None:
    bus = EventBus()

    async def defer(n: int, next: Next[str]) -> str:
        return "wrapped(" + await next() + ")"

    bus.on(ASK, defer)
    bus.on(ASK, defer)
    assert await bus.waterfall(ASK, 1, "default") == "wrapped(wrapped(default))"
