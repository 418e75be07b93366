"""Where the store is (SPEC §9.1): `dsh-fs log` says which store it read when it finds no
changes, and every server (stdio, HTTP) says which store it journals in when it starts. (The
printed host entry pins it: tests/cli/test_print_config.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.mcp.http_testing import http_server

_DSH_FS = str(Path(sys.executable).with_name("dsh-fs"))


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(tmp_path / "home"), "XDG_STATE_HOME": str(tmp_path / "xdg")}


def _sub_store(store: Path) -> Path:
    (sub,) = [p for p in store.iterdir() if p.is_dir()]
    return sub


@pytest.mark.parametrize("json_output", [False, True], ids=["text", "json"])
def test_log_names_the_store_it_read_on_stderr_when_it_finds_no_changes(
    tmp_path: Path, json_output: bool
) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    done = subprocess.run(
        [_DSH_FS, "log", str(root), "--journal", str(store), *(["--json"] if json_output else [])],
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert f"dsh-fs log: no changes in the journal store {_sub_store(store)}\n" in done.stderr
    if json_output:
        assert json.loads(done.stdout) == []  # stdout stays one JSON document


def test_a_stdio_server_names_its_store_on_stderr_at_start(tmp_path: Path) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    done = subprocess.run(
        [_DSH_FS, "mcp", str(root), "--journal", str(store)],
        input="",
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert f"dsh-fs: journal store {_sub_store(store)}\n" in done.stderr
    off = subprocess.run(
        [_DSH_FS, "mcp", str(root), "--no-journal"],
        input="",
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        check=False,
        timeout=60,
    )
    assert "dsh-fs: not journaling (--no-journal)\n" in off.stderr


@pytest.mark.anyio
async def test_an_http_server_names_its_store_on_stderr_at_start(tmp_path: Path) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    async with http_server(root, "--journal", str(store), env=_env(tmp_path)) as server:
        assert f"dsh-fs: journal store {_sub_store(store)}\n" in server.stderr
