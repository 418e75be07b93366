"""``dsh-fs mcp --http`` requires a bearer token by default (``--no-auth`` on loopback only)."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp.shared.exceptions import MCPError

from dsh_fs.cli import main
from dsh_fs.cli._config import INSPECTOR

from .http_testing import TIMEOUT, TOKEN, TOOLS, HttpServer, client, headers, http_server
from .mcp_testing import make_root

pytestmark = pytest.mark.anyio

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_root(tmp_path)


@pytest.fixture
async def server(root: Path) -> AsyncIterator[HttpServer]:
    async with http_server(root) as running:
        yield running


async def post_ping(url: str, **sent: str) -> httpx2.Response:
    with anyio.fail_after(TIMEOUT):
        async with httpx2.AsyncClient() as http:
            response: httpx2.Response = await http.post(url, json=PING, headers=sent)
    return response


async def tool_names(url: str, token: str | None) -> list[str]:
    with anyio.fail_after(TIMEOUT):
        async with client(url, token) as mcp:
            return [tool.name for tool in (await mcp.list_tools()).tools]


def printed_entries(stderr: str) -> dict[str, str]:
    """The banner's entries by client name (``dsh-fs: <client>: <entry>`` lines)."""
    return {
        line.split(":", 2)[1].strip(): line.split(": ", 2)[2]
        for line in stderr.splitlines()
        if line.startswith("dsh-fs: ") and ": " in line[8:]
    }


async def test_a_request_without_the_token_is_refused_with_401_and_a_bearer_challenge(
    server: HttpServer,
) -> None:
    accept = "application/json, text/event-stream"
    for sent in (
        {"accept": accept},
        {"accept": accept, "authorization": f"Bearer {TOKEN}x"},
        {"accept": accept, "authorization": f"Bearer {TOKEN[:-1]}"},
        {"accept": accept, "authorization": f"Basic {TOKEN}"},
        {"accept": accept, "authorization": "Bearer"},
    ):
        response = await post_ping(server.url, **sent)
        assert response.status_code == 401, sent
        assert response.headers["www-authenticate"].startswith("Bearer ")
    with anyio.fail_after(TIMEOUT):
        async with httpx2.AsyncClient() as http:
            for path in ("/", "/.well-known/oauth-protected-resource", "/mcp/x"):
                other = await http.get(server.url.replace("/mcp", path))
                assert other.status_code == 401, path  # no page and no metadata without it
    assert (await post_ping(server.url, **headers())).status_code == 400  # past auth: no session
    assert await tool_names(server.url, TOKEN) == TOOLS


async def test_the_official_client_without_the_token_gets_an_error_not_a_session(
    server: HttpServer,
) -> None:
    with anyio.fail_after(TIMEOUT), pytest.raises(Exception) as raised:  # noqa: PT011
        await tool_names(server.url, None)
    error: BaseException = raised.value
    while not isinstance(error, MCPError):  # the client raises it inside task groups
        error = error.exceptions[0]  # type: ignore[attr-defined]
    assert error.error.message == "Server returned an error response"


async def test_a_generated_token_is_printed_once_with_configurations_that_work(
    root: Path,
) -> None:
    async with http_server(root, env={"DSH_FS_MCP_TOKEN": ""}) as server:
        lines = server.stderr.splitlines()
        shown = [line for line in lines if line.startswith("  Authorization: Bearer ")]
        assert len(shown) == 1
        token = shown[0].split("Bearer ", 1)[1]
        assert len(token) >= 40
        assert (
            server.stderr.count(token) == 5
        )  # the header, Claude Code, Cursor, VS Code, Inspector
        by_host = printed_entries(server.stderr)
        claude = shlex.split(by_host["Claude Code"])
        assert claude == [
            "claude", "mcp", "add", "--transport", "http", "dsh-fs", server.url,
            "--header", f"Authorization: Bearer {token}",
        ]  # fmt: skip
        cursor = json.loads(by_host["Cursor (.cursor/mcp.json)"])
        assert cursor == {
            "mcpServers": {
                "dsh-fs": {"url": server.url, "headers": {"Authorization": f"Bearer {token}"}}
            }
        }
        vscode = json.loads(by_host["VS Code (.vscode/mcp.json)"])
        assert vscode["servers"]["dsh-fs"]["type"] == "http"
        assert vscode["servers"]["dsh-fs"]["headers"] == {"Authorization": f"Bearer {token}"}
        inspector = shlex.split(by_host["MCP Inspector"])
        assert inspector[:4] == ["npx", INSPECTOR, "--cli", server.url]
        assert inspector[inspector.index("--header") + 1] == f"Authorization: Bearer {token}"
        assert await tool_names(server.url, token) == TOOLS
        assert (await post_ping(server.url, **headers(TOKEN))).status_code == 401


