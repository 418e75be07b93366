"""`dsh-fs log`/`undo` with the ROOTs named (SPEC §9.1: every root can be undone; docs: the
changes to files inside the ROOTs named): a server with several ROOTs records every change
under its first ROOT's sub-store, and `log A` listed B's change there, `undo A --since`
tried it (refused, outside the sandbox, exit 1). The first ROOT's own changes stay listed
whatever spelling of it (a link) the server was started with."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio

from dsh_fs import Workspace

_DSH_FS = str(Path(sys.executable).with_name("dsh-fs"))


def _dsh_fs(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([_DSH_FS, *args], capture_output=True, text=True, timeout=60)


def _write_both(a: Path, b: Path, store: Path, served: tuple[Path, Path]) -> None:
    async def write() -> None:
        async with Workspace.sandbox(*(str(p) for p in served), journal=store) as ws:
            s = ws.session(label="agent")
            for path in (served[0] / "fa.txt", served[1] / "fb.txt"):
                await s.call("read", {"file_path": str(path)})
                done = await s.call("write", {"file_path": str(path), "content": "changed\n"})
                assert not done.is_error, done.text

    anyio.run(write)


def test_log_and_undo_of_one_root_take_only_its_changes(tmp_path: Path) -> None:
    a, b, store = tmp_path / "A", tmp_path / "B", tmp_path / "store"
    for root, name in ((a, "fa.txt"), (b, "fb.txt")):
        root.mkdir()
        (root / name).write_text("original\n", encoding="utf-8")
    link = tmp_path / "link-to-A"
    link.symlink_to(a)
    _write_both(a, b, store, (link, b))
    log_a = _dsh_fs("log", str(a), "--journal", str(store))
    assert log_a.returncode == 0, log_a.stderr
    assert "fa.txt" in log_a.stdout
    assert "fb.txt" not in log_a.stdout
    undo_a = _dsh_fs("undo", str(a), "--since", "1h", "--journal", str(store))
    assert undo_a.returncode == 0, undo_a.stdout + undo_a.stderr
    assert (a / "fa.txt").read_text(encoding="utf-8") == "original\n"
    assert (b / "fb.txt").read_text(encoding="utf-8") == "changed\n"
    log_b = _dsh_fs("log", str(b), "--journal", str(store))
    assert "fb.txt" in log_b.stdout
    undo_b = _dsh_fs("undo", str(a), str(b), "--since", "1h", "--journal", str(store))
    assert undo_b.returncode == 0, undo_b.stdout + undo_b.stderr
    assert (b / "fb.txt").read_text(encoding="utf-8") == "original\n"
