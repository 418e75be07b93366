"""The real MCP Inspector (the pinned version the HTTP banner prints) calling tools against a
served ROOT (SPEC §10.1): it declares the roots capability and answers ``roots/list`` with
``[]``, which leaves the ROOT in force. Over stdio as the Inspector starts a server, and over
HTTP with the banner's line, its method swapped for ``tools/call``. Each CLI run is a new
session, so only calls that need no earlier read are tried (read, glob); an edit needs one
session (tests/mcp/test_mcp_roots.py does it with the SDK's client and the same empty roots).
Skipped, saying why, when npx is missing or npm cannot fetch the Inspector."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from dsh_fs.cli._config import INSPECTOR

from .http_testing import http_server
from .mcp_testing import make_root
from .test_http_auth import NPM_FAILED, printed_entries

pytestmark = pytest.mark.anyio

READ = ["--method", "tools/call", "--tool-name", "read", "--tool-arg", "file_path=notes.txt"]
GLOB = ["--method", "tools/call", "--tool-name", "glob", "--tool-arg", "pattern=*.txt"]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_root(tmp_path)


async def inspect(command: list[str], home: Path) -> dict[str, Any]:
    """Run the Inspector CLI in a home of its own (it keeps ``~/.mcp-inspector``, and the
    suite's workers share the suite's home); its JSON answer (skips when npm cannot fetch it)."""
    if shutil.which("npx") is None:
        pytest.skip("no npx on PATH: the MCP Inspector cannot run here")
    env = {**os.environ, "HOME": str(home)}
    with anyio.fail_after(600):  # a first run downloads the Inspector
        ran = await anyio.run_process(command, stdin=subprocess.DEVNULL, check=False, env=env)
    stderr = ran.stderr.decode(errors="replace")
    if ran.returncode != 0 and NPM_FAILED.search(stderr):
        pytest.skip(f"npm cannot fetch the Inspector: {stderr.strip().splitlines()[-1]}")
    assert ran.returncode == 0, stderr
    answer: dict[str, Any] = json.loads(ran.stdout)
    return answer


def text(answer: dict[str, Any]) -> str:
    assert answer["isError"] is False, answer
    return "".join(part["text"] for part in answer["content"])


async def test_the_inspector_cli_reads_and_globs_in_a_root_served_over_stdio(
    root: Path, tmp_path: Path
) -> None:
    server = [sys.executable, "-m", "dsh_fs", "mcp", str(root)]
    read = await inspect(["npx", INSPECTOR, "--cli", *server, *READ], tmp_path)
    found = await inspect(["npx", INSPECTOR, "--cli", *server, *GLOB], tmp_path)
    assert "1: alpha\n2: beta\n3: gamma" in text(read)
    assert text(found) == "notes.txt"


async def test_the_printed_inspector_line_reads_and_globs_over_http(
    root: Path, tmp_path: Path
) -> None:
    # A generated token: the banner prints the entries with it.
    async with http_server(root, env={"DSH_FS_MCP_TOKEN": ""}) as server:
        printed = shlex.split(printed_entries(server.stderr)["MCP Inspector"])
        assert printed[-2:] == ["--method", "tools/list"]
        read = await inspect([*printed[:-2], *READ], tmp_path)
        found = await inspect([*printed[:-2], *GLOB], tmp_path)
        log = server.stderr
    assert "1: alpha\n2: beta\n3: gamma" in text(read)
    assert text(found) == "notes.txt"
    # The Inspector's empty roots are logged, once per session, and change nothing.
    assert log.count("the client named no roots: ") == 2
