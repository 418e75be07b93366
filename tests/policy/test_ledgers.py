"""The observation ledgers (SPEC §14): the same conformance cases on memory and on Redis.

The policy decides, the ledger stores: each case runs on the default `MemoryLedger` and on a
`RedisLedger` over a real ``redis-server`` on loopback (skipped, with the reason, where it
can't be had). Then what only a shared ledger does: two replicas serve one agent, two
agents never share, and a ledger that does not answer makes mutations refuse while reads
go on.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest

from dsh_fs import Workspace
from dsh_fs.fs import (
    Absent,
    FsTargetKey,
    FsVersion,
    LedgerUnreachable,
    ObservationLedger,
    Present,
)
from dsh_fs.policy import MemoryLedger
from dsh_fs.providers import LocalFileSystem
from dsh_fs.runtime import AgentSession

from ..redis_server import RedisServer, redis_or_skip

pytestmark = pytest.mark.anyio

KEY = FsTargetKey("/real/a.txt")
OTHER = FsTargetKey("/real/b.txt")
# Opaque means opaque: glob characters, separators and non-ASCII come back untouched.
ODD_KEY = FsTargetKey("/real/[x]*?\\:é 1.txt")
ODD_VERSION = FsVersion("v:12*[?]\\é:A:P")

LedgerFactory = Callable[[], ObservationLedger]


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(redis_or_skip(), tmp_path_factory.mktemp("redis"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(params=["memory", "redis"])
async def ledgers(request: pytest.FixtureRequest) -> AsyncIterator[LedgerFactory]:
    """Makes ledgers over one store: memory ledgers each their own, Redis ones shared."""
    made: list[ObservationLedger] = []

    def make() -> ObservationLedger:
        if request.param == "memory":
            ledger: ObservationLedger = MemoryLedger(capacity=100)
        else:
            from dsh_fs.providers import RedisLedger

            server: RedisServer = request.getfixturevalue("redis_server")
            ledger = RedisLedger.from_url(server.url)
        made.append(ledger)
        return ledger

    yield make
    for ledger in made:
        await ledger.aclose()


async def test_an_unseen_target_is_none_and_a_recorded_one_comes_back(
    ledgers: LedgerFactory,
) -> None:
    ledger, owner = ledgers(), AgentSession()
    assert await ledger.lookup(owner, KEY) is None
    ledger.record(owner, KEY, Present(FsVersion("v1")))
    ledger.record(owner, OTHER, Absent())
    assert await ledger.lookup(owner, KEY) == Present(FsVersion("v1"))
    assert await ledger.lookup(owner, OTHER) == Absent()


async def test_a_later_record_replaces_the_earlier_one_in_order(ledgers: LedgerFactory) -> None:
    ledger, owner = ledgers(), AgentSession()
    ledger.record(owner, KEY, Present(FsVersion("v1")))
    ledger.record(owner, KEY, Present(FsVersion("v2")))
    await ledger.settle(owner)
    ledger.record(owner, KEY, Absent())
    assert await ledger.lookup(owner, KEY) == Absent()


async def test_keys_and_versions_stay_opaque(ledgers: LedgerFactory) -> None:
    ledger, owner = ledgers(), AgentSession()
    ledger.record(owner, ODD_KEY, Present(ODD_VERSION))
    assert await ledger.lookup(owner, ODD_KEY) == Present(ODD_VERSION)
    assert await ledger.lookup(owner, FsTargetKey("/real/x.txt")) is None


async def test_two_owners_never_share_an_observation(ledgers: LedgerFactory) -> None:
    ledger, one, two = ledgers(), AgentSession(), AgentSession()
    ledger.record(one, KEY, Present(FsVersion("v1")))
    await ledger.settle(one)
    assert await ledger.lookup(two, KEY) is None
    assert await ledger.lookup(one, KEY) == Present(FsVersion("v1"))


async def test_forget_drops_only_the_picked_keys_and_keeps_the_order(
    ledgers: LedgerFactory,
) -> None:
    ledger, owner = ledgers(), AgentSession()
    ledger.record(owner, KEY, Present(FsVersion("v1")))
    ledger.record(owner, ODD_KEY, Present(FsVersion("v1")))
    ledger.record(owner, OTHER, Present(FsVersion("v1")))
    ledger.forget(owner, lambda key: key in (KEY, ODD_KEY))
    assert await ledger.lookup(owner, KEY) is None
    assert await ledger.lookup(owner, ODD_KEY) is None
    assert await ledger.lookup(owner, OTHER) == Present(FsVersion("v1"))
    # Recorded after the forget: it stays.
    ledger.forget(owner, lambda key: key == OTHER)
    ledger.record(owner, OTHER, Present(FsVersion("v2")))
    assert await ledger.lookup(owner, OTHER) == Present(FsVersion("v2"))


async def test_the_policy_on_the_ledger_guards_read_edit_and_stale_edits(
    ledgers: LedgerFactory, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    async with Workspace(LocalFileSystem(tmp_path), observations=ledgers()) as workspace:
        session = workspace.session()
        path = str(tmp_path / "a.txt")
        unread = await session.call(
            "edit", {"file_path": path, "old_string": "one", "new_string": "1"}
        )
        assert unread.code == "FS_NOT_OBSERVED"
        assert not (await session.call("read", {"file_path": path})).is_error
        edited = await session.call(
            "edit", {"file_path": path, "old_string": "one", "new_string": "1"}
        )
        assert not edited.is_error, edited.text
        (tmp_path / "a.txt").write_text("changed behind its back\n")
        stale = await session.call("write", {"file_path": path, "content": "overwrite\n"})
        assert stale.code == "FS_STALE_VERSION"
        assert (tmp_path / "a.txt").read_text() == "changed behind its back\n"


class SettleCounting(MemoryLedger):
    """A memory ledger (it stores at once) that counts the `settle`s it is asked for."""

    def __init__(self) -> None:
        super().__init__(capacity=10)
        self.settles = 0

    async def settle(self, owner: AgentSession) -> None:
        self.settles += 1


class BufferingSettleCounting(SettleCounting):
    """The same, saying it may buffer (as a shared ledger does)."""

    buffers = True


@pytest.mark.parametrize("buffers", [True, False])
async def test_each_read_settles_a_buffering_ledger_and_never_one_that_stores_at_once(
    buffers: bool, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    ledger = BufferingSettleCounting() if buffers else SettleCounting()
    async with Workspace(LocalFileSystem(tmp_path), observations=ledger) as workspace:
        session = workspace.session()
        args = {"file_path": str(tmp_path / "a.txt")}
        for _ in range(3):
            assert not (await session.call("read", args)).is_error
        # Stored at once or settled, the reads count: the edit is allowed.
        edit = {**args, "old_string": "one", "new_string": "1"}
        assert not (await session.call("edit", edit)).is_error
    assert ledger.settles == (4 if buffers else 0)


async def test_a_memory_entry_older_than_its_ttl_is_unseen_again() -> None:
    now = [100.0]
    ledger, owner = MemoryLedger(capacity=10, ttl=60, clock=lambda: now[0]), AgentSession()
    ledger.record(owner, KEY, Present(FsVersion("v1")))
    now[0] += 59.5
    assert await ledger.lookup(owner, KEY) == Present(FsVersion("v1"))
    now[0] += 0.5
    assert await ledger.lookup(owner, KEY) is None


async def test_a_redis_entry_expires_within_its_ttl(redis_server: RedisServer) -> None:
    from redis.asyncio import Redis

    from dsh_fs.providers import RedisLedger

    client = Redis.from_url(redis_server.url)
    ledger, owner = RedisLedger(client, ttl=90, namespace="ttl-test:"), AgentSession()
    ledger.record(owner, KEY, Present(FsVersion("v1")))
    await ledger.settle(owner)
    keys = [key async for key in client.scan_iter(match="ttl-test:*")]
    assert len(keys) == 1
    assert 0 < await client.pttl(keys[0]) <= 90_000
    await ledger.aclose()


async def test_two_replicas_serve_one_agent_and_never_a_second_one(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    from dsh_fs.providers import RedisLedger

    (tmp_path / "a.txt").write_text("one\n")
    path = str(tmp_path / "a.txt")
    edit = {"file_path": path, "old_string": "one", "new_string": "1"}
    replica_a = Workspace(
        LocalFileSystem(tmp_path), observations=RedisLedger.from_url(redis_server.url)
    )
    replica_b = Workspace(
        LocalFileSystem(tmp_path), observations=RedisLedger.from_url(redis_server.url)
    )
    async with replica_a, replica_b:
        read = await replica_a.session(principal="alice/claude").call("read", {"file_path": path})
        assert not read.is_error
        # Another agent, and a session without a principal, saw nothing.
        other = await replica_b.session(principal="bob/claude").call("edit", edit)
        assert other.code == "FS_NOT_OBSERVED"
        anonymous = await replica_b.session().call("edit", edit)
        assert anonymous.code == "FS_NOT_OBSERVED"
        # The same agent, on the other replica, edits what it read on the first.
        edited = await replica_b.session(principal="alice/claude").call("edit", edit)
        assert not edited.is_error, edited.text
        assert (tmp_path / "a.txt").read_text() == "1\n"


async def test_without_the_ledger_mutations_refuse_and_reads_go_on(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from dsh_fs.providers import RedisLedger

    server = RedisServer(redis_or_skip(), tmp_path_factory.mktemp("redis-stopped"))
    server.start()
    (tmp_path / "a.txt").write_text("one\n")
    path = str(tmp_path / "a.txt")
    edit = {"file_path": path, "old_string": "one", "new_string": "1"}
    try:
        ledger = RedisLedger.from_url(server.url, timeout=5)
        async with Workspace(LocalFileSystem(tmp_path), observations=ledger) as workspace:
            session = workspace.session()
            assert not (await session.call("read", {"file_path": path})).is_error
            server.stop()
            read = await session.call("read", {"file_path": path})
            assert not read.is_error
            assert "one" in read.text
            for name, arguments in (
                ("edit", edit),
                ("write", {"file_path": path, "content": "x\n"}),
                ("write", {"file_path": str(tmp_path / "new.txt"), "content": "x\n"}),
                ("delete", {"file_path": path}),
            ):
                refused = await session.call(name, arguments)
                assert refused.code == "FS_NOT_OBSERVED", (name, refused.text)
                assert "observation ledger is unreachable" in refused.text
            assert (tmp_path / "a.txt").read_text() == "one\n"
            assert not (tmp_path / "new.txt").exists()
            with pytest.raises(LedgerUnreachable):
                await ledger.lookup(AgentSession(), KEY)
            # Back again: the read made while it was gone was not remembered.
            server.start()
            assert (await session.call("edit", edit)).code == "FS_NOT_OBSERVED"
            assert not (await session.call("read", {"file_path": path})).is_error
            assert not (await session.call("edit", edit)).is_error
    finally:
        server.stop()
