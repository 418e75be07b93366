"""A real ``dsh-fs mcp --http`` server in a child process, and clients for it.

The child's stderr is drained into a buffer the whole time (a server that logs a lot must
never block on a full pipe), and a test can wait for a text to appear in it.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
from anyio.abc import Process
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

TOKEN = "test-token-0123456789abcdef"
"""The token the server is started with (``DSH_FS_MCP_TOKEN``)."""

TIMEOUT = 60
"""Seconds any one step against the server may take: a guard against a hang, not a speed
target (a server starting beside busy processes takes many seconds)."""

TOOLS = [
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
"""What `tools/list` names, in order, for a server with the default tools."""

ACCEPT = "application/json, text/event-stream"

LIMITS_SCRIPT = Path(__file__).with_name("serve_with_limits.py")


@dataclass
class HttpServer:
    """A running server: its URL, its process and what it wrote on stderr so far."""

    url: str
    process: Process
    _stderr: bytearray = field(default_factory=bytearray)
    _grew: anyio.Event = field(default_factory=anyio.Event)

    @property
    def stderr(self) -> str:
        return self._stderr.decode(errors="replace")

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1].split("/")[0])

    @property
    def host(self) -> str:
        return self.url.split("//", 1)[1].rsplit(":", 1)[0].strip("[]")

    async def wait_for(self, text: str) -> None:
        """Until `text` appears on the server's stderr."""
        while text not in self.stderr:
            await self._grew.wait()

    async def _drain(self) -> None:
        assert self.process.stderr is not None
        with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError):
            async for chunk in self.process.stderr:
                self._stderr += chunk
                grew, self._grew = self._grew, anyio.Event()
                grew.set()
        self._grew.set()


@contextlib.asynccontextmanager
async def http_server(
    root: Path | None,
    *args: str,
    address: str = "127.0.0.1:0",
    env: dict[str, str] | None = None,
    nofile: int | None = None,
    limits: dict[str, Any] | None = None,
    cwd: Path | None = None,
) -> AsyncIterator[HttpServer]:
    """``dsh-fs mcp --http ADDRESS ARGS ROOT`` with `TOKEN` in its environment, until the
    block ends (`root` None: no ROOT, the server serves `cwd`). `nofile` sets its
    file-descriptor limit before it starts; `limits` serves through `serve_with_limits.py`
    with those `HttpLimits` instead of the CLI's (the same sandbox, the same server)."""
    environment = {**os.environ, "DSH_FS_MCP_TOKEN": TOKEN, **(env or {})}
    # The file-descriptor limit is set before anything else runs: the server sizes its
    # connection handling by it at the start.
    limited = (
        "import resource, sys\n"
        "if sys.argv[1] != '-':\n"
        "    n = int(sys.argv[1])\n"
        "    resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))\n"
    )
    if limits is not None:
        assert root is not None
        program = (
            "import runpy\n"
            "sys.argv = sys.argv[2:]\n"
            "runpy.run_path(sys.argv[0], run_name='__main__')\n"
        )
        served = [str(LIMITS_SCRIPT), address, str(root), json.dumps(limits)]
    else:
        program = "from dsh_fs.cli import main\nsys.exit(main(sys.argv[2:]))\n"
        served = ["mcp", "--http", address, *args, *([] if root is None else [str(root)])]
    command = [
        sys.executable,
        "-c",
        limited + program,
        "-" if nofile is None else str(nofile),
        *served,
    ]
    process = await anyio.open_process(command, env=environment, cwd=cwd)
    server = HttpServer(url="", process=process)
    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(server._drain)
            with anyio.fail_after(TIMEOUT):
                while True:
                    lines = [line for line in server.stderr.splitlines() if " serving MCP " in line]
                    if lines:
                        server.url = lines[0].rsplit(" at ", 1)[1].strip()
                        break
                    if process.returncode is not None:
                        raise AssertionError(f"the server exited:\n{server.stderr}")
                    await server._grew.wait()
            try:
                yield server
            finally:
                with contextlib.suppress(ProcessLookupError):  # a test may have killed it
                    process.kill()
                tasks.cancel_scope.cancel()
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.aclose()


@contextlib.asynccontextmanager
async def client(
    url: str, token: str | None = TOKEN, *, options: dict[str, Any] | None = None, **extra: str
) -> AsyncIterator[Client]:
    """The official MCP client (with the SDK's HTTP timeouts), sending `token` as a bearer
    token and the `extra` headers; `options` are more `Client` arguments
    (``list_roots_callback``). It speaks the handshake era (one MCP session, which owns its
    observations) unless `options` give another ``mode``: the sessionless 2026-07-28 era
    has tests of its own (`test_http_principals`)."""
    options = {"mode": "legacy", **(options or {})}
    sent = dict(extra)
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    async with (
        create_mcp_http_client(headers=sent) as http,
        Client(streamable_http_client(url, http_client=http), **options) as mcp,
    ):
        yield mcp


def headers(token: str | None = TOKEN, **extra: str) -> dict[str, str]:
    """Headers of a raw JSON-RPC POST (httpx), with the token."""
    sent = {"content-type": "application/json", "accept": ACCEPT, **extra}
    if token is not None:
        sent["authorization"] = f"Bearer {token}"
    return sent


def sse_message(response: httpx2.Response) -> Any:
    """The JSON-RPC message of a POST's answer, SSE or JSON."""
    if response.headers["content-type"].startswith("application/json"):
        return response.json()
    data = [line[5:] for line in response.text.splitlines() if line.startswith("data:")]
    messages = [json.loads(item) for item in data if item.strip()]
    assert len(messages) == 1, response.text
    return messages[0]


async def open_session(
    http: httpx2.AsyncClient, url: str, token: str | None = TOKEN
) -> dict[str, str]:
    """Initialize a session with raw requests (no GET stream); its request headers."""
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }
    response = await http.post(url, json=init, headers=headers(token))
    assert response.status_code == 200, response.text
    session = {
        **headers(token),
        "mcp-session-id": response.headers["mcp-session-id"],
        "mcp-protocol-version": "2025-06-18",
    }
    done = await http.post(
        url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session
    )
    assert done.status_code == 202, done.text
    return session


def arguments_call(request_id: int, tool: str, arguments_json: str) -> bytes:
    """A raw ``tools/call`` body with the arguments spelled as given."""
    return (
        f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call",'
        f'"params":{{"name":"{tool}","arguments":{arguments_json}}}}}'
    ).encode()


__all__: Sequence[str] = [
    "TIMEOUT",
    "TOKEN",
    "HttpServer",
    "arguments_call",
    "client",
    "headers",
    "http_server",
    "open_session",
    "sse_message",
]
