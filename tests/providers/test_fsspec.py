"""`FsspecFileSystem` facts beyond the conformance suite: URLs, the root fence, versions per
storage family, and S3 conditional writes holding between independent providers."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import CreateIfAbsent, FsEditRequest, FsFileType, FsVersion, ReplaceIfVersion
from dsh_fs.providers import FsspecFileSystem
from dsh_fs.providers.fsspec import _filesystem as _fsspec
from tests.s3_server import S3Server, shared_server

pytestmark = pytest.mark.anyio


@pytest.fixture
def s3() -> S3Server:
    return shared_server()


@pytest.fixture
def bucket(s3: S3Server) -> str:
    return s3.new_bucket()


@pytest.fixture
async def memory() -> AsyncIterator[FsspecFileSystem]:
    fs = FsspecFileSystem.from_url(f"memory://ws-{uuid.uuid4().hex}")
    yield fs
    await fs.aclose()


def s3_provider(s3: S3Server, url: str) -> FsspecFileSystem:
    """A provider with its own s3fs client: as independent as another process's."""
    return FsspecFileSystem.from_url(url, **s3.storage_options(independent=True))


def edit(old: str, new: str) -> FsEditRequest:
    return FsEditRequest(old_string=old, new_string=new)


# --- paths -------------------------------------------------------------------------------------


async def test_display_paths_are_urls_under_the_root(s3: S3Server, bucket: str) -> None:
    fs = s3_provider(s3, f"s3://{bucket}/ws/")
    assert fs.root == f"s3://{bucket}/ws"
    expected = f"s3://{bucket}/ws/src/a.py"
    for spelling, cwd in [
        ("src/a.py", None),
        ("a.py", f"s3://{bucket}/ws/src"),
        ("a.py", "/src"),
        ("/src/a.py", "/elsewhere"),
        (f"s3://{bucket}/ws/src/a.py", None),
        (f"s3://{bucket}/ws/lib/../src/./a.py", None),
    ]:
        target = await fs.resolve(spelling, cwd)
        assert (target.display_path, target.target_key) == (expected, expected), spelling
    assert await fs.file_url(await fs.resolve("src/a.py")) == expected


async def test_root_relative_absolute_paths_act_like_a_chroot(memory: FsspecFileSystem) -> None:
    target = await memory.resolve("/docs/readme.md")
    assert target.display_path == f"{memory.root}/docs/readme.md"


@pytest.mark.parametrize(
    "path", ["../x.py", "/../x.py", "src/../../x.py", "a/../../ws/x.py", "/a/b/../../../x"]
)
async def test_dot_dot_above_the_root_is_refused(memory: FsspecFileSystem, path: str) -> None:
    with pytest.raises(FsError) as info:
        await memory.resolve(path)
    assert info.value.code is FsErrorCode.SANDBOX_DENIED
    assert info.value.message == (
        f'cannot access "{path}": outside the workspace root {memory.root}'
    )


async def test_urls_outside_the_root_are_refused_by_component_not_prefix(
    s3: S3Server, bucket: str
) -> None:
    fs = s3_provider(s3, f"s3://{bucket}/ws")
    for url in [
        f"s3://{bucket}/ws-evil/a.py",
        f"s3://{bucket}/other/a.py",
        f"s3://{bucket}/ws/../other/a.py",
        "s3://another-bucket/ws/a.py",
        "file:///etc/passwd",
        "memory://ws/a.py",
    ]:
        with pytest.raises(FsError) as info:
            await fs.resolve(url)
        assert info.value.code is FsErrorCode.SANDBOX_DENIED, url


async def test_a_relative_cwd_cannot_smuggle_a_climb(memory: FsspecFileSystem) -> None:
    with pytest.raises(FsError) as info:
        await memory.resolve("a.py", cwd="../outside")
    assert info.value.code is FsErrorCode.SANDBOX_DENIED


# --- versions ----------------------------------------------------------------------------------


async def test_memory_detects_a_same_size_rewrite(memory: FsspecFileSystem) -> None:
    target = await memory.resolve("a.txt")
    first = await memory.write_text(target, "aaaa\n")
    memory.fs.pipe_file(memory.fs._strip_protocol(target.target_key), b"bbbb\n")
    info = await memory.stat(target)
    assert info is not None
    assert info.version != first.version
    with pytest.raises(FsError) as stale:
        await memory.edit_text(target, edit("bbbb", "cccc"), first.version)
    assert stale.value.code is FsErrorCode.STALE_VERSION


async def test_memory_rewrite_with_identical_bytes_is_not_stale(memory: FsspecFileSystem) -> None:
    target = await memory.resolve("a.txt")
    first = await memory.write_text(target, "same\n")
    memory.fs.pipe_file(memory.fs._strip_protocol(target.target_key), b"same\n")
    outcome = await memory.edit_text(target, edit("same", "new"), first.version)
    assert outcome.after == "new\n"


