"""`edit_files` on S3 (SPEC §13), against the moto server on loopback: a set lands whole
and leaves no intent record; a file another client changes between staging and publication
rolls the set back; a set whose writer died mid-publication is rolled back (conditional
PUTs) by the next workspace on the root."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from dsh_fs import Workspace
from dsh_fs.fs import (
    FsCapture,
    FsTarget,
    FsWriteOutcome,
    SetFileRecord,
    SetRecord,
    WrapperFileSystem,
    WriteGuard,
)
from dsh_fs.providers import FsspecFileSystem
from dsh_fs.providers.fsspec import _set_records
from tests.s3_server import S3Server, shared_server

pytestmark = pytest.mark.anyio

NAMES = ("a.py", "b.py", "c.py")
OLD = {name: f"def {name[0]}():\n    return old_name\n" for name in NAMES}
NEW = {name: text.replace("old_name", "new_name") for name, text in OLD.items()}


def file_record(*, path: str, before: str | None, after: str | None) -> SetFileRecord:
    """A file of an intent record: its old text, the digest of `after`."""
    digest = None if after is None else SetFileRecord.digest(after)
    return SetFileRecord(path=path, before=before, after=digest)


@pytest.fixture
def s3() -> S3Server:
    return shared_server()


def put(s3: S3Server, bucket: str, key: str, text: str) -> None:
    s3.client().put_object(Bucket=bucket, Key=key, Body=text.encode())


def get(s3: S3Server, bucket: str, key: str) -> str:
    data: bytes = s3.client().get_object(Bucket=bucket, Key=key)["Body"].read()
    return data.decode()


def keys(s3: S3Server, bucket: str, prefix: str) -> list[str]:
    out = s3.client().list_objects_v2(Bucket=bucket, Prefix=prefix)
    return sorted(item["Key"] for item in out.get("Contents", []))


def files(s3: S3Server, bucket: str) -> dict[str, str]:
    return {name: get(s3, bucket, f"ws/{name}") for name in NAMES}


def rename_all() -> dict[str, Any]:
    edits = [{"file_path": n, "old_string": "old_name", "new_string": "new_name"} for n in NAMES]
    return {"edits": edits}


async def test_a_set_over_three_objects_lands_whole_and_leaves_no_intent_record(
    s3: S3Server,
) -> None:
    bucket = s3.new_bucket()
    for name in NAMES:
        put(s3, bucket, f"ws/{name}", OLD[name])
    async with Workspace.remote(f"s3://{bucket}/ws", **s3.storage_options()) as workspace:
        session = workspace.session()
        for name in NAMES:
            assert not (await session.call("read", {"file_path": name})).is_error
        result = await session.call("edit_files", rename_all())
        assert not result.is_error, result.text
    assert files(s3, bucket) == NEW
    assert keys(s3, bucket, ".dsh-fs-sets/") == []


class BeforePublication(WrapperFileSystem):
    """Runs `hook` once right before the first write (every edit staged, none published)."""

    def __init__(self, wrapped: FsspecFileSystem, hook: Callable[[], Awaitable[None]]) -> None:
        super().__init__(wrapped)
        self.hook: Callable[[], Awaitable[None]] | None = hook

    async def write_text(
        self,
        target: FsTarget,
        content: str,
        expected: WriteGuard | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsWriteOutcome:
        hook, self.hook = self.hook, None
        if hook is not None:
            await hook()
        return await super().write_text(target, content, expected, capture=capture)


@pytest.mark.parametrize("position", [2, 3])
async def test_an_object_changed_by_another_client_mid_set_rolls_the_set_back(
    s3: S3Server, position: int
) -> None:
    bucket = s3.new_bucket()
    for name in NAMES:
        put(s3, bucket, f"ws/{name}", OLD[name])
    changed = NAMES[position - 1]

    async def writer() -> None:
        put(s3, bucket, f"ws/{changed}", "theirs\n")

    provider = FsspecFileSystem.from_url(f"s3://{bucket}/ws", **s3.storage_options())
    workspace = Workspace(
        BeforePublication(provider, writer),
        cwd=provider.root,
        set_records=provider.set_records(),
    )
    try:
        session = workspace.session()
        for name in NAMES:
            assert not (await session.call("read", {"file_path": name})).is_error
        result = await session.call("edit_files", rename_all())
        assert result.code == "FS_STALE_VERSION", result.text
        assert result.text.startswith(f'Error: edit {position} of 3 ("s3://{bucket}/ws/{changed}")')
    finally:
        await workspace.aclose()
    assert files(s3, bucket) == {**OLD, changed: "theirs\n"}
    assert keys(s3, bucket, ".dsh-fs-sets/") == []


async def test_a_set_whose_writer_died_mid_publication_is_rolled_back_by_the_next_start(
    s3: S3Server,
) -> None:
    bucket = s3.new_bucket()
    url = f"s3://{bucket}/ws"
    for name in NAMES:
        put(s3, bucket, f"ws/{name}", OLD[name])
    dead = FsspecFileSystem.from_url(url, **s3.storage_options())
    records = dead.set_records()
    await records.begin(
        SetRecord(
            id="set-dead",
            files=tuple(
                file_record(path=f"{url}/{name}", before=OLD[name], after=NEW[name])
                for name in NAMES
            ),
        )
    )
    # The writer published the first file and died: its hold goes with it.
    put(s3, bucket, "ws/a.py", NEW["a.py"])
    _set_records._held.clear()
    (record,) = keys(s3, bucket, ".dsh-fs-sets/")
    assert record.endswith("/set-dead.set")
    async with Workspace.remote(url, **s3.storage_options()) as workspace:
        (recovery,) = workspace.recovered
    assert recovery.outcome == "rolled back"
    assert recovery.restored == (f"{url}/a.py",)
    assert files(s3, bucket) == OLD
    assert keys(s3, bucket, ".dsh-fs-sets/") == []
    await dead.aclose()


async def test_a_record_in_the_first_format_left_on_s3_is_rolled_back_by_the_next_start(
    s3: S3Server,
) -> None:
    # What a killed process of an older release left: its writer line, then one JSON object
    # with the old texts inline.
    bucket = s3.new_bucket()
    url = f"s3://{bucket}/ws"
    for name in NAMES:
        put(s3, bucket, f"ws/{name}", NEW[name] if name == "a.py" else OLD[name])
    writer = {"host": "elsewhere", "pid": 1, "started": None, "time_ns": 0}
    body = {
        "id": "set-0123456789abcdef",
        "files": [
            {
                "path": f"{url}/{name}",
                "before": OLD[name],
                "after": SetFileRecord.digest(NEW[name]),
            }
            for name in NAMES
        ],
    }
    provider = FsspecFileSystem.from_url(url, **s3.storage_options())
    place = provider.set_records().location.removeprefix(f"s3://{bucket}/")
    await provider.aclose()
    record = f"{json.dumps(writer)}\n{json.dumps(body)}"
    put(s3, bucket, f"{place}/set-0123456789abcdef.set", record)
    async with Workspace.remote(url, **s3.storage_options()) as workspace:
        (recovery,) = workspace.recovered
    assert recovery.outcome == "rolled back"
    assert recovery.restored == (f"{url}/a.py",)
    assert files(s3, bucket) == OLD
    assert keys(s3, bucket, ".dsh-fs-sets/") == []
