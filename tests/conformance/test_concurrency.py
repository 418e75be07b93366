"""Two guarded mutations from one basis: exactly one wins, the other is stale — every time."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
import pytest

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import FsEditRequest, FsTarget, FsVersion, ReplaceIfVersion

from .backends import ProviderUnderTest

pytestmark = pytest.mark.anyio

ROUNDS = 200

Mutation = Callable[[ProviderUnderTest, FsTarget, FsVersion, str], Awaitable[None]]


async def guarded_write(put: ProviderUnderTest, t: FsTarget, v: FsVersion, text: str) -> None:
    await put.fs.write_text(t, text, ReplaceIfVersion(v))


async def guarded_edit(put: ProviderUnderTest, t: FsTarget, v: FsVersion, text: str) -> None:
    await put.fs.edit_text(t, FsEditRequest(old_string="base\n", new_string=text), v)


async def contend(results: dict[str, FsError | None], name: str, attempt: Awaitable[None]) -> None:
    try:
        await attempt
    except FsError as error:
        results[name] = error
    else:
        results[name] = None


async def test_two_guarded_mutations_from_one_basis_settle_one_winner(
    put: ProviderUnderTest,
) -> None:
    target = await put.fs.resolve("race.txt")
    pairs: list[tuple[Mutation, Mutation]] = [
        (guarded_write, guarded_write),
        (guarded_edit, guarded_edit),
        (guarded_write, guarded_edit),
        (guarded_edit, guarded_write),
    ]
    for round_ in range(ROUNDS):
        put.outside.write_bytes("race.txt", b"base\n")
        info = await put.fs.stat(target)
        assert info is not None
        results: dict[str, FsError | None] = {}
        first, second = pairs[round_ % len(pairs)]
        async with anyio.create_task_group() as tg:
            for name, mutate in (("a", first), ("b", second)):
                text = f"{name}-{round_}\n"
                tg.start_soon(contend, results, name, mutate(put, target, info.version, text))

        winners = [name for name, error in results.items() if error is None]
        losers = [error for error in results.values() if error is not None]
        assert len(winners) == 1, results
        assert [e.code for e in losers] == [FsErrorCode.STALE_VERSION], losers
        assert put.outside.read_bytes("race.txt") == f"{winners[0]}-{round_}\n".encode()


async def test_sequential_guarded_edits_from_many_tasks_lose_no_update(
    put: ProviderUnderTest,
) -> None:
    put.outside.write_bytes("counter.txt", b"0")
    target = await put.fs.resolve("counter.txt")
    tasks, increments = 8, 10

    async def increment_repeatedly() -> None:
        done = 0
        while done < increments:
            info = await put.fs.stat(target)
            assert info is not None
            current = await put.fs.read_text(target)
            # The read may already be newer than the stat: a stale guard then retries.
            request = FsEditRequest(old_string=current, new_string=str(int(current) + 1))
            try:
                await put.fs.edit_text(target, request, info.version)
            except FsError as error:
                if error.code not in (FsErrorCode.STALE_VERSION, FsErrorCode.EDIT_NOT_FOUND):
                    raise
            else:
                done += 1

    async with anyio.create_task_group() as tg:
        for _ in range(tasks):
            tg.start_soon(increment_repeatedly)
    assert put.outside.read_bytes("counter.txt") == str(tasks * increments).encode()
