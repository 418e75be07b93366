"""`MemoryLedger`: observations in this process (the default ledger; SPEC §5's behaviour).

Per owner (held weakly: a dropped session frees its entries), target keys in
least-recently-used order, at most `capacity` of them; with a `ttl`, an entry older than it
is unseen again. Nothing is buffered, so `settle` has nothing to do.
"""

from __future__ import annotations

import time
import weakref
from collections import OrderedDict
from collections.abc import Callable

from dsh_fs.fs import FsTargetKey, Observation, ObservationLedger
from dsh_fs.runtime import AgentSession

__all__ = ["DEFAULT_MAX_OBSERVATIONS", "MemoryLedger"]

DEFAULT_MAX_OBSERVATIONS = 4096
"""How many files one session's observations cover at most (see `ObservationPolicy`)."""


class MemoryLedger(ObservationLedger):
    """Observations in process memory, bounded per owner and optionally expiring.

    Args:
        capacity: Targets remembered per owner (the least recently used goes first;
            default 4096).
        ttl: Seconds an entry lives after it was recorded; None: until evicted.
        clock: Monotonic seconds (tests pass their own).

    Raises:
        ValueError: `capacity` is less than 1 or `ttl` is not positive.
    """

    buffers = False  # `record` stores at once: nothing to settle

    def __init__(
        self,
        *,
        capacity: int = DEFAULT_MAX_OBSERVATIONS,
        ttl: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if capacity < 1:
            raise ValueError(f"max_observations must be at least 1, not {capacity}")
        if ttl is not None and not ttl > 0:
            raise ValueError(f"observation ttl must be positive, not {ttl}")
        self._capacity = capacity
        self._ttl = ttl
        self._clock = clock
        # Per owner, key -> (observation, recorded at), least recently used first.
        self._state: weakref.WeakKeyDictionary[
            AgentSession, OrderedDict[FsTargetKey, tuple[Observation, float]]
        ] = weakref.WeakKeyDictionary()

    def record(self, owner: AgentSession, key: FsTargetKey, observation: Observation) -> None:
        observations = self._state.get(owner)
        if observations is None:
            observations = self._state[owner] = OrderedDict()
        observations[key] = (observation, self._clock())
        observations.move_to_end(key)
        if len(observations) > self._capacity:
            observations.popitem(last=False)

    def forget(self, owner: AgentSession, forgotten: Callable[[FsTargetKey], bool]) -> None:
        observations = self._state.get(owner)
        if observations is None:
            return
        for key in [key for key in observations if forgotten(key)]:
            del observations[key]

    async def settle(self, owner: AgentSession) -> None:
        return None

    async def lookup(self, owner: AgentSession, key: FsTargetKey) -> Observation | None:
        return self.seen(owner, key)

    def seen(self, owner: AgentSession, key: FsTargetKey) -> Observation | None:
        """`lookup` without awaiting (a use counts: the entry becomes most recently used)."""
        observations = self._state.get(owner)
        entry = None if observations is None else observations.get(key)
        if observations is None or entry is None:
            return None
        observation, recorded = entry
        if self._ttl is not None and self._clock() - recorded >= self._ttl:
            del observations[key]
            return None
        observations.move_to_end(key)
        return observation

    def clear(self) -> None:
        self._state.clear()