NPM_FAILED = re.compile(r"^npm (error|ERR!)", re.MULTILINE)
"""What npm itself says when it cannot fetch the Inspector (no registry, a proxy refusing):
then the test skips. The Inspector's own failures do not start so."""


async def test_the_printed_inspector_command_lists_the_tools_on_this_node(
    root: Path, tmp_path: Path
) -> None:
    """The banner's MCP Inspector line, run as printed by the `npx` on this machine (npm
    serves Node 20 an Inspector without ``--header`` unless the line pins one)."""
    if shutil.which("npx") is None:
        pytest.skip("no npx on PATH")
    async with http_server(root, env={"DSH_FS_MCP_TOKEN": ""}) as server:
        command = shlex.split(printed_entries(server.stderr)["MCP Inspector"])
        # A home of its own: the Inspector keeps ~/.mcp-inspector, and the suite's workers
        # share the suite's home.
        env = {**os.environ, "HOME": str(tmp_path)}
        with anyio.fail_after(600):  # a first run downloads the Inspector
            ran = await anyio.run_process(command, stdin=subprocess.DEVNULL, check=False, env=env)
    stderr = ran.stderr.decode(errors="replace")
    if ran.returncode != 0 and NPM_FAILED.search(stderr):
        pytest.skip(f"npm cannot fetch the Inspector: {stderr.strip().splitlines()[-1]}")
    assert ran.returncode == 0, stderr
    assert [tool["name"] for tool in json.loads(ran.stdout)["tools"]] == TOOLS


async def test_a_token_file_wins_over_the_environment_and_is_not_printed(
    root: Path, tmp_path: Path
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("file-token-0123456789abcdef\n", encoding="utf-8")
    token_file.chmod(0o600)
    async with http_server(root, "--token-file", str(token_file)) as server:
        assert "file-token" not in server.stderr
        assert "warning" not in server.stderr
        assert f"<the token from --token-file {token_file}>" in server.stderr
        assert await tool_names(server.url, "file-token-0123456789abcdef") == TOOLS
        assert (await post_ping(server.url, **headers(TOKEN))).status_code == 401


async def test_no_auth_on_loopback_serves_without_a_token_and_says_so(root: Path) -> None:
    async with http_server(root, "--no-auth") as server:
        assert "warning: no authentication (--no-auth)" in server.stderr
        assert await tool_names(server.url, None) == TOOLS


@pytest.mark.parametrize(
    ("argv", "env", "message"),
    [
        (["--http", "0.0.0.0:0", "--no-auth"], {}, "0.0.0.0 is not a loopback address"),
        (
            ["--http", "0.0.0.0:0", "--allow-remote", "--no-auth", "--allowed-host", "h"],
            {},
            "--no-auth is allowed on a loopback address only, not on 0.0.0.0",
        ),
        (["--no-auth"], {}, "--no-auth applies to --http only"),
        (["--token-file", "t"], {}, "--token-file applies to --http only"),
        (
            ["--http", ":0", "--token-file", "/nonexistent/token"],
            {},
            "--token-file /nonexistent/token: No such file or directory",
        ),
        (
            ["--http", ":0"],
            {"DSH_FS_MCP_TOKEN": "short"},
            "the token from DSH_FS_MCP_TOKEN must be at least 16 characters",
        ),
        (
            ["--http", ":0"],
            {"DSH_FS_MCP_TOKEN": "has a space in it, 0123456789"},
            "the token from DSH_FS_MCP_TOKEN must be at least 16 characters of A-Z",
        ),
    ],
)
@pytest.mark.usefixtures("no_serving")
def test_unsafe_or_unusable_auth_settings_are_refused_before_serving(
    root: Path,
    argv: list[str],
    env: dict[str, str],
    message: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DSH_FS_MCP_TOKEN", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert main(["mcp", *argv, str(root)]) == 2
    stderr = capsys.readouterr().err
    assert message in stderr
    assert "serving" not in stderr


@pytest.mark.usefixtures("no_serving")
def test_a_token_file_others_can_read_is_warned_about(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("file-token-0123456789abcdef", encoding="utf-8")
    token_file.chmod(0o644)
    # 0.0.0.0 without --allow-remote stops the server right after the token is read.
    argv = ["mcp", "--http", "0.0.0.0:0", "--token-file", str(token_file), str(root)]
    assert main(argv) == 2
    stderr = capsys.readouterr().err
    assert f"warning: {token_file} is readable by other users" in stderr
    assert f"chmod 600 {token_file}" in stderr
