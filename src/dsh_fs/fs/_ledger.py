"""`ObservationLedger`: where the observation policy keeps who saw which file at which version.

The policy decides (SPEC §5); a ledger only stores. Writes are synchronous and may be
buffered (`fs/observed` is a signal); `settle` stores what an owner buffered and `lookup`
answers from the store. A ledger that cannot reach its store raises `LedgerUnreachable`,
and the policy then refuses mutations rather than guessing (SPEC §14). Target keys and
versions stay opaque: a ledger stores and compares them, never interprets them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import ClassVar

from dsh_fs.runtime import AgentSession

from ._types import FsTargetKey, Observation

__all__ = ["LedgerUnreachable", "ObservationLedger"]


class LedgerUnreachable(Exception):
    """The ledger's store did not answer: nothing is known about any observation."""


class ObservationLedger(ABC):
    """Observations per owner (an `AgentSession`) per target key; what the policy stores."""

    buffers: ClassVar[bool] = True
    """Whether `record` and `forget` may be buffered until `settle`. A ledger that stores at
    once (in this process's memory) says False: its `settle` has nothing to do, and the
    policy then dispatches no `fs/settle` after each read for it."""

    @abstractmethod
    def record(self, owner: AgentSession, key: FsTargetKey, observation: Observation) -> None:
        """Remember that `owner` saw `key` as `observation` (may be buffered until `settle`)."""

    @abstractmethod
    def forget(self, owner: AgentSession, forgotten: Callable[[FsTargetKey], bool]) -> None:
        """Drop what `owner` saw of the keys `forgotten` picks (may be buffered)."""

    @abstractmethod
    async def settle(self, owner: AgentSession) -> None:
        """Store what `owner` buffered, in order.

        Raises:
            LedgerUnreachable: the store did not answer (the buffered changes are dropped:
                an observation that was never stored is unseen, which is always safe).
        """

    @abstractmethod
    async def lookup(self, owner: AgentSession, key: FsTargetKey) -> Observation | None:
        """What `owner` saw of `key` (None: unseen, or expired); settles `owner` first.

        Raises:
            LedgerUnreachable: the store did not answer.
        """

    def clear(self) -> None:  # noqa: B027 - optional: a shared store outlives one policy
        """Drop what this process holds (the policy's disposal); a shared store keeps its
        entries until they expire."""

    async def aclose(self) -> None:  # noqa: B027 - optional: only a networked ledger has one
        """Release connections; the ledger is not used afterwards."""
