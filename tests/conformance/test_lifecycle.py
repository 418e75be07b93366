"""Closing and cancelling: a closed provider refuses every call with `FS_ABORTED`; a stream
in progress stops with it; a cancelled mutation takes effect whole or not at all."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
import pytest

from dsh_fs.errors import FsErrorCode
from dsh_fs.fs import FileSystem, FsEditRequest, FsTarget

from .backends import ProviderUnderTest, fails

pytestmark = pytest.mark.anyio

Call = Callable[[FileSystem, FsTarget], Awaitable[object]]

CALLS: dict[str, tuple[str, Call]] = {
    "stat": ("read", lambda fs, t: fs.stat(t)),
    "read_text": ("read", lambda fs, t: fs.read_text(t)),
    "read_bytes": ("read", lambda fs, t: fs.read_bytes(t, 1000)),
    "write_text": ("write", lambda fs, t: fs.write_text(t, "new\n")),
    "edit_text": (
        "edit",
        lambda fs, t: fs.edit_text(t, FsEditRequest(old_string="old", new_string="x")),
    ),
}


@pytest.mark.parametrize("call", sorted(CALLS))
async def test_a_closed_provider_refuses_every_call_with_aborted(
    put: ProviderUnderTest, call: str
) -> None:
    put.outside.write_bytes("a.txt", b"old\n")
    target = await put.fs.resolve("a.txt")
    await put.fs.aclose()
    verb, run = CALLS[call]
    message = f'cannot {verb} "{put.display("a.txt")}": the filesystem was closed'
    with fails(FsErrorCode.ABORTED, message):
        await run(put.fs, target)
    assert put.outside.read_bytes("a.txt") == b"old\n"


async def test_a_stream_in_progress_stops_with_aborted_when_the_provider_closes(
    put: ProviderUnderTest,
) -> None:
    put.outside.write_bytes("big.txt", b"line\n" * 3_000_000)  # several chunks everywhere
    chunks_seen = 0
    with fails(FsErrorCode.ABORTED):
        async with put.fs.stream_text(await put.fs.resolve("big.txt")) as chunks:
            async for _ in chunks:
                chunks_seen += 1
                await put.fs.aclose()
    assert chunks_seen == 1


async def test_a_mutation_cancelled_while_it_waits_changes_nothing(
    put: ProviderUnderTest,
) -> None:
    put.outside.write_bytes("a.txt", b"old\n")
    target = await put.fs.resolve("a.txt")
    # Cancelled before it runs: nothing happens, and the provider stays usable.
    with anyio.CancelScope() as scope:
        scope.cancel()
        await put.fs.write_text(target, "cancelled\n")
    assert scope.cancelled_caught
    assert put.outside.read_bytes("a.txt") == b"old\n"
    await put.fs.write_text(target, "after\n")
    assert put.outside.read_bytes("a.txt") == b"after\n"


@pytest.mark.parametrize("delay", [0.0, 0.0005, 0.002, 0.01])
async def test_a_mutation_cancelled_in_flight_is_whole_or_absent(
    put: ProviderUnderTest, delay: float
) -> None:
    old, new = b"old\n" * 50_000, "new\n" * 50_000
    put.outside.write_bytes("a.txt", old)
    target = await put.fs.resolve("a.txt")
    with anyio.move_on_after(delay):
        await put.fs.write_text(target, new)
    assert put.outside.read_bytes("a.txt") in (old, new.encode())
    # Never a half-written file, never residue beside it.
    assert put.outside.listing() == ["a.txt"]
