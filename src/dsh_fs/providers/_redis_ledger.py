"""`RedisLedger`: observations in a Redis server every replica shares (SPEC §14).

One string key per (owner, target key), ``<namespace><len(owner)>:<owner>:<target key>``,
holding ``A`` (seen absent) or ``P<version>``, expiring `ttl` seconds after it was written.
The owner is the session's principal when it has one (an agent, on any replica), else a
name unique to this process's session object. Records are buffered (`fs/observed` is a
signal) and written, in order, by `settle`; any Redis or socket failure is
`LedgerUnreachable`, and the policy refuses mutations until the server answers again.
"""

from __future__ import annotations

import uuid
import weakref
from collections.abc import Callable
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError

from dsh_fs.fs import (
    Absent,
    FsTargetKey,
    FsVersion,
    LedgerUnreachable,
    Observation,
    ObservationLedger,
    Present,
)
from dsh_fs.runtime import AgentSession

__all__ = ["DEFAULT_OBSERVATION_TTL", "RedisLedger"]

DEFAULT_OBSERVATION_TTL = 24 * 60 * 60.0
"""Seconds an observation lives in a shared ledger (`--observation-ttl`)."""

_Op = tuple[FsTargetKey, Observation] | Callable[[FsTargetKey], bool]

_GLOB_SPECIAL = str.maketrans({c: "\\" + c for c in "\\*?[]"})


def _encode(observation: Observation) -> str:
    return "P" + observation.version if isinstance(observation, Present) else "A"


def _decode(value: bytes | str) -> Observation | None:
    text = value.decode("utf-8") if isinstance(value, bytes) else value
    if text == "A":
        return Absent()
    if text.startswith("P"):
        return Present(FsVersion(text[1:]))
    return None  # not ours: unseen is always safe


class RedisLedger(ObservationLedger):
    """Observations in Redis, shared by every replica that names the same server and db.

    Args:
        client: A `redis.asyncio.Redis` (its own connection pool); see `from_url`.
        ttl: Seconds an entry lives after it was written.
        namespace: Prefix of every key (several fleets can share one server).

    Raises:
        ValueError: `ttl` is not positive.
    """

    def __init__(
        self, client: Redis, *, ttl: float = DEFAULT_OBSERVATION_TTL, namespace: str = "dsh-fs:obs:"
    ) -> None:
        if not ttl > 0:
            raise ValueError(f"observation ttl must be positive, not {ttl}")
        self._client = client
        self._ttl_ms = max(1, round(ttl * 1000))
        self._namespace = namespace
        self._names: weakref.WeakKeyDictionary[AgentSession, str] = weakref.WeakKeyDictionary()
        self._pending: weakref.WeakKeyDictionary[AgentSession, list[_Op]] = (
            weakref.WeakKeyDictionary()
        )

    @classmethod
    def from_url(
        cls, url: str, *, ttl: float = DEFAULT_OBSERVATION_TTL, timeout: float = 2.0
    ) -> RedisLedger:
        """A ledger on ``redis://host:port/db`` (or ``rediss://``, ``unix://``); nothing is
        connected until the first request. Each request waits at most `timeout` seconds.

        Raises:
            ValueError: `url` is not a Redis URL.
        """
        client = Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)
        return cls(client, ttl=ttl)

    def owner_name(self, owner: AgentSession) -> str:
        """Whose entries `owner`'s are: its principal, else this session object alone."""
        if owner.principal is not None:
            return "agent/" + owner.principal
        name = self._names.get(owner)
        if name is None:
            name = self._names[owner] = f"session/{uuid.uuid4().hex}"
        return name

    def _prefix(self, owner: AgentSession) -> str:
        name = self.owner_name(owner)
        return f"{self._namespace}{len(name)}:{name}:"

    def record(self, owner: AgentSession, key: FsTargetKey, observation: Observation) -> None:
        self._pending.setdefault(owner, []).append((key, observation))

    def forget(self, owner: AgentSession, forgotten: Callable[[FsTargetKey], bool]) -> None:
        self._pending.setdefault(owner, []).append(forgotten)

    async def settle(self, owner: AgentSession) -> None:
        ops = self._pending.pop(owner, None)
        if not ops:
            return
        prefix = self._prefix(owner)
        try:
            pipe = self._client.pipeline(transaction=False)
            for op in ops:
                if isinstance(op, tuple):
                    key, observation = op
                    pipe.set(prefix + key, _encode(observation), px=self._ttl_ms)
                    continue
                # A forget picks keys by a predicate: store what came before it, then find
                # the owner's keys and drop the picked ones, so the order holds.
                await pipe.execute()
                await self._drop(prefix, op)
            await pipe.execute()
        except (RedisError, OSError) as error:
            raise LedgerUnreachable(f"observation ledger unreachable: {error}") from error

    async def _drop(self, prefix: str, forgotten: Callable[[FsTargetKey], bool]) -> None:
        doomed: list[str] = []
        pattern = prefix.translate(_GLOB_SPECIAL) + "*"
        async for raw in self._client.scan_iter(match=pattern, count=500):
            name = raw.decode("utf-8") if isinstance(raw, bytes) else str(raw)
            if forgotten(FsTargetKey(name[len(prefix) :])):
                doomed.append(name)
        if doomed:
            await self._client.delete(*doomed)

    async def lookup(self, owner: AgentSession, key: FsTargetKey) -> Observation | None:
        await self.settle(owner)
        try:
            value: Any = await self._client.get(self._prefix(owner) + key)
        except (RedisError, OSError) as error:
            raise LedgerUnreachable(f"observation ledger unreachable: {error}") from error
        return None if value is None else _decode(value)

    def clear(self) -> None:
        self._pending.clear()

    async def aclose(self) -> None:
        await self._client.aclose()
