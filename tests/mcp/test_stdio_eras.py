"""Which server answers a stdio client: the handshake era never loads the MCP SDK (it costs
about half a second of start-up) nor pydantic, the 2026-07-28 era is the SDK's from its
first request."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp_types import PROTOCOL_VERSION_META_KEY

from .mcp_testing import make_root
from .stdio_pipes import initialize, notification, request

SDK_MODULES = ("mcp", "mcp_types", "uvicorn", "starlette", "pydantic", "pydantic_core")

_REPORT = (
    "import sys\n"
    "from dsh_fs.cli import main\n"
    "status = main(['mcp', sys.argv[1]])\n"
    f"loaded = sorted({{m.split('.')[0] for m in sys.modules}} & set({SDK_MODULES!r}))\n"
    "print(loaded, file=sys.stderr)\n"
    "sys.exit(status)\n"
)


def _session(tmp_path: Path, lines: list[bytes]) -> tuple[list[dict[str, Any]], str]:
    """The answers to `lines` and the SDK modules the server process loaded."""
    root = make_root(tmp_path)
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(b"".join(line + b"\n" for line in lines))
    with requests.open("rb") as stdin:
        done = subprocess.run(
            [sys.executable, "-c", _REPORT, str(root)],
            stdin=stdin,
            capture_output=True,
            timeout=60,
            check=True,
        )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    return answers, done.stderr.decode().strip().splitlines()[-1]


READ = {"name": "read", "arguments": {"file_path": "notes.txt"}}


def test_a_handshake_era_session_never_imports_the_sdk_or_pydantic(tmp_path: Path) -> None:
    answers, loaded = _session(
        tmp_path,
        [
            initialize(1),
            notification("notifications/initialized"),
            request(2, "tools/list"),
            request(3, "tools/call", READ),
            request(4, "resources/list"),
        ],
    )
    by_id = {answer["id"]: answer for answer in answers}
    assert sorted(by_id) == [1, 2, 3, 4]
    tools = [tool["name"] for tool in by_id[2]["result"]["tools"]]
    assert tools == [
        "read",
        "write",
        "edit",
        "edit_files",
        "glob",
        "grep",
        "list",
        "move",
        "delete",
        "mkdir",
    ]
    assert "1: alpha" in by_id[3]["result"]["content"][0]["text"]
    assert by_id[4]["error"]["code"] == -32601
    assert loaded == "[]"


@pytest.mark.parametrize("first", ["server/discover", "tools/list"])
def test_a_client_opening_in_the_2026_era_is_served_by_the_sdk(tmp_path: Path, first: str) -> None:
    envelope = {
        "_meta": {
            PROTOCOL_VERSION_META_KEY: "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    }
    answers, loaded = _session(
        tmp_path,
        [
            notification("notifications/initialized"),
            request(1, first, envelope),
            request(2, "tools/call", {**READ, **envelope}),
            b'{"jsonrpc": "2.0", "id": 3, "method": ',
        ],
    )
    by_id = {answer["id"]: answer for answer in answers}
    assert by_id[1]["result"]["resultType"] == "complete"
    assert "1: alpha" in by_id[2]["result"]["content"][0]["text"]
    assert by_id[3]["error"]["code"] == -32700
    assert "mcp" in loaded
