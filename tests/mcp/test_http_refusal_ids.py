"""Over HTTP, the SDK's refusals answer to the request's id, not ``id: null`` (issue 22,
item 7): an unknown session id, a missing one, an ``Accept`` not served, the session cap."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from .http_testing import TIMEOUT, HttpServer, headers, http_server, open_session
from .mcp_testing import make_root

pytestmark = pytest.mark.anyio

LIST = {"jsonrpc": "2.0", "id": "list-7", "method": "tools/list"}
INIT = {
    "jsonrpc": "2.0",
    "id": 41,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_root(tmp_path_factory.mktemp("refusals"))


@pytest.fixture(scope="module")
async def server(root: Path) -> AsyncIterator[HttpServer]:
    async with http_server(root, limits={"max_sessions": 1}) as running:
        yield running


async def post(server: HttpServer, message: Any, sent: dict[str, str]) -> httpx2.Response:
    with anyio.fail_after(TIMEOUT):
        async with httpx2.AsyncClient(timeout=TIMEOUT) as http:
            response: httpx2.Response = await http.post(server.url, json=message, headers=sent)
    return response


async def test_an_unknown_session_id_is_answered_to_the_requests_id(server: HttpServer) -> None:
    sent = {**headers(), "mcp-session-id": "no-such-session", "mcp-protocol-version": "2025-06-18"}
    response = await post(server, LIST, sent)
    assert response.status_code == 404
    assert response.json()["id"] == "list-7"
    assert response.json()["error"]["message"] == "Session not found"
    assert int(response.headers["content-length"]) == len(response.content)


async def test_a_missing_session_id_is_answered_to_the_requests_id(server: HttpServer) -> None:
    response = await post(server, LIST, headers())
    assert response.status_code == 400, response.text
    assert response.json()["id"] == "list-7"


async def test_an_accept_the_server_does_not_serve_is_answered_to_the_requests_id(
    server: HttpServer,
) -> None:
    response = await post(server, INIT, headers(accept="text/html"))
    assert response.status_code == 406
    assert response.json()["id"] == 41


async def test_the_session_cap_is_answered_to_the_requests_id(server: HttpServer) -> None:
    with anyio.fail_after(TIMEOUT):
        async with httpx2.AsyncClient(timeout=TIMEOUT) as http:
            await open_session(http, server.url)  # the one session allowed
            response = await http.post(server.url, json=INIT, headers=headers())
    assert response.status_code == 503
    assert response.json()["id"] == 41
    assert response.json()["error"]["message"] == "Too many open sessions"


async def test_a_refused_notification_still_has_no_id(server: HttpServer) -> None:
    sent = {**headers(), "mcp-session-id": "no-such-session", "mcp-protocol-version": "2025-06-18"}
    response = await post(server, {"jsonrpc": "2.0", "method": "notifications/initialized"}, sent)
    assert response.status_code == 404
    assert response.json()["id"] is None
