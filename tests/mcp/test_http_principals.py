"""The MCP 2026-07-28 era over HTTP (SPEC §14): sessionless requests, observations owned by
the principal (the agent of the bearer token and the client name the request carries).

Real servers (``dsh-fs mcp --http`` processes) and the official client in the 2026-07-28
era: a read on one replica lets the same principal edit through another when they share a
Redis ledger; another agent, or the same agent under another client name, is refused; a
handshake-era session keeps its own observations (SPEC §6).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types import (
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    PROTOCOL_VERSION_META_KEY,
    Implementation,
)
from mcp_types.version import LATEST_MODERN_VERSION

from ..redis_server import RedisServer, redis_or_skip
from .http_testing import ACCEPT, TIMEOUT, client, http_server, sse_message
from .mcp_testing import make_root

pytestmark = pytest.mark.anyio

ALICE = "alice-token-0123456789abcdef"
BOB = "bob-token-0123456789abcdef"
EDIT = {"file_path": "notes.txt", "old_string": "beta", "new_string": "BETA"}


def _tokens(tmp_path: Path) -> Path:
    tokens = tmp_path / "tokens"
    tokens.write_text(f"{ALICE} alice\n{BOB} bob\n", encoding="utf-8")
    tokens.chmod(0o600)
    return tokens


class _Agent:
    """One agent's client on one server: the official client with its token and name."""

    def __init__(self, url: str, token: str, name: str, mode: str) -> None:
        self._url, self._token, self._name, self._mode = url, token, name, mode

    async def call(self, tool: str, arguments: Mapping[str, object]) -> str | None:
        """Call `tool`; the error code of a refusal, else None."""
        headers = {"Authorization": f"Bearer {self._token}"}
        async with (
            create_mcp_http_client(headers=headers) as http,
            Client(
                streamable_http_client(self._url, http_client=http),
                mode=self._mode,
                client_info=Implementation(name=self._name, version="1"),
            ) as client,
        ):
            result = await client.call_tool(tool, dict(arguments))
        return (result.meta or {}).get("dsh-fs/code") if result.is_error else None


async def _raw_call(
    http: httpx2.AsyncClient, url: str, token: str, tool: str, info: object | None
) -> str | None:
    """A 2026-07-28 ``tools/call`` of `tool` on notes.txt (read, or `EDIT`), posted as a
    client may: its ``_meta`` carries the protocol version and capabilities, and `info` as
    ``clientInfo`` (None: no such key). The refusal's error code, else None."""
    meta: dict[str, Any] = {
        PROTOCOL_VERSION_META_KEY: LATEST_MODERN_VERSION,
        CLIENT_CAPABILITIES_META_KEY: {},
    }
    if info is not None:
        meta[CLIENT_INFO_META_KEY] = info
    arguments = EDIT if tool == "edit" else {"file_path": "notes.txt"}
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments, "_meta": meta},
    }
    headers = {
        "content-type": "application/json",
        "accept": ACCEPT,
        "authorization": f"Bearer {token}",
        "mcp-protocol-version": LATEST_MODERN_VERSION,
        "mcp-method": "tools/call",
        "mcp-name": tool,
    }
    response = await http.post(url, json=body, headers=headers)
    assert response.status_code == 200, response.text
    result = sse_message(response)["result"]
    return (result.get("_meta") or {}).get("dsh-fs/code") if result["isError"] else None


