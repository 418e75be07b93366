"""What a store may hold besides its own files (SPEC §9.1: nothing in it is trusted, bounds
hold): a `lock` that is a directory or a socket is set aside, never a traceback that stops
`log`, `journal prune` or a server's start; a stray staged entry a pruner killed mid-way
left is swept and no longer counted (counted, it kept the total over the bound until prune
removed every entry). Real disk, the real CLI."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from dsh_fs import Workspace

_DSH_FS = str(Path(sys.executable).with_name("dsh-fs"))


def _journal_three_changes(root: Path, store: Path) -> Path:
    """Three journaled writes of ``a.txt``; the root's sub-store."""
    root.mkdir()
    (root / "a.txt").write_text("one\n", encoding="utf-8")

    async def changes() -> None:
        async with Workspace.sandbox(root, journal=store) as ws:
            s = ws.session(label="agent")
            await s.call("read", {"file_path": "a.txt"})
            for text in ("two\n", "three\n", "four\n"):
                result = await s.call("write", {"file_path": "a.txt", "content": text})
                assert not result.is_error, result.text

    anyio.run(changes)
    (sub,) = [p for p in store.iterdir() if p.is_dir()]
    return sub


def _dsh_fs(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_DSH_FS, *args], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    )


def _make_socket(path: Path) -> None:
    """A socket at `path`, bound by its name from its directory (a temporary folder's path
    can be longer than a socket address holds)."""
    server = socket.socket(socket.AF_UNIX)
    here = os.getcwd()
    try:
        os.chdir(path.parent)
        server.bind(path.name)
    finally:
        os.chdir(here)
        server.close()


@pytest.mark.parametrize("kind", ["empty directory", "directory", "socket"])
def test_a_lock_that_is_no_file_is_set_aside(tmp_path: Path, kind: str) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    sub = _journal_three_changes(root, store)
    (sub / "lock").unlink(missing_ok=True)
    if kind == "socket":
        _make_socket(sub / "lock")
    else:
        (sub / "lock").mkdir()
        if kind == "directory":
            (sub / "lock" / "inside").write_text("left alone\n", encoding="utf-8")
    for args in (
        ("journal", "prune", str(root), "--journal", str(store), "--journal-max-bytes", "1G"),
        ("log", str(root), "--journal", str(store), "--journal-max-bytes", "1G"),
    ):
        done = _dsh_fs(*args)
        assert done.returncode == 0, (args, done.stderr)
        assert "Traceback" not in done.stderr
    assert (sub / "lock").is_file()
    if kind == "directory":
        (aside,) = [p for p in sub.iterdir() if p.name.endswith(".aside")]
        assert (aside / "inside").read_text(encoding="utf-8") == "left alone\n"
    log = _dsh_fs("log", str(root), "--journal", str(store))
    assert log.stdout.startswith("3 changes shown"), log.stdout


def test_a_stray_staged_entry_is_swept_and_not_counted(tmp_path: Path) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    sub = _journal_three_changes(root, store)
    stray = sub / "20261206T000000.000000Z-00000009.abcdef.tmp"
    stray.write_bytes(b"x" * (2 << 20))
    held = sum(p.stat().st_size for p in sub.iterdir() if p.is_file() and p != stray)
    assert held < (1 << 20)
    pruned = _dsh_fs(
        "journal", "prune", str(root), "--journal", str(store), "--journal-max-bytes", "1M"
    )
    assert pruned.returncode == 0, pruned.stderr
    assert not stray.exists()
    log = _dsh_fs("log", str(root), "--journal", str(store))
    assert log.stdout.startswith("3 changes shown"), log.stdout
    assert len([p for p in sub.iterdir() if p.suffix == ".pre"]) == 3
    assert os.path.exists(sub / "root")


def test_a_planted_pending_record_never_opens_a_file_outside_its_root(tmp_path: Path) -> None:
    """A pending record is completed when its writer died (its digest and delta read from
    the file it names): one naming a file outside the root made `diff` print that file."""
    root, store = tmp_path / "root", tmp_path / "store"
    sub = _journal_three_changes(root, store)
    outside = tmp_path / "outside.txt"
    outside.write_text("OUTSIDE SECRET\n", encoding="utf-8")
    template = json.loads(sorted(sub.glob("*.json"))[-1].read_text(encoding="utf-8"))
    planted = "20261206T000001.000000Z-0badf00d"
    record = {
        **{k: v for k, v in template.items() if k not in ("digest", "delta", "after_mode")},
        "id": planted,
        "path": str(outside),
        "rel": str(outside),
        "key": str(outside),
        "before": None,
        "after": None,
        "pending": True,
    }
    (sub / f"{planted}.pending").write_text(json.dumps(record), encoding="utf-8")
    atime = outside.stat().st_atime_ns
    os.utime(outside, ns=(atime - 10**12, outside.stat().st_mtime_ns))
    before = outside.stat().st_atime_ns
    log = _dsh_fs("log", str(root), "--journal", str(store))
    assert log.returncode == 0, log.stderr
    diff = _dsh_fs("diff", str(root), planted, "--journal", str(store))
    assert "OUTSIDE SECRET" not in diff.stdout + diff.stderr
    assert outside.stat().st_atime_ns == before  # never read