async def test_s3_version_is_the_etag_and_survives_an_identical_rewrite(
    s3: S3Server, bucket: str
) -> None:
    fs = s3_provider(s3, f"s3://{bucket}/ws")
    target = await fs.resolve("a.py")
    created = await fs.write_text(target, "x = 1\n", CreateIfAbsent())
    head = s3.client().head_object(Bucket=bucket, Key="ws/a.py")
    assert created.version == FsVersion("etag:" + head["ETag"])

    s3.client().put_object(Bucket=bucket, Key="ws/a.py", Body=b"x = 1\n")  # same bytes
    outcome = await fs.edit_text(target, edit("1", "2"), created.version)
    assert outcome.after == "x = 2\n"

    s3.client().put_object(Bucket=bucket, Key="ws/a.py", Body=b"x = 3\n")  # same size
    with pytest.raises(FsError) as stale:
        await fs.edit_text(target, edit("3", "4"), outcome.version)
    assert stale.value.code is FsErrorCode.STALE_VERSION


async def test_s3_versioned_bucket_identical_rewrite_is_not_stale(s3: S3Server) -> None:
    bucket = s3.new_bucket(versioned=True)
    fs = s3_provider(s3, f"s3://{bucket}/ws")
    target = await fs.resolve("a.py")
    created = await fs.write_text(target, "x = 1\n")
    s3.client().put_object(Bucket=bucket, Key="ws/a.py", Body=b"x = 1\n")  # new VersionId
    outcome = await fs.write_text(target, "x = 2\n", ReplaceIfVersion(created.version))
    assert outcome.before == "x = 1\n"


async def test_size_and_mtime_versions_fall_back_to_content_within_one_tick(
    tmp_path: Path,
) -> None:
    """file:// has only size + mtime; a same-size rewrite that keeps the mtime (a coarse
    clock) is still caught because the edit compares what it read with what it last saw."""
    fs = FsspecFileSystem.from_url(f"file://{tmp_path}")
    target = await fs.resolve("a.txt")
    await fs.write_text(target, "aaaa\n")
    assert await fs.read_text(target) == "aaaa\n"
    info = await fs.stat(target)
    assert info is not None
    path = tmp_path / "a.txt"
    stamp = path.stat()
    path.write_bytes(b"bbbb\n")
    os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    faked = await fs.stat(target)
    assert faked is not None
    assert faked.version == info.version  # the token alone cannot tell
    with pytest.raises(FsError) as stale:
        await fs.edit_text(target, edit("bbbb", "cccc"), info.version)
    assert stale.value.code is FsErrorCode.STALE_VERSION
    with pytest.raises(FsError) as stale_write:
        await fs.write_text(target, "dddd\n", ReplaceIfVersion(info.version))
    assert stale_write.value.code is FsErrorCode.STALE_VERSION
    assert path.read_bytes() == b"bbbb\n"


# --- guards across independent providers (two "processes") on S3 ---------------------------


async def test_only_s3_declares_cross_process_guards(
    memory: FsspecFileSystem, s3: S3Server, bucket: str
) -> None:
    assert s3_provider(s3, f"s3://{bucket}").capabilities.cross_process_guards
    assert not s3_provider(s3, f"s3://{bucket}").capabilities.directories
    assert not memory.capabilities.cross_process_guards


def rival_writes_before_put(
    fs: FsspecFileSystem, monkeypatch: pytest.MonkeyPatch, rival: Any
) -> None:
    """Make another writer publish right between `fs`'s read and its PUT: the provider's own
    check has passed by then, so only the storage service's precondition can refuse it."""
    client = fs.fs.s3
    put_object = client.put_object

    async def racing_put_object(**kwargs: Any) -> Any:
        rival()
        return await put_object(**kwargs)

    monkeypatch.setattr(client, "put_object", racing_put_object)