def _sessions(journal: Path, root: Path) -> list[str]:
    """The session of each entry in `journal`, oldest first (``dsh-fs log --json``)."""
    logged = subprocess.run(
        [sys.executable, "-m", "dsh_fs", "log", "--json", "--journal", str(journal), str(root)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert logged.returncode == 0, logged.stderr
    return [entry["session"] for entry in json.loads(logged.stdout)]


async def test_a_sessionless_request_naming_no_client_belongs_to_its_agents_unknown_client(
    tmp_path: Path,
) -> None:
    root = make_root(tmp_path)
    journal = tmp_path / "journal"
    flags = ("--tokens", str(_tokens(tmp_path)), "--journal", str(journal))
    async with http_server(root, *flags) as server, httpx2.AsyncClient() as http:
        with anyio.fail_after(TIMEOUT):
            # No clientInfo at all (the era makes it optional): Alice's reads and edits
            # still share one principal, `alice/unknown`, and nobody else's.
            assert await _raw_call(http, server.url, ALICE, "read", None) is None
            assert await _raw_call(http, server.url, BOB, "edit", None) == "FS_NOT_OBSERVED"
            named = _Agent(server.url, ALICE, "claude", LATEST_MODERN_VERSION)
            assert await named.call("edit", EDIT) == "FS_NOT_OBSERVED"
            assert await _raw_call(http, server.url, ALICE, "edit", None) is None
            # An empty name is no name: the same principal.
            again = {"name": "", "version": "1"}
            assert await _raw_call(http, server.url, ALICE, "read", again) is None
    assert (root / "notes.txt").read_text(encoding="utf-8") == "alpha\nBETA\ngamma\n"
    # The journal labels the change with the principal, never with an empty client name.
    sessions = _sessions(journal, root)
    assert len(sessions) == 1, sessions
    assert sessions[0].startswith("alice/unknown"), sessions


async def test_one_principals_sessionless_requests_share_observations_on_every_replica(
    tmp_path: Path,
) -> None:
    redis = RedisServer(redis_or_skip(), tmp_path / "redis")
    redis.start()
    root = make_root(tmp_path)
    flags = ("--tokens", str(_tokens(tmp_path)), "--observations", redis.url)
    try:
        async with http_server(root, *flags) as one, http_server(root, *flags) as two:
            modern = LATEST_MODERN_VERSION
            with anyio.fail_after(TIMEOUT):
                alice_on_one = _Agent(one.url, ALICE, "claude", modern)
                alice_on_two = _Agent(two.url, ALICE, "claude", modern)
                assert await alice_on_one.call("read", {"file_path": "notes.txt"}) is None
                # Each request is a new connection: nothing but the principal links them.
                assert await _Agent(two.url, BOB, "claude", modern).call("edit", EDIT) == (
                    "FS_NOT_OBSERVED"
                )
                assert await _Agent(two.url, ALICE, "cursor", modern).call("edit", EDIT) == (
                    "FS_NOT_OBSERVED"
                )
                assert await alice_on_two.call("edit", EDIT) is None
                again = {"file_path": "notes.txt", "old_string": "BETA", "new_string": "b"}
                # Alice's own edit left her observation current, on the other replica too.
                assert await alice_on_one.call("edit", again) is None
    finally:
        redis.stop()
    assert (root / "notes.txt").read_text(encoding="utf-8") == "alpha\nb\ngamma\n"


async def test_a_handshake_era_session_keeps_its_own_observations_over_http(
    tmp_path: Path,
) -> None:
    root = make_root(tmp_path)
    async with http_server(root, "--tokens", str(_tokens(tmp_path))) as server:
        with anyio.fail_after(TIMEOUT):
            # Sessionless: one principal's separate requests share on one server too.
            alice = _Agent(server.url, ALICE, "claude", LATEST_MODERN_VERSION)
            assert await alice.call("read", {"file_path": "notes.txt"}) is None
            # A handshake-era session of the same agent and client name owns its own (§6).
            legacy = _Agent(server.url, ALICE, "claude", "legacy")
            assert await legacy.call("edit", EDIT) == "FS_NOT_OBSERVED"
            assert await alice.call("edit", EDIT) is None
    assert (root / "notes.txt").read_text(encoding="utf-8") == "alpha\nBETA\ngamma\n"


async def test_a_client_that_asks_for_the_2026_07_28_era_over_http_is_served_in_it(
    tmp_path: Path,
) -> None:
    root = make_root(tmp_path)
    async with http_server(root) as server:
        with anyio.fail_after(TIMEOUT):
            # `server/discover` is answered (no longer declined), so `auto` stays modern.
            async with client(server.url, options={"mode": "auto"}) as modern:
                assert modern.protocol_version == LATEST_MODERN_VERSION
                assert modern.instructions
                assert not (await modern.call_tool("read", {"file_path": "notes.txt"})).is_error
                assert not (await modern.call_tool("edit", EDIT)).is_error
    assert (root / "notes.txt").read_text(encoding="utf-8") == "alpha\nBETA\ngamma\n"
