"""Per-target mutation locks inside one process: one holder per target key at a time, the
others served in arrival order."""

from __future__ import annotations

from collections import deque
from types import TracebackType

import anyio
from anyio.lowlevel import checkpoint_if_cancelled

__all__ = ["TargetLocks"]


class TargetLocks:
    """One lock per target key, present only while somebody holds or awaits it.

    A free key is taken with no more than a look at the caller's cancellation (a
    dictionary entry: an `anyio.Lock` per call, made and dropped, and its context manager
    were a tenth of the event loop's share of a 1 MB write, issue 44); a held one is waited
    for with an `anyio.Event` per waiter, handed over by the holder as it leaves. For one
    event loop.
    """

    __slots__ = ("_held",)

    def __init__(self) -> None:
        self._held: dict[str, deque[anyio.Event]] = {}
        """The held keys, each with its waiters in arrival order."""

    def hold(self, key: str) -> _Hold:
        """``async with locks.hold(key):`` holds the lock of `key` for the block (waiting
        for earlier holders first)."""
        return _Hold(self, key)

    def _release(self, key: str) -> None:
        """Hand `key` to its first waiter, or free it."""
        waiters = self._held[key]
        if waiters:
            waiters.popleft().set()  # it holds the key now, whenever it resumes
        else:
            del self._held[key]

    def __len__(self) -> int:
        return len(self._held)


class _Hold:
    """`TargetLocks.hold`'s context manager."""

    __slots__ = ("_key", "_locks")

    def __init__(self, locks: TargetLocks, key: str) -> None:
        self._locks = locks
        self._key = key

    async def __aenter__(self) -> None:
        held = self._locks._held
        waiters = held.get(self._key)
        if waiters is None:
            # A cancelled caller never takes it (and so never runs what it guards), as
            # with an `anyio.Lock`; a free key costs no trip through the event loop.
            await checkpoint_if_cancelled()
            held[self._key] = deque()
            return
        turn = anyio.Event()
        waiters.append(turn)
        try:
            await turn.wait()
        except BaseException:
            if turn.is_set():
                self._locks._release(self._key)  # handed over as it was cancelled: pass on
            else:
                waiters.remove(turn)
            raise

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._locks._release(self._key)
