"""A store read again opens only the records that are new or changed since its last reading
(the review page polls a store of 10,000 entries; issue 38), and the records stay the truth:
a record rewritten, marked pruned or removed since reads as it is now."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from dsh_fs import Session, Workspace
from dsh_fs.journal import Journal
from dsh_fs.providers._journal_store import RecordStore, StoredName
from dsh_fs.providers.local import _journal_store as local_store

pytestmark = pytest.mark.anyio


@dataclass(frozen=True, slots=True, kw_only=True)
class Journaled:
    """A journaled workspace open for one test, with an agent's session in it."""

    journal: Journal
    """The workspace's journal."""
    backend: RecordStore
    """Its store."""
    session: Session
    """A session labelled ``agent``."""
    store: Path | None
    """The local store's directory (None for a remote store)."""

    async def write(self, name: str, content: str = "x\n") -> None:
        result = await self.session.call("write", {"file_path": name, "content": content})
        assert not result.is_error, result.text


def _journaled(ws: Workspace, store: Path | None) -> Journaled:
    assert ws.journal is not None
    backend = ws.journal.store
    assert isinstance(backend, RecordStore)
    return Journaled(
        journal=ws.journal, backend=backend, session=ws.session(label="agent"), store=store
    )


@pytest.fixture
async def local(tmp_path: Path) -> AsyncIterator[Journaled]:
    """A sandbox journaled in a local store of its own."""
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    async with Workspace.sandbox(root, journal=store) as ws:
        yield _journaled(ws, store)


@pytest.fixture
async def remote() -> AsyncIterator[Journaled]:
    """A root in fsspec's memory filesystem, journaled on the same storage."""
    async with Workspace.remote(f"memory://reading-{uuid.uuid4().hex}", journal=True) as ws:
        yield _journaled(ws, None)


def _count_reads(store: RecordStore) -> list[str]:
    """The names the store opens from now on, as it opens them (the instance's own method
    wrapped: the store itself does the reading)."""
    opened: list[str] = []
    read = store._read_records

    def counted(names: list[str], listed: dict[str, StoredName]) -> dict[str, Any]:
        opened.extend(names)
        return read(names, listed)

    store._read_records = counted  # type: ignore[method-assign]
    return opened


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every record counts as settled at once (no waiting out the clock's coarse tick):
    each test changes a record's stamp explicitly where it rewrites one."""
    monkeypatch.setattr(local_store, "_RACY_NS", 0)


@pytest.mark.usefixtures("settled")
async def test_a_local_store_read_again_opens_only_the_records_written_since(
    local: Journaled,
) -> None:
    for n in range(5):
        await local.write(f"f{n}.txt")
    opened = _count_reads(local.backend)
    first, _ = await local.journal.read()
    assert len(first) == 5
    assert len(opened) == 5
    again, _ = await local.journal.read()
    assert again == first
    assert len(opened) == 5
    await local.write("g.txt", "y\n")
    third, _ = await local.journal.read()
    assert [e.rel for e in third] == [*(f"f{n}.txt" for n in range(5)), "g.txt"]
    assert opened[5:] == [f"{third[-1].id}.json"]


@pytest.mark.usefixtures("settled")
async def test_a_record_rewritten_in_place_at_the_same_size_reads_as_it_is_now(
    local: Journaled,
) -> None:
    assert local.store is not None
    await local.write("a.txt")
    (entry,) = await local.journal.entries()
    (record_file,) = local.store.glob(f"*/{entry.id}.json")
    text = record_file.read_text(encoding="utf-8")
    tampered = text.replace('"agent', '"AGENT')
    assert len(tampered) == len(text)
    assert tampered != text
    info = record_file.stat()
    record_file.write_text(tampered, encoding="utf-8")  # the same inode, the same size
    os.utime(record_file, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000_000))
    (now,) = await local.journal.entries()
    assert now.session.startswith("AGENT")


async def test_a_record_changed_within_the_clock_tick_is_read_at_every_reading(
    local: Journaled,
) -> None:
    await local.write("a.txt")
    opened = _count_reads(local.backend)
    await local.journal.read()
    await local.journal.read()
    # Just written: its stamp could survive a same-size rewrite in the same tick.
    assert len(opened) == 2


@pytest.mark.usefixtures("settled")
async def test_a_pruned_or_removed_entry_reads_as_such_on_the_next_reading(
    local: Journaled,
) -> None:
    assert local.store is not None
    await local.write("a.txt", "one\n")
    await local.write("a.txt", "two\n")
    (first, second), _ = await local.journal.read()
    assert first.undoable
    assert second.undoable
    local.journal.max_age_seconds = 0  # the rewrite's pre-image goes; its record is marked
    assert await local.journal.prune() == 1
    left, problems = await local.journal.read()
    assert problems == []
    assert [entry.undoable for entry in left] == [True, False]
    for record_file in local.store.glob("*/*.json"):
        record_file.unlink()
    assert await local.journal.read() == ([], [])


async def test_an_fsspec_store_read_again_opens_only_the_records_written_since(
    remote: Journaled,
) -> None:
    for n in range(3):
        await remote.write(f"f{n}.txt")
    opened = _count_reads(remote.backend)
    first, _ = await remote.journal.read()
    await remote.journal.read()
    assert len(first) == 3
    assert len(opened) == 3
    await remote.write("g.txt", "y\n")
    third, _ = await remote.journal.read()
    assert len(third) == 4
    assert opened[3:] == [f"{third[-1].id}.json"]
    # A record marked pruned is longer: read again, and no longer undoable.
    name = f"{third[0].id}.json"
    record = remote.backend._read_json(name)  # type: ignore[attr-defined]
    record["pruned"] = True
    remote.backend._replace_record(third[0].id, record)
    now, _ = await remote.journal.read()
    assert not now[0].undoable
    assert now[1].undoable
