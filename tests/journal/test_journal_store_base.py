"""The store base every backend shares (providers/_journal_store.py): the capture a provider
is handed is the store's own, already told who makes the change; a change's kind is one
explicit value, and records written with the older flags read back as the same kind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dsh_fs import Workspace
from dsh_fs.fs import ChangeKind, FsChangeMeta
from dsh_fs.providers import LocalJournalStore, SandboxFileSystem

pytestmark = pytest.mark.anyio


async def test_a_capture_from_the_store_records_its_author_without_asking_anyone_above(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    fs = SandboxFileSystem([str(root)])
    store = LocalJournalStore(str(tmp_path / "store"), fs.roots[0])
    try:
        capture = store.capture(FsChangeMeta(tool="write", session="the-author"))
        await fs.write_text(await fs.resolve("a.txt"), "one\n", capture=capture)
        entries, problems = store.entries()
    finally:
        store.close()
    assert problems == []
    assert [(e.tool, e.session, e.rel, e.kind) for e in entries] == [
        ("write", "the-author", "a.txt", ChangeKind.FILE)
    ]


async def test_mkdir_is_a_directory_change_and_an_older_record_with_the_flag_reads_the_same(
    tmp_path: Path,
) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        assert not (await s.call("mkdir", {"path": "sub"})).is_error
        (entry,) = await ws.journal.entries()
        assert (entry.kind, entry.directory, entry.link) == (ChangeKind.DIRECTORY, True, False)
        (sub,) = [p for p in store.iterdir() if p.is_dir()]
        (record_file,) = [p for p in sub.iterdir() if p.suffix == ".json"]
        record = json.loads(record_file.read_text(encoding="utf-8"))
        assert record["kind"] == "directory"
        del record["kind"]
        record["directory"] = True  # as the first release wrote it
        record_file.write_text(json.dumps(record), encoding="utf-8")
        (older,) = await ws.journal.entries()
        assert older.kind is ChangeKind.DIRECTORY
        record["kind"] = "socket"
        record_file.write_text(json.dumps(record), encoding="utf-8")
        assert await ws.journal.entries() == []
        _, problems = await ws.journal.read()
        assert [p.reason for p in problems] == ["kind 'socket' is not a change kind"]
