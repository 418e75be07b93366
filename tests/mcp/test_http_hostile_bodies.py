"""Over HTTP, hostile arguments get the library's answers, to their request's id.

The SDK's HTTP transport parses bodies strictly: a lone surrogate escape, nesting 200 deep
or an integer of 5,000 digits used to get ``-32700`` with ``id: null``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from dsh_fs.runtime import parse_json
from dsh_fs.workspace import Workspace

from .http_testing import (
    TIMEOUT,
    HttpServer,
    arguments_call,
    http_server,
    open_session,
    sse_message,
)
from .mcp_testing import make_root

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_root(tmp_path_factory.mktemp("hostile"))


@pytest.fixture(scope="module")
async def server(root: Path) -> AsyncIterator[HttpServer]:
    async with http_server(root) as running:
        yield running


async def library_answer(root: Path, tool: str, arguments_json: str) -> tuple[str | None, str]:
    """What a fresh `Session` of the library answers to these arguments (code, text)."""
    async with Workspace.sandbox(root) as workspace:
        result = await workspace.session().call(tool, parse_json(arguments_json))
    text = result.text.encode("utf-8", "backslashreplace").decode("utf-8")
    return result.code, text


async def post(server: HttpServer, body: bytes) -> httpx2.Response:
    with anyio.fail_after(TIMEOUT):
        async with httpx2.AsyncClient(timeout=TIMEOUT) as http:
            session = await open_session(http, server.url)
            response: httpx2.Response = await http.post(server.url, content=body, headers=session)
    return response


def result_of(message: dict[str, Any]) -> tuple[str | None, str]:
    result = message["result"]
    return (result.get("_meta") or {}).get("dsh-fs/code"), result["content"][0]["text"]


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("write", '{"file_path": "new.txt", "content": ' + "[" * 200 + "]" * 200 + "}"),
        ("write", '{"file_path": "new.txt", "content": ' + "[" * 900 + "]" * 900 + "}"),
        ("write", '{"file_path": "new.txt", "content": "x\\ud800y"}'),
        ("write", '{"file_path": "new.txt", "content": ' + "1" * 5000 + "}"),
        ("read", '{"file_path": "notes.txt", "offset": -0}'),
        ("read", '{"file_path": "a\\ud800.txt"}'),
    ],
    ids=[
        "nested-200",
        "nested-900",
        "lone-surrogate",
        "5000-digits",
        "negative-zero",
        "surrogate-path",
    ],
)
async def test_hostile_arguments_get_the_librarys_answer_to_their_id(
    server: HttpServer, root: Path, tool: str, arguments: str
) -> None:
    response = await post(server, arguments_call(41, tool, arguments))
    message = sse_message(response)
    assert response.status_code == 200
    assert message["id"] == 41
    assert result_of(message) == await library_answer(root, tool, arguments)
    assert not (root / "new.txt").exists()


@pytest.mark.parametrize(
    ("body", "status", "code", "message"),
    [
        (
            arguments_call(42, "write", '{"content": ' + "[" * 100_000 + "]" * 100_000 + "}"),
            400,
            -32700,
            "Parse error: nested too deeply",
        ),
        (
            arguments_call(42, "w\\ud800", "{}"),
            400,
            -32602,
            "Invalid params: a string holds a lone surrogate",
        ),
        (
            arguments_call(42, "write", '{"content": "' + "x" * (5 << 20) + '"}'),
            413,
            -32600,
            "Request body too large: the limit is 4194304 bytes",
        ),
    ],
    ids=["nested-100000", "surrogate-in-name", "over-4-MiB"],
)
async def test_what_the_library_cannot_answer_gets_a_json_rpc_error_to_its_id(
    server: HttpServer, body: bytes, status: int, code: int, message: str
) -> None:
    response = await post(server, body)
    assert response.status_code == status
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": 42,
        "error": {"code": code, "message": message},
    }