async def test_s3_if_match_refuses_a_replace_that_lost_the_race(
    s3: S3Server, bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fs = s3_provider(s3, f"s3://{bucket}/ws")
    target = await fs.resolve("a.py")
    created = await fs.write_text(target, "base\n")
    rivals = iter(range(100))

    def rival() -> None:
        body = f"rival {next(rivals)}\n".encode()
        s3.client().put_object(Bucket=bucket, Key="ws/a.py", Body=body)

    rival_writes_before_put(fs, monkeypatch, rival)
    with pytest.raises(FsError) as write:
        await fs.write_text(target, "mine\n", ReplaceIfVersion(created.version))
    assert (write.value.code, write.value.message) == (
        FsErrorCode.STALE_VERSION,
        f'cannot write "s3://{bucket}/ws/a.py": file changed since it was read',
    )
    with pytest.raises(FsError) as edited:
        await fs.edit_text(target, edit("rival", "mine"))  # unguarded: still no clobbering
    assert edited.value.code is FsErrorCode.STALE_VERSION
    assert s3.client().get_object(Bucket=bucket, Key="ws/a.py")["Body"].read() == b"rival 1\n"


async def test_s3_if_none_match_refuses_a_create_that_lost_the_race(
    s3: S3Server, bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fs = s3_provider(s3, f"s3://{bucket}/ws")
    await fs.stat(await fs.resolve("warm-up"))
    rival_writes_before_put(
        fs, monkeypatch, lambda: s3.client().put_object(Bucket=bucket, Key="ws/n.py", Body=b"rival")
    )
    with pytest.raises(FsError) as info:
        await fs.write_text(await fs.resolve("n.py"), "mine", CreateIfAbsent())
    assert (info.value.code, info.value.message) == (
        FsErrorCode.NOT_OBSERVED,
        f'cannot overwrite existing "s3://{bucket}/ws/n.py" without reading it first',
    )
    assert s3.client().get_object(Bucket=bucket, Key="ws/n.py")["Body"].read() == b"rival"


async def test_s3_replace_of_an_object_deleted_before_the_put_is_gone(
    s3: S3Server, bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fs = s3_provider(s3, f"s3://{bucket}/ws")
    target = await fs.resolve("a.py")
    created = await fs.write_text(target, "base\n")
    rival_writes_before_put(
        fs, monkeypatch, lambda: s3.client().delete_object(Bucket=bucket, Key="ws/a.py")
    )
    with pytest.raises(FsError) as info:
        await fs.edit_text(target, edit("base", "mine"), created.version)
    assert (
        info.value.message == f'cannot edit "s3://{bucket}/ws/a.py": file changed since it was read'
    )


async def test_s3_conditional_delete_refuses_an_object_replaced_after_the_check(
    s3: S3Server, bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fs = s3_provider(s3, f"s3://{bucket}/ws")
    target = await fs.resolve("a.py")
    created = await fs.write_text(target, "base\n")
    client = fs.fs.s3
    delete_object = client.delete_object

    async def racing_delete_object(**kwargs: Any) -> Any:
        s3.client().put_object(Bucket=bucket, Key="ws/a.py", Body=b"rival\n")
        return await delete_object(**kwargs)

    monkeypatch.setattr(client, "delete_object", racing_delete_object)
    with pytest.raises(FsError) as info:
        await fs.delete(target, created.version)
    assert (info.value.code, info.value.message) == (
        FsErrorCode.STALE_VERSION,
        f'cannot delete "s3://{bucket}/ws/a.py": file changed since it was read',
    )
    assert s3.client().get_object(Bucket=bucket, Key="ws/a.py")["Body"].read() == b"rival\n"


async def test_two_s3_providers_racing_settle_exactly_one_winner(s3: S3Server, bucket: str) -> None:
    url = f"s3://{bucket}/ws"
    racers = [s3_provider(s3, url), s3_provider(s3, url)]
    for round_ in range(10):
        name = f"r{round_}.py"
        results: list[FsError | None] = [None, None]

        async def attempt(
            results: list[FsError | None], i: int, fs: FsspecFileSystem, name: str
        ) -> None:
            try:
                await fs.write_text(await fs.resolve(name), f"{i}\n", CreateIfAbsent())
            except FsError as error:
                results[i] = error

        async with anyio.create_task_group() as tg:
            for i, fs in enumerate(racers):
                tg.start_soon(attempt, results, i, fs, name)
        assert sorted(str(r.code) if r else "won" for r in results) == ["FS_NOT_OBSERVED", "won"]

        info = await racers[0].stat(await racers[0].resolve(name))
        assert info is not None
        results = [None, None]

        async def replace(
            results: list[FsError | None], i: int, fs: FsspecFileSystem, name: str, v: FsVersion
        ) -> None:
            try:
                await fs.edit_text(await fs.resolve(name), edit("\n", f" {i}\n"), v)
            except FsError as error:
                results[i] = error

        async with anyio.create_task_group() as tg:
            for i, fs in enumerate(racers):
                tg.start_soon(replace, results, i, fs, name, info.version)
        assert sorted(str(r.code) if r else "won" for r in results) == ["FS_STALE_VERSION", "won"]


# --- reads, listings, errors ----------------------------------------------------------------


async def test_stream_text_yields_bounded_chunks(
    memory: FsspecFileSystem, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_fsspec, "STREAM_CHUNK_SIZE", 5)
    target = await memory.resolve("big.txt")
    text = "héllo wörld ✓\n" * 4
    await memory.write_text(target, text)
    async with memory.stream_text(target) as stream:
        chunks = [chunk async for chunk in stream]
    assert "".join(chunks) == text
    assert len(chunks) > 10


async def test_read_bytes_over_the_limit_is_too_large_on_s3(s3: S3Server, bucket: str) -> None:
    fs = s3_provider(s3, f"s3://{bucket}")
    target = await fs.resolve("blob.bin")
    s3.client().put_object(Bucket=bucket, Key="blob.bin", Body=b"\0" * 10)
    assert await fs.read_bytes(target, 10) == b"\0" * 10
    with pytest.raises(FsError) as info:
        await fs.read_bytes(target, 9)
    assert info.value.code is FsErrorCode.TOO_LARGE


async def test_s3_prefixes_list_as_directories_and_an_empty_root_lists_empty(
    s3: S3Server, bucket: str
) -> None:
    fs = s3_provider(s3, f"s3://{bucket}/ws")
    root = await fs.resolve("/")
    assert await fs.list_dir(root) == []
    root_info = await fs.stat(root)
    assert root_info is not None
    assert root_info.type is FsFileType.DIRECTORY
    await fs.write_text(await fs.resolve("pkg/mod.py"), "x\n")
    await fs.write_text(await fs.resolve("a.py"), "yy\n")
    listing = await fs.list_dir(root)
    assert [(e.name, e.type, e.size) for e in listing] == [
        ("a.py", FsFileType.FILE, 3),
        ("pkg", FsFileType.DIRECTORY, 0),
    ]
    with pytest.raises(FsError) as info:
        await fs.read_text(await fs.resolve("pkg"))
    assert info.value.code is FsErrorCode.NOT_REGULAR_FILE


async def test_a_missing_bucket_reads_as_not_found(s3: S3Server) -> None:
    fs = s3_provider(s3, "s3://no-such-bucket-dsh-fs/ws")
    target = await fs.resolve("a.py")
    with pytest.raises(FsError) as info:
        await fs.read_text(target)
    assert info.value.message == 'cannot read "s3://no-such-bucket-dsh-fs/ws/a.py": not found'


async def test_an_unreachable_endpoint_is_an_io_error(bucket: str) -> None:
    with anyio.fail_after(30):
        fs = FsspecFileSystem.from_url(
            f"s3://{bucket}",
            key="k",
            secret="s",
            endpoint_url="http://127.0.0.1:9",
            skip_instance_cache=True,
            config_kwargs={"retries": {"max_attempts": 1}, "connect_timeout": 1},
        )
        with pytest.raises(FsError) as info:
            await fs.read_text(await fs.resolve("a.py"))
    assert info.value.code is FsErrorCode.IO_ERROR


def test_an_async_mode_fsspec_instance_is_refused() -> None:
    import s3fs

    with pytest.raises(ValueError, match="asynchronous=False"):
        FsspecFileSystem(s3fs.S3FileSystem(asynchronous=True, skip_instance_cache=True), "s3://b")


# --- ranged reads and the versions they vouch for -------------------------------------------


async def test_s3_and_memory_vouch_for_the_version_their_ranged_reads_are_pinned_to(
    memory: FsspecFileSystem, s3: S3Server, bucket: str
) -> None:
    """S3 vouches because s3fs pins each ranged GET of an open file with ``If-Match``: if a
    new s3fs stops doing so, this fails rather than the line index serving stale lines."""
    for fs in (memory, s3_provider(s3, f"s3://{bucket}")):
        assert fs.capabilities.content_versions
        target = await fs.resolve("a.txt")
        await fs.write_text(target, "héllo\nwörld\n")
        info = await fs.stat(target)
        assert info is not None
        async with fs.stream_text_from(target, 7) as stream:
            assert [c.text async for c in stream] == ["wörld\n"]
            assert stream.version == info.version


async def test_an_s3_object_replaced_mid_stream_fails_the_read(
    s3: S3Server, bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_fsspec, "STREAM_CHUNK_SIZE", 1024)
    fs = s3_provider(s3, f"s3://{bucket}")
    target = await fs.resolve("big.txt")
    await fs.write_text(target, "x" * 10_000)

    async def read_while_replaced() -> None:
        async with fs.stream_text_from(target) as stream:
            async for _ in stream:
                s3.client().put_object(Bucket=bucket, Key="big.txt", Body=b"y" * 10_000)

    with pytest.raises(FsError) as failed:
        await read_while_replaced()
    assert failed.value.code is FsErrorCode.IO_ERROR


async def test_size_and_mtime_versions_are_never_vouched_for(tmp_path: Path) -> None:
    fs = FsspecFileSystem.from_url(f"file://{tmp_path}")
    assert not fs.capabilities.content_versions
    (tmp_path / "a.txt").write_bytes(b"abc\n")
    async with fs.stream_text_from(await fs.resolve("a.txt")) as stream:
        assert [c.text async for c in stream] == ["abc\n"]
        assert stream.version is None
