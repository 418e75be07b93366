"""Per-target mutation locks inside one process (one `anyio.Lock` per target key)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

__all__ = ["TargetLocks"]


class TargetLocks:
    """One `anyio.Lock` per target key, dropped once nobody holds or awaits it."""

    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: dict[str, tuple[anyio.Lock, list[int]]] = {}

    @asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        """Hold the lock of `key` for the block (waiting for earlier holders first)."""
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = (anyio.Lock(), [0])
        lock, users = entry
        users[0] += 1
        try:
            async with lock:
                yield
        finally:
            users[0] -= 1
            if users[0] == 0:
                del self._entries[key]

    def __len__(self) -> int:
        return len(self._entries)
