"""The change journal on remote storage (SPEC §9): the store beside the root on the same
storage, fenced out when it falls inside, refused when named inside; pre-images taken by a
server-side copy that moto's ignored conditions cannot fool; a writer killed around the
publication; a tampered record; a store that cannot keep the change."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
import uuid
from typing import Any

import pytest

from dsh_fs import Workspace
from dsh_fs.fs import FsChangeMeta, FsVersion
from dsh_fs.providers import FsspecFileSystem
from dsh_fs.providers._journal_records import new_entry_id
from tests.s3_server import S3Server, shared_server

pytestmark = pytest.mark.anyio


@pytest.fixture
def s3() -> S3Server:
    return shared_server()


def _keys(s3: S3Server, bucket: str, prefix: str = "") -> list[str]:
    out = s3.client().list_objects_v2(Bucket=bucket, Prefix=prefix)
    return sorted(o["Key"] for o in out.get("Contents", []))


def _get(s3: S3Server, bucket: str, key: str) -> bytes:
    data: bytes = s3.client().get_object(Bucket=bucket, Key=key)["Body"].read()
    return data


async def test_the_default_store_is_a_hidden_sibling_of_the_root_and_keeps_pre_images_there(
    s3: S3Server,
) -> None:
    bucket = s3.new_bucket()
    s3.client().put_object(Bucket=bucket, Key="ws/a.txt", Body=b"before\n")
    async with Workspace.remote(f"s3://{bucket}/ws", journal=True, **s3.storage_options()) as ws:
        assert ws.journal is not None
        assert ws.journal.location.startswith(f"s3://{bucket}/.dsh-fs-journal/")
        s = ws.session(label="agent")
        assert not (await s.call("read", {"file_path": "a.txt"})).is_error
        assert not (await s.call("write", {"file_path": "a.txt", "content": "after\n"})).is_error
        (entry,) = await ws.journal.entries()
        stored = _keys(s3, bucket, ".dsh-fs-journal/")
        assert [k.rsplit("/", 1)[1] for k in stored] == [
            entry.id + ".json",
            entry.id + ".pre",
            "root",
        ]
        assert _get(s3, bucket, stored[1]) == b"before\n"
        record = json.loads(_get(s3, bucket, stored[0]))
        assert (record["before"], record["after"]) == (entry.before, entry.after)
        assert _keys(s3, bucket, "ws/") == ["ws/a.txt"]


async def test_a_store_at_the_top_of_a_bucket_is_fenced_out_of_every_tool(s3: S3Server) -> None:
    bucket = s3.new_bucket()
    s3.client().put_object(Bucket=bucket, Key="f.txt", Body=b"needle\n")
    async with Workspace.remote(f"s3://{bucket}", journal=True, **s3.storage_options()) as ws:
        assert ws.journal is not None
        assert ws.journal.location.startswith(f"s3://{bucket}/.dsh-fs-journal/")
        s = ws.session(label="agent")
        await s.call("read", {"file_path": "f.txt"})
        assert not (await s.call("write", {"file_path": "f.txt", "content": "needle 2\n"})).is_error
        (pre,) = [k for k in _keys(s3, bucket, ".dsh-fs-journal/") if k.endswith(".pre")]
        read = await s.call("read", {"file_path": f"/{pre}"})
        assert read.code == "FS_SANDBOX_DENIED"
        write = await s.call("write", {"file_path": f"/{pre}", "content": "forged"})
        assert write.code == "FS_SANDBOX_DENIED"
        assert _get(s3, bucket, pre) == b"needle\n"
        listing = await s.call("list", {"path": "/"})
        assert ".dsh-fs-journal" not in listing.text
        assert "f.txt" in listing.text
        grep = await s.call("grep", {"pattern": "needle", "path": "/"})
        assert ".dsh-fs-journal" not in grep.text
        assert "f.txt" in grep.text
        glob = await s.call("glob", {"pattern": "**/*", "path": "/"})
        assert ".dsh-fs-journal" not in glob.text
        assert (await s.call("list", {"path": "/.dsh-fs-journal"})).code == "FS_SANDBOX_DENIED"


def test_a_named_store_inside_the_root_or_on_other_storage_is_refused_at_start() -> None:
    root = f"memory://named-{uuid.uuid4().hex}"
    with pytest.raises(ValueError, match="inside a served root"):
        Workspace.remote(root, journal=f"{root}/journal")
    with pytest.raises(ValueError, match="same storage"):
        Workspace.remote(root, journal="/tmp/local-journal")


async def test_a_store_named_elsewhere_on_the_storage_holds_the_entries(s3: S3Server) -> None:
    bucket, other = s3.new_bucket(), s3.new_bucket()
    options = s3.storage_options()
    async with Workspace.remote(f"s3://{bucket}/ws", journal=f"s3://{other}/j", **options) as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        assert not (await s.call("write", {"file_path": "a.txt", "content": "a\n"})).is_error
        assert [e.tool for e in await ws.journal.entries()] == ["write"]
        assert len(_keys(s3, other, "j/")) == 2  # root and the entry; no pre-image for a create
        assert [r.result for r in await ws.journal.undo(session="agent")] == ["undone"]
    assert _keys(s3, bucket) == []


async def test_a_store_that_cannot_keep_the_change_refuses_it_and_the_object_is_unchanged(
    s3: S3Server,
) -> None:
    bucket, other = s3.new_bucket(), s3.new_bucket()
    s3.client().put_object(Bucket=bucket, Key="ws/a.txt", Body=b"keep me\n")
    options = s3.storage_options()
    async with Workspace.remote(f"s3://{bucket}/ws", journal=f"s3://{other}/j", **options) as ws:
        s = ws.session(label="agent")
        await s.call("read", {"file_path": "a.txt"})
        for key in _keys(s3, other):
            s3.client().delete_object(Bucket=other, Key=key)
        s3.client().delete_bucket(Bucket=other)
        for tool, args in (
            ("write", {"file_path": "a.txt", "content": "changed\n"}),
            ("edit", {"file_path": "a.txt", "old_string": "keep", "new_string": "lose"}),
            ("delete", {"file_path": "a.txt"}),
            ("write", {"file_path": "b.txt", "content": "new\n"}),
        ):
            result = await s.call(tool, args)
            assert result.code == "FS_IO_ERROR", (tool, result.text)
            assert f"the change journal at s3://{other}/j/" in result.text
            assert "nothing was changed" in result.text
    assert _keys(s3, bucket) == ["ws/a.txt"]
    assert _get(s3, bucket, "ws/a.txt") == b"keep me\n"


async def test_a_tampered_record_cannot_make_an_undo_write_outside_the_root(s3: S3Server) -> None:
    bucket = s3.new_bucket()
    client = s3.client()
    client.put_object(Bucket=bucket, Key="ws/a.txt", Body=b"mine\n")
    client.put_object(Bucket=bucket, Key="other/precious.txt", Body=b"precious\n")
    async with Workspace.remote(f"s3://{bucket}/ws", journal=True, **s3.storage_options()) as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        await s.call("read", {"file_path": "a.txt"})
        await s.call("write", {"file_path": "a.txt", "content": "agent\n"})
        (key,) = [k for k in _keys(s3, bucket, ".dsh-fs-journal/") if k.endswith(".json")]
        record = json.loads(_get(s3, bucket, key))
        record["path"] = record["key"] = f"s3://{bucket}/other/precious.txt"
        client.put_object(Bucket=bucket, Key=key, Body=json.dumps(record).encode())
        # Its paths disagree: the record is damaged, reported and never applied.
        assert await ws.journal.undo(session="agent") == []
        _, problems = await ws.journal.read()
        assert [p.reason for p in problems] == ["path lies outside its root (its paths disagree)"]
    assert _get(s3, bucket, "other/precious.txt") == b"precious\n"


async def test_moto_ignores_the_copy_condition_so_the_copied_etag_is_checked(
    s3: S3Server,
) -> None:
    import s3fs

    from dsh_fs.providers.fsspec._s3 import S3Store

    bucket = s3.new_bucket()
    client = s3.client()
    old = client.put_object(Bucket=bucket, Key="a", Body=b"one")["ETag"]
    client.put_object(Bucket=bucket, Key="a", Body=b"two")
    # The service itself accepts a stale CopySourceIfMatch (real S3 answers 412)…
    client.copy_object(
        Bucket=bucket, Key="probe", CopySource={"Bucket": bucket, "Key": "a"}, CopySourceIfMatch=old
    )
    assert _get(s3, bucket, "probe") == b"two"
    # …so the store compares the copy's ETag with the version it was asked to keep.
    store = S3Store(s3fs.S3FileSystem(**s3.storage_options()))
    with pytest.raises(OSError, match="replaced while it was kept"):
        store.keep(f"{bucket}/a", f"{bucket}/kept", FsVersion("etag:" + old), None)
    assert "kept" not in _keys(s3, bucket)


async def test_two_independent_clients_append_to_one_store_and_see_each_others_entries(
    s3: S3Server,
) -> None:
    bucket = s3.new_bucket()
    url = f"s3://{bucket}/ws"
    async with (
        Workspace.remote(url, journal=True, **s3.storage_options()) as one,
        Workspace.remote(url, journal=True, **s3.storage_options()) as two,
    ):
        assert one.journal is not None
        assert two.journal is not None
        for n in range(3):
            await one.session(label="one").call("write", {"file_path": f"1-{n}", "content": "x"})
            await two.session(label="two").call("write", {"file_path": f"2-{n}", "content": "y"})
        ids = [e.id for e in await one.journal.entries()]
        assert len(ids) == len(set(ids)) == 6
        assert ids == [e.id for e in await two.journal.entries()]
        assert [r.result for r in await two.journal.undo(session="one")] == ["undone"] * 3
    assert _keys(s3, bucket, "ws/") == [f"ws/2-{n}" for n in range(3)]


async def test_a_pending_record_from_another_machine_is_left_alone_until_its_lease_ends(
    s3: S3Server,
) -> None:
    bucket = s3.new_bucket()
    client = s3.client()
    async with Workspace.remote(f"s3://{bucket}/ws", journal=True, **s3.storage_options()) as ws:
        assert ws.journal is not None
        prefix = ws.journal.location.split(f"s3://{bucket}/", 1)[1]
        young, _ = new_entry_id()  # now: a writer elsewhere may still be at work
        old = "20200101T000000.000000Z-0badc0de"
        for entry_id in (young, old):
            record = {
                "id": entry_id,
                "time": "2020-01-01T00:00:00.000000Z",
                "session": "elsewhere-1",
                "tool": "write",
                "path": f"s3://{bucket}/ws/x",
                "rel": "x",
                "key": f"s3://{bucket}/ws/x",
                "before": None,
                "after": None,
                "host": "another-machine",
                "pid": 1,
            }
            body = json.dumps(record).encode()
            client.put_object(Bucket=bucket, Key=f"{prefix}/{entry_id}.pending", Body=body)
        assert await ws.journal.entries() == []
        names = [k.rsplit("/", 1)[1] for k in _keys(s3, bucket, prefix + "/")]
        # The old one was settled (never published: x is absent as before), the young kept.
        assert names == [f"{young}.pending", "root"]


_CHILD = textwrap.dedent(
    """
    import json, os, sys, anyio
    from dsh_fs.fs import FsChangeMeta
    from dsh_fs.fs import FsCapture
    from dsh_fs.providers import FsspecFileSystem

    url, options, when = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]

    class Dying(FsCapture):
        def __init__(self, store, meta):
            self.inner = store.capture(meta)

        def abandon(self, ticket):
            self.inner.abandon(ticket)

        def prepare(self, start):
            ticket = self.inner.prepare(start)
            if when == "before":
                os._exit(9)
            return ticket

        def commit(self, ticket, after, content, digest=None):
            os._exit(9)

    async def main():
        fs = FsspecFileSystem.from_url(url, **options)
        capture = Dying(fs.journal_store(), FsChangeMeta(tool="write", session="child"))
        target = await fs.resolve("a.txt")
        await fs.write_text(target, "after\\n", capture=capture)

    anyio.run(main)
    """
)


def _run_child(url: str, options: dict[str, Any], when: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, url, json.dumps(options), when],
        check=False,
        timeout=120,
        env={**os.environ},
    )
    assert done.returncode == 9


async def test_a_writer_killed_after_publishing_leaves_an_entry_that_undoes_to_the_prior_bytes(
    s3: S3Server,
) -> None:
    bucket = s3.new_bucket()
    s3.client().put_object(Bucket=bucket, Key="ws/a.txt", Body=b"before\r\n\x00binary too")
    options = s3.storage_options()
    _run_child(f"s3://{bucket}/ws", options, "after")
    assert _get(s3, bucket, "ws/a.txt") == b"after\n"
    async with Workspace.remote(f"s3://{bucket}/ws", journal=True, **options) as ws:
        assert ws.journal is not None
        (entry,) = await ws.journal.entries()
        assert entry.undoable
        assert entry.after is not None
        # Completed as its commit would have: the digest of what it published.
        assert entry.digest == hashlib.sha256(b"after\n").hexdigest()
        assert [r.result for r in await ws.journal.undo(ids=[entry.id])] == ["undone"]
    assert _get(s3, bucket, "ws/a.txt") == b"before\r\n\x00binary too"


async def test_a_writer_killed_before_publishing_leaves_no_entry_and_no_stray(
    s3: S3Server,
) -> None:
    bucket = s3.new_bucket()
    s3.client().put_object(Bucket=bucket, Key="ws/a.txt", Body=b"before\n")
    options = s3.storage_options()
    _run_child(f"s3://{bucket}/ws", options, "before")
    assert _get(s3, bucket, "ws/a.txt") == b"before\n"
    async with Workspace.remote(f"s3://{bucket}/ws", journal=True, **options) as ws:
        assert ws.journal is not None
        assert await ws.journal.entries() == []
        stored = _keys(s3, bucket, ".dsh-fs-journal/")
        assert [k.rsplit("/", 1)[1] for k in stored] == ["root"]
    assert _keys(s3, bucket, "ws/") == ["ws/a.txt"]


def test_a_sync_workspace_on_memory_mirrors_entries_diff_and_undo() -> None:
    from dsh_fs.adapters import SyncWorkspace

    root = f"memory://sync-{uuid.uuid4().hex}"
    with SyncWorkspace.remote(root, journal=True) as ws:
        assert ws.journal is not None
        ws.session(label="sync").call("write", {"file_path": "a.txt", "content": "a\n"})
        (entry,) = ws.journal.entries()
        assert ws.journal.diff(entry.id).startswith("--- /dev/null\n+++ b/a.txt\n")
        assert [r.result for r in ws.journal.undo(session="sync")] == ["undone"]


async def test_moto_enforces_the_conditions_an_undo_publishes_with(s3: S3Server) -> None:
    import s3fs
    from botocore.exceptions import ClientError

    from dsh_fs.providers.fsspec._s3 import S3Store

    bucket = s3.new_bucket()
    client = s3.client()
    old = FsVersion("etag:" + client.put_object(Bucket=bucket, Key="a", Body=b"one")["ETag"])
    client.put_object(Bucket=bucket, Key="a", Body=b"two")
    store = S3Store(s3fs.S3FileSystem(**s3.storage_options()))
    attempts = (
        lambda: store.put(f"{bucket}/a", b"restored", if_match=old),  # undo of an update
        lambda: store.put(f"{bucket}/a", b"restored", if_absent=True),  # undo of a delete
        lambda: store.delete(f"{bucket}/a", if_match=old),  # undo of a create
    )
    for attempt in attempts:
        with pytest.raises(ClientError) as info:
            attempt()
        assert info.value.response["Error"]["Code"] == "PreconditionFailed"
    assert _get(s3, bucket, "a") == b"two"


async def test_a_truncated_record_is_reported_and_the_others_still_list(s3: S3Server) -> None:
    bucket = s3.new_bucket()
    async with Workspace.remote(f"s3://{bucket}/ws", journal=True, **s3.storage_options()) as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        await s.call("write", {"file_path": "a.txt", "content": "a\n"})
        await s.call("write", {"file_path": "b.txt", "content": "b\n"})
        assert len(await ws.journal.entries()) == 2  # both read (and remembered) once
        first, second = [k for k in _keys(s3, bucket, ".dsh-fs-journal/") if k.endswith(".json")]
        s3.client().put_object(Bucket=bucket, Key=first, Body=_get(s3, bucket, first)[:20])
        entries, problems = await ws.journal.read()
        assert [e.id + ".json" for e in entries] == [second.rsplit("/", 1)[1]]
        assert [p.name for p in problems] == [first.rsplit("/", 1)[1]]
        assert "JSON" in problems[0].reason


async def test_a_root_at_the_top_of_the_storage_keeps_the_store_inside_and_fenced() -> None:
    async with Workspace.remote("memory://", journal=True) as ws:
        assert ws.journal is not None
        assert ws.journal.location.startswith("memory://.dsh-fs-journal/")
        s = ws.session(label="top")
        name = f"/top-{uuid.uuid4().hex}.txt"
        assert not (await s.call("write", {"file_path": name, "content": "x"})).is_error
        assert ".dsh-fs-journal" not in (await s.call("list", {"path": "/"})).text
        denied = await s.call("read", {"file_path": "/.dsh-fs-journal/root"})
        assert denied.code == "FS_SANDBOX_DENIED"
        assert [r.result for r in await ws.journal.undo(session="top")] == ["undone"]


async def test_a_fresh_reader_of_a_journal_on_s3_gets_each_record_once_and_asks_no_sizes(
    s3: S3Server,
) -> None:
    bucket = s3.new_bucket()
    url = f"s3://{bucket}/ws"
    async with Workspace.remote(url, journal=True, **s3.storage_options()) as ws:
        for n in range(40):
            await ws.session(label="w").call("write", {"file_path": f"f{n}", "content": "x"})
    # Another process (`dsh-fs log`): nothing read before. One listing and a GET per
    # record, no HEAD each (s3fs's `cat` asks every object's size first): a 1,000-entry
    # `log` made 2,009 requests that way, 1,010 now.
    async with Workspace.remote(url, journal=True, **s3.storage_options()) as fresh:
        assert fresh.journal is not None
        with s3.counting() as seen:
            entries = await fresh.journal.entries()
    assert len(entries) == 40
    records = [r for r in seen if r.startswith("GET ") and r.endswith(".json")]
    assert len(records) == 40, seen
    assert not [r for r in seen if r.startswith("HEAD ")], seen
    assert len(seen) <= 40 + 2, seen


async def _write_later(url: str, options: dict[str, Any]) -> tuple[list[Any], list[str]]:
    """A later journaled write of a.txt by a writer that opens no workspace (so nobody
    settled the dead writer's record first): the store's entries then, and its names."""
    fs = FsspecFileSystem.from_url(url, **options)
    store = fs.journal_store()
    target = await fs.resolve("a.txt")
    meta = FsChangeMeta(tool="write", session="later")
    await fs.write_text(target, "later\n", None, capture=store.capture(meta))
    entries, problems = store.entries()
    assert problems == []
    prefix = store.location.split("://", 1)[1]
    names = sorted(p.rsplit("/", 1)[1] for p in fs.fs.find(prefix))
    return entries, names


async def test_a_writer_killed_before_publishing_on_s3_is_no_entry_though_its_file_changed_later(
    s3: S3Server,
) -> None:
    bucket = s3.new_bucket()
    s3.client().put_object(Bucket=bucket, Key="ws/a.txt", Body=b"before\n")
    options = s3.storage_options()
    _run_child(f"s3://{bucket}/ws", options, "before")
    entries, names = await _write_later(f"s3://{bucket}/ws", options)
    # The later change found the file at the dead change's `before`: that one was never
    # published (else it would be an entry whose undo wipes the later change).
    assert [(e.session, e.before != e.after) for e in entries] == [("later", True)]
    assert names == [f"{entries[0].id}.json", f"{entries[0].id}.pre", "root"]
    assert _get(s3, bucket, "ws/a.txt") == b"later\n"


async def test_a_dead_record_on_memory_is_no_entry_though_its_file_changed_later() -> None:
    url = f"memory://dead-{uuid.uuid4().hex}"
    fs = FsspecFileSystem.from_url(url)
    target = await fs.resolve("a.txt")
    await fs.write_text(target, "before\n", None)
    info = await fs.stat(target)
    assert info is not None
    store = fs.journal_store()
    prefix = store.location.split("://", 1)[1]
    # What a writer on another machine left, long past its lease: its pending record and
    # pre-image, the file still at its `before` when it died.
    dead = "20200101T000000.000000Z-0badc0de"
    record = {
        "id": dead,
        "time": "2020-01-01T00:00:00.000000Z",
        "session": "dead",
        "tool": "write",
        "path": target.display_path,
        "rel": "a.txt",
        "key": str(target.target_key),
        "before": info.version,
        "after": None,
        "size": info.size,
        "kept": True,
        "host": "another-machine",
        "pid": 1,
    }
    fs.fs.pipe(f"{prefix}/{dead}.pending", json.dumps(record).encode())
    fs.fs.pipe(f"{prefix}/{dead}.pre", b"before\n")
    entries, names = await _write_later(url, {})
    assert [(e.session, e.before != e.after) for e in entries] == [("later", True)]
    assert names == [f"{entries[0].id}.json", f"{entries[0].id}.pre", "root"]
