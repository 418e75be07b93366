"""The journal's bounds hold while serving (SPEC §9.1): a running workspace prunes as it goes,
records count toward `max_bytes`, and a full store filesystem refuses a change only when
pruning cannot make room."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from dsh_fs import Workspace
from dsh_fs.journal import JournalConfig
from dsh_fs.providers import LocalJournalStore
from dsh_fs.providers.local._journal_store import LocalReplaced

from .store_size import held_bytes

_DSH_FS = str(Path(sys.executable).with_name("dsh-fs"))


def _page(last: str, lines: int = 1024) -> str:
    """A text of `lines` 8-byte lines whose last line is `last` (7 characters)."""
    return "xxxxxxx\n" * (lines - 1) + last + "\n"


@pytest.mark.anyio
async def test_a_running_workspace_prunes_as_it_goes_and_stays_within_max_bytes(
    tmp_path: Path,
) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    bound = 64 * 1024
    config = JournalConfig(location=str(store), max_bytes=bound)
    async with Workspace.sandbox(root, journal=config) as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        for n in range(40):  # 40 rewrites of an 8 KiB file: 320 KiB of pre-images
            if n:
                await s.call("read", {"file_path": "a.txt"})
            # One line changes: each record (its forward delta that line) stays small, so
            # what pruning drops is pre-images.
            await s.call("write", {"file_path": "a.txt", "content": _page(f"{n:07d}")})
            assert held_bytes(store) <= bound + 9 * 1024  # at most one change beyond, never more
        entries = await ws.journal.entries()
    assert len(entries) == 40  # every change listed
    assert entries[0].undoable  # the newest kept
    assert not entries[-2].undoable  # the oldest rewrite pruned (the first write made it)
    assert held_bytes(store) <= bound


@pytest.mark.anyio
async def test_changes_committed_while_a_prune_runs_still_count_toward_the_bound(
    tmp_path: Path,
) -> None:
    # A change committed while another thread prunes does not wait for it: its size must
    # stay counted after that prune, else the store grows past the bound unnoticed (a
    # running server's 60 writes once ended with 16,678 bytes held under a 16 KiB bound).
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    bound = 16 * 1024
    config = JournalConfig(location=str(store), max_bytes=bound)
    async with Workspace.sandbox(root, journal=config) as ws:
        assert ws.journal is not None
        journal_store = ws.journal.store
        assert isinstance(journal_store, LocalJournalStore)
        s = ws.session(label="agent")
        sweep = journal_store._sweep
        late: list[str] = []

        def sweep_beside_changes(names: dict[str, Any]) -> None:
            sweep(names)
            while len(late) < 20:  # the first prune's: twenty changes land while it runs
                late.append(f"late{len(late)}.txt")
                arguments = {"file_path": late[-1], "content": "x\n"}
                result = anyio.from_thread.run(s.call, "write", arguments)
                assert not result.is_error, result.text

        journal_store._sweep = sweep_beside_changes  # type: ignore[method-assign]
        n = 0
        while not late:  # creates until the first prune, which the twenty changes ride
            await s.call("write", {"file_path": f"f{n}.txt", "content": "x\n"})
            n += 1
    assert len(late) == 20
    assert held_bytes(store) <= bound


@pytest.mark.anyio
async def test_records_count_toward_max_bytes_and_a_huge_client_name_is_clipped(
    tmp_path: Path,
) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    bound = 16 * 1024
    config = JournalConfig(location=str(store), max_bytes=bound)
    async with Workspace.sandbox(root, journal=config) as ws:
        assert ws.journal is not None
        s = ws.session(label="c" * (1 << 20))  # a 1 MiB client name
        for n in range(60):  # creates: records only, no pre-images
            await s.call("write", {"file_path": f"f{n}.txt", "content": "x\n"})
        entries = await ws.journal.entries()
    assert held_bytes(store) <= bound
    assert 0 < len(entries) < 60  # the oldest records went whole, oldest first
    assert entries[0].path.endswith("f59.txt")
    assert all(len(e.session) < 256 for e in entries)


class _FullDisk:
    """A store filesystem of `capacity` bytes: keeping a pre-image or writing a pending
    record fails with ENOSPC while the store's files would not fit."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, store: Path, capacity: int) -> None:
        self.store, self.capacity, self.refusals = store, capacity, 0
        keep, pending = LocalJournalStore._keep, LocalJournalStore._pending

        def checked_keep(this: LocalJournalStore, replaced: LocalReplaced, name: str) -> None:
            self._check(replaced.info.st_size)
            keep(this, replaced, name)

        def checked_pending(this: LocalJournalStore, entry_id: str, data: bytes) -> int:
            self._check(len(data))
            return pending(this, entry_id, data)

        monkeypatch.setattr(LocalJournalStore, "_keep", checked_keep)
        monkeypatch.setattr(LocalJournalStore, "_pending", checked_pending)

    def _check(self, size: int) -> None:
        if held_bytes(self.store) + size > self.capacity:
            self.refusals += 1
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.mark.anyio
async def test_a_full_store_filesystem_drops_the_oldest_pre_images_to_make_room(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    (root / "a.txt").write_text(_page("0000000", 1250))  # 10 000 bytes
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        disk = _FullDisk(monkeypatch, store, capacity=25_000)  # two pre-images fit, not three
        s = ws.session(label="agent")
        for n in range(1, 4):
            await s.call("read", {"file_path": "a.txt"})
            content = _page(str(n) * 7, 1250)  # one line changes: a small record
            result = await s.call("write", {"file_path": "a.txt", "content": content})
            assert not result.is_error, result.text
        entries = await ws.journal.entries()
    assert disk.refusals >= 1  # the disk was full once
    assert [e.undoable for e in entries] == [True, True, False]  # the oldest made room
    assert (root / "a.txt").read_text() == _page("3" * 7, 1250)


@pytest.mark.anyio
async def test_a_full_store_filesystem_refuses_the_change_naming_the_journal_when_nothing_can_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    (root / "a.txt").write_text("mine\n")
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        _FullDisk(monkeypatch, store, capacity=0)
        s = ws.session(label="agent")
        await s.call("read", {"file_path": "a.txt"})
        result = await s.call("write", {"file_path": "a.txt", "content": "agent\n"})
        assert result.is_error
        assert result.code == "FS_IO_ERROR"
        location = ws.journal.location
    assert f"the change journal at {location} failed (no space left on device)" in result.text
    assert (root / "a.txt").read_text() == "mine\n"


def test_a_running_stdio_server_keeps_its_journal_within_the_bound(tmp_path: Path) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    messages: list[dict[str, object]] = [
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "c" * 100_000, "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    for n in range(1, 61):  # 60 new files: records only, far more than the bound
        arguments = {"file_path": f"f{n}.txt", "content": "x\n"}
        messages.append(
            {
                "jsonrpc": "2.0",
                "id": n,
                "method": "tools/call",
                "params": {"name": "write", "arguments": arguments},
            }
        )
    env = {**os.environ, "HOME": str(tmp_path / "home"), "XDG_STATE_HOME": str(tmp_path / "xdg")}
    done = subprocess.run(
        [_DSH_FS, "mcp", str(root), "--journal", str(store), "--journal-max-bytes", "16K"],
        input="".join(json.dumps(m) + "\n" for m in messages),
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=120,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(answers) == 61
    assert not any(a.get("result", {}).get("isError") for a in answers)
    assert len(list(root.iterdir())) == 60
    assert held_bytes(store) <= 16 * 1024
