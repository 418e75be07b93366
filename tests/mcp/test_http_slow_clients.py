"""Slow and idle HTTP clients can't lock others out; sessions are capped and reaped; fd
exhaustion is logged once."""

from __future__ import annotations

import contextlib
import os
import re
import resource
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import httpx2
import pytest
from anyio.abc import SocketStream

from .http_testing import TIMEOUT, TOOLS, HttpServer, client, headers, http_server, open_session
from .mcp_testing import make_root

pytestmark = pytest.mark.anyio

PARTIAL_HEAD = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_root(tmp_path)


@contextlib.asynccontextmanager
async def connections(
    server: HttpServer, count: int, data: bytes
) -> AsyncIterator[list[SocketStream]]:
    """`count` connections to the server, each having sent `data`, closed at the end."""
    opened: list[SocketStream] = []
    try:
        for _ in range(count):
            stream = await anyio.connect_tcp(server.host, server.port)
            opened.append(stream)
            await stream.send(data)
        yield opened
    finally:
        for stream in opened:
            await stream.aclose()


async def until_closed(stream: SocketStream) -> None:
    """Until the server closes `stream` (whatever it sends before)."""
    with contextlib.suppress(anyio.EndOfStream, anyio.BrokenResourceError):
        while True:
            await stream.receive()


async def tool_names(url: str) -> list[str]:
    async with client(url) as mcp:
        return [tool.name for tool in (await mcp.list_tools()).tools]


async def test_a_client_is_served_while_1100_partial_requests_hold_connections(
    root: Path,
) -> None:
    # The attack: 1,100 connections, each stopped in the middle of a request head,
    # against a server with the usual limit of 1,024 file descriptors.
    # No stalled request times out meanwhile (an hour): the client is served because the
    # server makes room, never because the stalled ones were cut off, however slowly a
    # loaded machine works through them.
    async with (
        http_server(root, nofile=1024, limits={"request_timeout": 3600.0}) as server,
        connections(server, 1100, PARTIAL_HEAD) as idle,
    ):
        # A guard against a hang, not a speed target: the server first works through 1,100
        # stalled connections (closing the longest-waiting to make room).
        with anyio.fail_after(3 * TIMEOUT):
            assert await tool_names(server.url) == TOOLS
            for stream in idle[:100]:  # the longest-waiting ones made room
                await until_closed(stream)
        assert "Traceback" not in server.stderr
        assert "cannot accept connections" not in server.stderr


async def test_a_request_that_does_not_arrive_in_time_is_cut_off_and_others_go_on(
    root: Path,
) -> None:
    slow_body = (
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n"
        b"Content-Type: application/json\r\n\r\n" + b"x" * 10
    )
    # The client that goes on must itself send each request within the timeout of its
    # connection opening (or its previous response ending): at 0.5 s a loaded machine, which
    # has paused this process for over a second between two requests, could see it cut off.
    async with http_server(root, limits={"request_timeout": 5.0}) as server:
        with anyio.fail_after(TIMEOUT):
            async with client(server.url) as mcp:
                async with (
                    connections(server, 1, b"") as silent,
                    connections(server, 1, PARTIAL_HEAD) as partial,
                    connections(server, 1, slow_body) as body,
                ):
                    for stream in (*silent, *partial, *body):
                        await until_closed(stream)
                # Its GET stream has been open longer than the request timeout: a request
                # that has arrived is never cut off.
                listing = await mcp.list_tools()
    assert [tool.name for tool in listing.tools] == TOOLS


async def test_an_initialize_beyond_the_session_cap_is_refused_with_503(root: Path) -> None:
    # No session idles out here (the default idle timeout): with a short one, a loaded
    # machine that takes longer than it between the second session and the third initialize
    # lets the server reap the second, and the third is rightly served (seen: 200, not 503).
    async with http_server(root, limits={"max_sessions": 2}) as server:
        with anyio.fail_after(TIMEOUT):
            async with client(server.url) as mcp, httpx2.AsyncClient() as http:
                await open_session(http, server.url)
                refused = await http.post(
                    server.url,
                    json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
                    headers=headers(),
                )
                assert refused.status_code == 503
                result = await mcp.call_tool("read", {"file_path": "notes.txt"})
    assert not result.is_error


async def test_an_abandoned_session_is_reaped_and_frees_its_place_while_a_connected_one_lives(
    root: Path,
) -> None:
    # Every live session here is idle for a moment too: between its initialize and its next
    # request (the raw ones' `initialized`, the SDK client's GET stream), which a loaded
    # machine has stretched past a second. The idle timeout is what such a pause may last;
    # the abandoned session's whole wait is that long, never more.
    limits = {"max_sessions": 2, "session_idle_timeout": 5.0}
    async with http_server(root, limits=limits) as server:
        with anyio.fail_after(TIMEOUT):
            async with client(server.url) as mcp, httpx2.AsyncClient() as http:
                abandoned = await open_session(http, server.url)
                session_id = abandoned["mcp-session-id"]
                await server.wait_for(f"Session {session_id} idle timeout")
                ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
                gone = await http.post(server.url, json=ping, headers=abandoned)
                assert gone.status_code == 404
                # The cap is 2 and the connected session lives (its call below): a new one
                # fits only because the reaped one's place was freed.
                await open_session(http, server.url)
                result = await mcp.call_tool("read", {"file_path": "notes.txt"})
    assert not result.is_error


def _open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")
async def test_running_out_of_file_descriptors_is_logged_once_until_it_recovers(
    root: Path,
) -> None:
    async with http_server(root) as server:
        pid = server.process.pid
        soft, hard = resource.prlimit(pid, resource.RLIMIT_NOFILE)
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (_open_fds(pid), hard))
        with anyio.fail_after(TIMEOUT):
            async with connections(server, 20, PARTIAL_HEAD):
                await server.wait_for("cannot accept connections")
                resource.prlimit(pid, resource.RLIMIT_NOFILE, (soft, hard))
                await server.wait_for("accepting connections again")
            assert await tool_names(server.url) == TOOLS
        log = server.stderr
        assert log.count("cannot accept connections") == 1
        assert "Traceback" not in log
        failed = re.search(r"accepting connections again \((\d+) accept attempts failed", log)
        assert failed is not None
        assert int(failed.group(1)) > 1
