"""A served root inside the journal's store is refused at start (as a store inside a root
is): the fence kept the store out of reach, so the whole root read as absent (every file
"not found", every change refused as the store's) without a word."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dsh_fs import Workspace

_DSH_FS = str(Path(sys.executable).with_name("dsh-fs"))


def test_a_root_inside_the_store_is_refused_at_start(tmp_path: Path) -> None:
    store = tmp_path / "store"
    root = store / "project"
    root.mkdir(parents=True)
    (root / "a.txt").write_text("hello\n", encoding="utf-8")
    for command in ("mcp", "log"):
        done = subprocess.run(
            [_DSH_FS, command, str(root), "--journal", str(store)],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 2, done.stderr
        assert "a served root lies inside the journal store" in done.stderr
    assert sorted(p.name for p in store.iterdir()) == ["project"]  # no sub-store made
    with pytest.raises(ValueError, match="a served root lies inside the journal store"):
        Workspace.sandbox(root, journal=store)
