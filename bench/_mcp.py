"""MCP servers over stdio, driven by one minimal raw JSON-RPC client (the same for every server).

`python -m dsh_fs mcp DIR` and the MCP reference filesystem server (`bench/.peers`, npm) get
the same client: one request line out, read lines until the answer with that id comes back.
The client's own cost (a `json.dumps`, a pipe write, a `readline`, a `json.loads`) is part of
every round trip, equally for every server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = [
    "McpPipe",
    "dsh_fs_command",
    "dsh_fs_server",
    "raw_python_server",
    "reference_server",
    "time_calls",
]

_PROTOCOL = "2025-06-18"

_RAW_SERVER = (
    "import json, sys\n"
    "for line in sys.stdin:\n"
    "    message = json.loads(line)\n"
    "    if 'id' in message:\n"
    "        result = {'protocolVersion': message['params']['protocolVersion'],\n"
    "                  'capabilities': {}, 'serverInfo': {'name': 'raw', 'version': '0'}}\n"
    "        reply = {'jsonrpc': '2.0', 'id': message['id'], 'result': result}\n"
    "        sys.stdout.write(json.dumps(reply) + '\\n')\n"
    "        sys.stdout.flush()\n"
)
"""The floor of a Python MCP server's start-up: an interpreter that answers each request
line with an ``initialize`` result and imports nothing else."""


class McpPipe:
    """One MCP server process over stdio, initialized and ready for `tools/call`."""

    def __init__(self, argv: list[str], *, cwd: Path | None = None) -> None:
        # The server's state (dsh-fs journals every change) goes into a folder of this
        # pipe's own, removed at `close`: a bench run never writes into the user's
        # ~/.local/state.
        self._state = tempfile.TemporaryDirectory(prefix="dsh-fs-bench-state-")
        env = {**os.environ, "XDG_STATE_HOME": self._state.name}
        started = time.perf_counter()
        self._process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=cwd,
            env=env,
        )
        self._next_id = 0
        self.request(
            "initialize",
            {
                "protocolVersion": _PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "dsh-fs-bench", "version": "0"},
            },
        )
        self.start_up = time.perf_counter() - started
        """Seconds from the spawn until the answer to ``initialize`` was read."""
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _send(self, message: dict[str, Any]) -> None:
        stdin = self._process.stdin
        assert stdin is not None
        stdin.write(json.dumps(message).encode() + b"\n")
        stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send one request and return its ``result``."""
        self._next_id += 1
        ident = self._next_id
        self._send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        stdout = self._process.stdout
        assert stdout is not None
        while True:
            line = stdout.readline()
            if not line:
                raise RuntimeError(f"MCP server exited during {method}")
            message: dict[str, Any] = json.loads(line)
            if message.get("id") != ident:
                continue  # a notification or a server-to-client request
            if "error" in message:
                raise RuntimeError(f"{method}: {message['error']}")
            result: dict[str, Any] = message["result"]
            return result

    def call(self, tool: str, arguments: dict[str, Any]) -> str:
        """Call `tool`; returns its text, raises on a tool error."""
        result = self.request("tools/call", {"name": tool, "arguments": arguments})
        text = "".join(part.get("text", "") for part in result.get("content", []))
        if result.get("isError"):
            raise RuntimeError(f"{tool} failed: {text[:200]}")
        return text

    def close(self) -> None:
        """End the server (closing its stdin, then killing it if it lingers)."""
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        if self._process.stdout is not None:
            self._process.stdout.close()
        self._state.cleanup()


def dsh_fs_server(root: Path) -> McpPipe:
    """``python -m dsh_fs mcp ROOT``."""
    return McpPipe([sys.executable, "-m", "dsh_fs", "mcp", str(root)])


def dsh_fs_command() -> list[str]:
    """The installed ``dsh-fs`` script beside this interpreter (what a host spawns), else
    ``python -m dsh_fs``."""
    script = Path(sys.executable).with_name("dsh-fs")
    return [str(script)] if script.exists() else [sys.executable, "-m", "dsh_fs"]


def raw_python_server() -> McpPipe:
    """`_RAW_SERVER`: the same interpreter answering ``initialize`` with nothing imported."""
    return McpPipe([sys.executable, "-c", _RAW_SERVER])


def reference_server(node_modules: Path, root: Path) -> McpPipe:
    """The MCP reference filesystem server (`@modelcontextprotocol/server-filesystem`)."""
    entry = node_modules / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"
    return McpPipe(["node", str(entry), str(root)])


def time_calls(repeats: int, step: Callable[[int], object], *, warmup: int = 1) -> list[float]:
    """Wall times of `step(i)` for i in 1..repeats, after `warmup` untimed calls."""
    for i in range(warmup):
        step(-i)
    times = []
    for i in range(1, repeats + 1):
        start = time.perf_counter()
        step(i)
        times.append(time.perf_counter() - start)
    return times
