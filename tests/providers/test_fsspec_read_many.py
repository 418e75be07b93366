"""`FsspecFileSystem.read_many` on S3 (moto on loopback): a search's reads in flight together
answer exactly what reading the objects one by one answers, and stop when the caller does."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import anyio
import pytest

from dsh_fs import Workspace
from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import FileSystem, FsTarget, FsWalkEntry, WrapperFileSystem
from dsh_fs.providers import FsspecFileSystem
from dsh_fs.providers.fsspec._s3 import READS_IN_FLIGHT
from tests.s3_server import S3Server, shared_server

pytestmark = pytest.mark.anyio

HUGE = (b"filler line without the word\n" * 80_000) + b"needle at the very end\n"
"""Over 2 MiB: past the batch's cap and the engine's whole read (it is streamed)."""

TREE: dict[str, bytes] = {
    "src/a.py": b"needle = 1\nother = 2\n",
    "src/b.py": b"nothing here\n",
    "src/empty.py": b"",
    "src/latin1.txt": "caf\xe9 needle\n".encode("latin-1"),
    "src/utf16.txt": "needle in utf-16\n".encode("utf-16"),
    "src/binary.bin": b"needle\x00\x01\x02 binary\n",
    "src/deep/c.py": b"x = 'needle'\nneedle()\n",
    "big/huge.log": HUGE,
    "big/medium.txt": b"needle\n" + b"m" * 100_000 + b"\n",
    ".hidden/needle.py": b"needle\n",
    "notes/n.md": "ünïcödé needle ✓\n".encode(),
}


class OneByOne(FsspecFileSystem):
    """The S3 provider reading a search's files one after another: the contract's default
    `read_many`, each file through `read_bytes` (the single-object path)."""

    async def read_many(self, targets: Sequence[FsTarget], max_bytes: int) -> list[bytes | FsError]:
        return await FileSystem.read_many(self, targets, max_bytes)


@pytest.fixture
def s3() -> S3Server:
    return shared_server()


@pytest.fixture
def bucket(s3: S3Server) -> str:
    name = s3.new_bucket()
    for key, data in TREE.items():
        s3.client().put_object(Bucket=name, Key=f"repo/{key}", Body=data)
    return name


def provider(s3: S3Server, bucket: str, kind: type[FsspecFileSystem]) -> FsspecFileSystem:
    return kind.from_url(f"s3://{bucket}/repo", **s3.storage_options())


def answer(value: bytes | FsError) -> object:
    return (value.code, value.message) if isinstance(value, FsError) else value


async def test_read_many_answers_each_object_as_read_bytes_does(s3: S3Server, bucket: str) -> None:
    fs = provider(s3, bucket, FsspecFileSystem)
    names = [*TREE, "src/gone.py", "src"]
    targets = [await fs.resolve(name) for name in names]
    together = await fs.read_many(targets, 64 << 10)
    alone: list[bytes | FsError] = []
    for target in targets:
        try:
            alone.append(await fs.read_bytes(target, 64 << 10))
        except FsError as error:
            alone.append(error)
    assert [answer(value) for value in together] == [answer(value) for value in alone]
    codes = {name: answer(value) for name, value in zip(names, together, strict=True)}
    assert codes["src/a.py"] == TREE["src/a.py"]
    assert codes["src/empty.py"] == b""
    assert codes["big/huge.log"][0] is FsErrorCode.TOO_LARGE  # type: ignore[index]
    assert codes["src/gone.py"][0] is FsErrorCode.NOT_FOUND  # type: ignore[index]


@pytest.mark.parametrize(
    "arguments",
    [
        {"pattern": "needle"},
        {"pattern": "^needle$"},
        {"pattern": r"\Aneedle"},  # searched file by file, never joined
        {"pattern": "needle", "include": "*.py"},
        {"pattern": "caf|ünï|utf-16"},
        {"pattern": "filler"},  # more lines than are shown
    ],
)
async def test_grep_answers_the_same_through_concurrent_reads_and_one_by_one(
    s3: S3Server, bucket: str, arguments: dict[str, str]
) -> None:
    results = []
    for kind in (FsspecFileSystem, OneByOne):
        fs = provider(s3, bucket, kind)
        async with Workspace(fs, cwd=fs.root) as workspace:
            result = await workspace.session().call("grep", arguments)
        assert not result.is_error, result.text
        results.append((result.text, result.value))
    assert results[0] == results[1]
    assert "Found" in results[0][0]


async def test_grep_finds_a_match_past_the_batch_in_a_huge_object(
    s3: S3Server, bucket: str
) -> None:
    fs = provider(s3, bucket, FsspecFileSystem)
    async with Workspace(fs, cwd=fs.root) as workspace:
        result = await workspace.session().call("grep", {"pattern": "at the very end"})
    assert result.value is not None
    assert [match["path"] for match in result.value["matches"]] == ["big/huge.log"]


class DeletesAfterListing(WrapperFileSystem):
    """Deletes `key` once the walk has listed the tree, before any file is read."""

    def __init__(self, wrapped: FileSystem, delete: Callable[[], None]) -> None:
        super().__init__(wrapped)
        self._delete = delete

    def walk(
        self, root: FsTarget, *, descend: Callable[[str], bool] | None = None
    ) -> AbstractAsyncContextManager[AsyncIterator[list[FsWalkEntry]]]:
        return self._walk_then_delete(root, descend)

    @asynccontextmanager
    async def _walk_then_delete(
        self, root: FsTarget, descend: Callable[[str], bool] | None
    ) -> AsyncIterator[AsyncIterator[list[FsWalkEntry]]]:
        async with self.wrapped.walk(root, descend=descend) as batches:
            await anyio.to_thread.run_sync(self._delete)
            yield batches


async def test_an_object_deleted_during_the_search_is_skipped_as_one_by_one(
    s3: S3Server,
) -> None:
    results = []
    for kind in (FsspecFileSystem, OneByOne):
        bucket = s3.new_bucket()
        for key, data in TREE.items():
            s3.client().put_object(Bucket=bucket, Key=f"repo/{key}", Body=data)

        def delete(bucket: str = bucket) -> None:
            s3.client().delete_object(Bucket=bucket, Key="repo/src/a.py")

        fs = DeletesAfterListing(provider(s3, bucket, kind), delete)
        async with Workspace(fs, cwd=fs.wrapped.roots[0]) as workspace:
            result = await workspace.session().call("grep", {"pattern": "needle"})
        assert not result.is_error, result.text
        assert result.value is not None
        paths = [match["path"] for match in result.value["matches"]]
        assert "src/a.py" not in paths
        assert "src/deep/c.py" in paths
        results.append(result.value)
    assert results[0] == results[1]


async def test_a_cancelled_read_many_sends_no_more_requests(s3: S3Server) -> None:
    bucket = s3.new_bucket()
    client = s3.client()
    count = 200
    for index in range(count):
        client.put_object(Bucket=bucket, Key=f"repo/f{index:03}.txt", Body=b"x\n")
    fs = provider(s3, bucket, FsspecFileSystem)
    targets = [await fs.resolve(f"f{index:03}.txt") for index in range(count)]
    await fs.read_many(targets[:1], 10)  # the s3fs client exists from here on
    loop = asyncio.get_running_loop()
    sent = 0
    lock = threading.Lock()
    with anyio.CancelScope() as scope:

        def counting(**kwargs: Any) -> None:
            # Runs on s3fs's loop: the third GET cancels the caller from its own loop.
            nonlocal sent
            with lock:
                sent += 1
                if sent == 3:
                    loop.call_soon_threadsafe(scope.cancel)

        events = fs.fs.s3.meta.events
        events.register("before-send.s3.GetObject", counting)
        try:
            with anyio.fail_after(60):
                await fs.read_many(targets, 10)
        finally:
            events.unregister("before-send.s3.GetObject", counting)
    assert scope.cancelled_caught
    with lock:
        stopped_at = sent
    # Every GET in flight when the caller was cancelled may have gone out, none after.
    assert stopped_at <= 3 + READS_IN_FLIGHT < count
    assert (await fs.read_many(targets[-1:], 10)) == [b"x\n"]  # the provider still works
