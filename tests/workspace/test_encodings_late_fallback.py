"""A streamed file whose first chunks are valid UTF-8 and a later one is not (SPEC §12): with
a fallback codec declared it is read, windowed and edited in the codec that proves the whole
file, on a local disk, on S3 (moto) and in fsspec memory; a UTF-8 file stays UTF-8 and a
file no codec proves stays `FS_NOT_TEXT`."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import pytest

from dsh_fs import Workspace
from dsh_fs.workspace import Session
from tests.s3_server import S3Server, shared_server

pytestmark = pytest.mark.anyio

LINES = 300_000
"""About 7.5 MB: past the local stream's 256 KiB chunk and the remote one's 4 MiB."""

Store = Callable[[str, bytes], None]
Load = Callable[[str], bytes]
Opened = tuple[Session, Store, Load]


def _late(tail: str, codec: str = "cp1252") -> tuple[list[str], bytes]:
    """ASCII lines, then (far past the first chunk) `tail` in `codec`: no UTF-8."""
    lines = [f"{n:07d} plain ascii line" for n in range(LINES)] + [tail]
    raw = ("\n".join(lines[:-1]) + "\n").encode("ascii") + (tail + "\n").encode(codec)
    return lines, raw


@asynccontextmanager
async def _local(root: Path, fallback: list[str]) -> AsyncIterator[Opened]:
    def store(name: str, data: bytes) -> None:
        (root / name).write_bytes(data)

    async with Workspace.local(root, encoding_fallback=fallback) as workspace:
        yield workspace.session(), store, lambda name: (root / name).read_bytes()


@asynccontextmanager
async def _memory(fallback: list[str]) -> AsyncIterator[Opened]:
    from fsspec.implementations.memory import MemoryFileSystem

    top = f"/late-{uuid.uuid4().hex}"
    memory = MemoryFileSystem()
    memory.mkdir(top)
    try:
        async with Workspace.remote(f"memory://{top}", encoding_fallback=fallback) as workspace:
            yield (
                workspace.session(),
                lambda name, data: memory.pipe(f"{top}/{name}", data),
                lambda name: bytes(memory.cat(f"{top}/{name}")),
            )
    finally:
        memory.rm(top, recursive=True)


@asynccontextmanager
async def _s3(server: S3Server, fallback: list[str]) -> AsyncIterator[Opened]:
    bucket = server.new_bucket()
    client = server.client()

    def store(name: str, data: bytes) -> None:
        client.put_object(Bucket=bucket, Key=f"repo/{name}", Body=data)

    def load(name: str) -> bytes:
        data: bytes = client.get_object(Bucket=bucket, Key=f"repo/{name}")["Body"].read()
        return data

    options = server.storage_options()
    async with Workspace.remote(
        f"s3://{bucket}/repo", encoding_fallback=fallback, **options
    ) as workspace:
        yield workspace.session(), store, load


@pytest.fixture(params=["local", "memory", "s3"])
def opened(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Callable[[list[str]], AbstractAsyncContextManager[Opened]]:
    if request.param == "local":
        return lambda fallback: _local(tmp_path, fallback)
    if request.param == "memory":
        return _memory
    server = shared_server()
    return lambda fallback: _s3(server, fallback)


async def test_a_late_byte_no_utf8_has_the_whole_file_read_and_edited_in_the_fallback(
    opened: Callable[[list[str]], AbstractAsyncContextManager[Opened]],
) -> None:
    lines, raw = _late("café crème – fin")
    async with opened(["cp1252"]) as (session, store, load):
        store("late.txt", raw)
        first = await session.call("read", {"file_path": "late.txt", "offset": 1, "limit": 2})
        last = await session.call("read", {"file_path": "late.txt", "offset": LINES, "limit": 5})
        edit = await session.call(
            "edit",
            {"file_path": "late.txt", "old_string": "crème – fin", "new_string": "brûlée"},
        )
        assert not edit.is_error, edit.text
        assert load("late.txt") == raw.replace("crème – fin".encode("cp1252"), b"br\xfbl\xe9e")
        edited = await session.call("read", {"file_path": "late.txt", "offset": LINES + 1})
    assert first.value is not None, first.text
    assert last.value is not None, last.text
    assert edited.value is not None, edited.text
    assert first.value["encoding"] == last.value["encoding"] == "cp1252"
    assert [line["text"] for line in first.value["lines"]] == lines[:2]
    assert [line["text"] for line in last.value["lines"]] == lines[LINES - 1 :]
    assert [line["text"] for line in edited.value["lines"]] == ["café brûlée"]
    assert (edited.value["total_lines"], edited.value["encoding"]) == (LINES + 1, "cp1252")


async def test_a_late_byte_is_decided_among_several_fallbacks_by_the_whole_file(
    opened: Callable[[list[str]], AbstractAsyncContextManager[Opened]],
) -> None:
    # 0x81 is no cp1252 character (Ѓ in cp1251): of the two, only cp1251 proves the file.
    lines, raw = _late("\x81 only cp1251".encode("latin-1").decode("cp1251"), "cp1251")
    async with opened(["cp1252", "cp1251"]) as (session, store, _):
        store("late.txt", raw)
        last = await session.call("read", {"file_path": "late.txt", "offset": LINES})
    assert last.value is not None, last.text
    assert last.value["encoding"] == "cp1251"
    assert [line["text"] for line in last.value["lines"]] == lines[LINES - 1 :]


async def test_a_large_utf8_file_with_fallbacks_stays_utf8_and_a_file_none_proves_is_not_text(
    opened: Callable[[list[str]], AbstractAsyncContextManager[Opened]],
) -> None:
    lines = [f"{n:07d} grüße, ünïcödé" for n in range(LINES)]
    utf8 = ("\n".join(lines) + "\n").encode()
    _, neither = _late("\x81\x98 in no fallback", "latin-1")
    async with opened(["cp1252"]) as (session, store, _):
        store("utf8.txt", utf8)
        store("neither.txt", neither)
        read = await session.call("read", {"file_path": "utf8.txt", "offset": LINES - 1})
        refused = await session.call("read", {"file_path": "neither.txt", "limit": 1})
    assert read.value is not None, read.text
    assert read.value["encoding"] == "utf-8"
    assert [line["text"] for line in read.value["lines"]] == lines[LINES - 2 :]
    assert refused.code == "FS_NOT_TEXT"


async def test_a_utf8_prefix_that_is_not_ascii_is_read_in_the_fallback_when_a_later_byte_decides(
    tmp_path: Path,
) -> None:
    # "Ã©" in cp1252 is the UTF-8 of "é": the first chunk is valid UTF-8 with other text.
    head = [f"{n:07d} cafÃ©" for n in range(60_000)]
    raw = ("\n".join(head) + "\nfin \xe9\n").encode("cp1252")
    (tmp_path / "mixed.txt").write_bytes(raw)
    async with _local(tmp_path, ["cp1252"]) as (session, _, _):
        first = await session.call("read", {"file_path": "mixed.txt", "limit": 1})
    assert first.value is not None, first.text
    assert (first.value["encoding"], first.value["lines"][0]["text"]) == ("cp1252", head[0])
