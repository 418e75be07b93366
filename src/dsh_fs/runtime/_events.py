"""Typed event keys and the dispatcher: `on`, `emit` and the async `waterfall`.

An event is named by a key object that carries its payload and result types, so listeners
and dispatch sites are checked against each other. Dispatch iterates over a snapshot of the
listeners, so a listener may dispose itself (or others) while an event is being dispatched.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, overload

__all__ = ["Dispose", "EventBus", "Next", "Signal", "Waterfall", "WaterfallListener"]

P = TypeVar("P")
R = TypeVar("R")

Dispose = Callable[[], None]
"""Removes what was added; calling it more than once is harmless."""

Next = Callable[[], Awaitable[R]]
"""Defers a waterfall to the next listener (the last `next` returns the dispatcher's default)."""

WaterfallListener = Callable[[P, Next[R]], Awaitable[R]]
"""A waterfall listener: decides by returning, or defers by returning `await next()`."""


@dataclass(frozen=True, slots=True)
class Signal(Generic[P]):
    """Key of a fire-and-forget event whose synchronous listeners receive a `P` payload."""

    name: str
    """The event's name, e.g. ``"fs/observed"``."""


@dataclass(frozen=True, slots=True)
class Waterfall(Generic[P, R]):
    """Key of a decision event: the first listener that returns decides an `R`."""

    name: str
    """The event's name, e.g. ``"fs/write-intent"``."""


class EventBus:
    """Listeners by event name, with `emit` and `waterfall` dispatch.

    One bus belongs to one `Context`; nothing here is global.
    """

    __slots__ = ("_listeners",)

    def __init__(self) -> None:
        self._listeners: dict[str, list[Any]] = {}

    @overload
    def on(
        self, event: Signal[P], listener: Callable[[P], None], *, prepend: bool = False
    ) -> Dispose: ...
    @overload
    def on(
        self, event: Waterfall[P, R], listener: WaterfallListener[P, R], *, prepend: bool = False
    ) -> Dispose: ...
    def on(
        self, event: Signal[Any] | Waterfall[Any, Any], listener: Any, *, prepend: bool = False
    ) -> Dispose:
        """Add `listener` to `event` (first if `prepend`); returns its disposer."""
        bucket = self._listeners.setdefault(event.name, [])
        # Copy on write: dispatch holds on to the old list while we change the new one.
        bucket = [listener, *bucket] if prepend else [*bucket, listener]
        self._listeners[event.name] = bucket
        entry = bucket[0] if prepend else bucket[-1]

        def dispose() -> None:
            current = self._listeners.get(event.name)
            if current is None:
                return
            remaining = [item for item in current if item is not entry]
            if remaining:
                self._listeners[event.name] = remaining
            else:
                del self._listeners[event.name]

        return dispose

    def listened(self, event: Signal[Any] | Waterfall[Any, Any]) -> bool:
        """Whether `event` has a listener now: a dispatch site whose payload costs something
        to build may skip building it when nobody would receive it."""
        return event.name in self._listeners

    def emit(self, event: Signal[P], payload: P) -> None:
        """Call every listener of `event` synchronously, in order.

        A listener that raises stops the dispatch and the exception propagates: listeners
        of a signal are recorders, and a broken recorder is a bug to surface, not to hide.
        """
        for listener in self._listeners.get(event.name, ()):
            listener(payload)

    async def waterfall(self, event: Waterfall[P, R], payload: P, default: R) -> R:
        """Ask the listeners of `event` in order; the first one that returns decides.

        A listener defers by awaiting its `next` argument. After the last listener, `next`
        returns `default`, so an event without listeners simply yields `default`.
        """
        listeners: list[WaterfallListener[P, R]] = self._listeners.get(event.name, [])
        if not listeners:
            return default

        async def call(index: int) -> R:
            if index == len(listeners):
                return default
            return await listeners[index](payload, lambda: call(index + 1))

        return await call(0)
