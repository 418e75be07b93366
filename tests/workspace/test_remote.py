"""`Workspace.remote`: the tools through `Session.call` on S3 (moto on loopback) and memory,
with the observation policy — the model-facing behaviour is the one it has on a local disk."""

from __future__ import annotations

import uuid

import pytest

from dsh_fs import Workspace
from dsh_fs.fs import WrapperFileSystem
from dsh_fs.providers import FsspecFileSystem
from tests.s3_server import S3Server, shared_server

pytestmark = pytest.mark.anyio


@pytest.fixture
def s3() -> S3Server:
    return shared_server()


@pytest.fixture
def bucket(s3: S3Server) -> str:
    return s3.new_bucket()


def remote(s3: S3Server, bucket: str, *, policy: bool = True) -> Workspace:
    return Workspace.remote(f"s3://{bucket}/repo", policy=policy, **s3.storage_options())


def stored(s3: S3Server, bucket: str, key: str) -> bytes:
    data: bytes = s3.client().get_object(Bucket=bucket, Key=key)["Body"].read()
    return data


async def test_read_write_and_edit_through_a_session_on_s3(s3: S3Server, bucket: str) -> None:
    url = f"s3://{bucket}/repo/src/app.py"
    async with remote(s3, bucket) as workspace:
        assert isinstance(workspace.fs, WrapperFileSystem)
        assert isinstance(workspace.fs.wrapped, FsspecFileSystem)
        assert workspace.cwd == f"s3://{bucket}/repo"
        session = workspace.session()
        write = await session.call("write", {"file_path": "src/app.py", "content": "x = 1\n"})
        assert write.text == (
            f"<path>{url}</path>\n<type>file</type>\n<content>\nCreated file\n</content>"
        )
        edit = await session.call(
            "edit", {"file_path": url, "old_string": "x = 1", "new_string": "x = 2"}
        )
        assert edit.text == f"The file {url} has been updated successfully."
        read = await session.call("read", {"file_path": "/src/app.py"})
        assert read.text == (
            f"<path>{url}</path>\n<type>file</type>\n<content>\n1: x = 2\n\n"
            "(End of file - total 1 lines)\n</content>"
        )
    assert stored(s3, bucket, "repo/src/app.py") == b"x = 2\n"


async def test_edit_after_an_out_of_band_change_is_stale_with_the_remedy(
    s3: S3Server, bucket: str
) -> None:
    s3.client().put_object(Bucket=bucket, Key="repo/a.py", Body=b"x = 1\n")
    async with remote(s3, bucket) as workspace:
        session = workspace.session()
        read = await session.call("read", {"file_path": "a.py"})
        assert not read.is_error, read.text
        s3.client().put_object(Bucket=bucket, Key="repo/a.py", Body=b"x = 10\n")
        edit = await session.call(
            "edit", {"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 2"}
        )
        assert (edit.code, edit.text) == (
            "FS_STALE_VERSION",
            f'Error: cannot edit "s3://{bucket}/repo/a.py": file changed since it was read'
            " — re-read the file, then retry",
        )
        reread = await session.call("read", {"file_path": "a.py"})
        assert not reread.is_error, reread.text
        retry = await session.call(
            "edit", {"file_path": "a.py", "old_string": "x = 10", "new_string": "x = 2"}
        )
        assert not retry.is_error, retry.text
    assert stored(s3, bucket, "repo/a.py") == b"x = 2\n"


async def test_an_identical_out_of_band_rewrite_does_not_make_the_edit_stale(
    s3: S3Server, bucket: str
) -> None:
    s3.client().put_object(Bucket=bucket, Key="repo/a.py", Body=b"x = 1\n")
    async with remote(s3, bucket) as workspace:
        session = workspace.session()
        await session.call("read", {"file_path": "a.py"})
        s3.client().put_object(Bucket=bucket, Key="repo/a.py", Body=b"x = 1\n")
        edit = await session.call(
            "edit", {"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 2"}
        )
        assert not edit.is_error, edit.text


async def test_overwriting_an_unread_object_needs_a_read_first(s3: S3Server, bucket: str) -> None:
    s3.client().put_object(Bucket=bucket, Key="repo/a.py", Body=b"theirs\n")
    async with remote(s3, bucket) as workspace:
        write = await workspace.session().call("write", {"file_path": "a.py", "content": "x"})
    assert (write.code, write.text) == (
        "FS_NOT_OBSERVED",
        f'Error: cannot overwrite existing "s3://{bucket}/repo/a.py" without reading it first'
        " — read the file, then retry",
    )
    assert stored(s3, bucket, "repo/a.py") == b"theirs\n"


async def test_two_workspaces_on_one_prefix_never_lose_an_update(s3: S3Server, bucket: str) -> None:
    """Two workspaces share nothing but the bucket, like two processes: the second writer,
    whose read predates the first one's write, is refused by S3's If-Match."""
    s3.client().put_object(Bucket=bucket, Key="repo/a.py", Body=b"v0\n")
    async with remote(s3, bucket) as first, remote(s3, bucket) as second:
        one, two = first.session(), second.session()
        assert not (await one.call("read", {"file_path": "a.py"})).is_error
        assert not (await two.call("read", {"file_path": "a.py"})).is_error
        won = await one.call("write", {"file_path": "a.py", "content": "one\n"})
        lost = await two.call("write", {"file_path": "a.py", "content": "two\n"})
    assert not won.is_error, won.text
    assert lost.code == "FS_STALE_VERSION"
    assert stored(s3, bucket, "repo/a.py") == b"one\n"


async def test_a_path_outside_the_root_is_refused(s3: S3Server, bucket: str) -> None:
    async with remote(s3, bucket) as workspace:
        result = await workspace.session().call("read", {"file_path": "../secrets.txt"})
    assert result.code == "FS_SANDBOX_DENIED"
    assert f"outside the workspace root s3://{bucket}/repo" in result.text


async def test_a_memory_workspace_behaves_the_same(s3: S3Server) -> None:
    url = f"memory://ws-{uuid.uuid4().hex}"
    async with Workspace.remote(url) as workspace:
        session = workspace.session()
        await session.call("write", {"file_path": "a.txt", "content": "alpha\n"})
        edit = await session.call(
            "edit", {"file_path": "a.txt", "old_string": "alpha", "new_string": "beta"}
        )
        assert edit.text == f"The file {url}/a.txt has been updated successfully."
        assert isinstance(workspace.fs, WrapperFileSystem)
        workspace.fs.wrapped.fs.pipe_file(f"{url}/a.txt", b"gamma\n")  # type: ignore[attr-defined]
        stale = await session.call(
            "edit", {"file_path": "a.txt", "old_string": "beta", "new_string": "delta"}
        )
    assert stale.code == "FS_STALE_VERSION"
