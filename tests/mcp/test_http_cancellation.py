"""Over streamable HTTP, a request the client cancelled gets nothing more: no ``-32800``
answer, no progress sent after the server read the cancellation (MCP: a cancelled request
is not answered). The server runs in this process, so a test knows when its call stopped.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.message import SessionMessage
from mcp_types.jsonrpc import JSONRPCError, JSONRPCNotification

from dsh_fs import Workspace
from dsh_fs.discovery import DiscoveryConfig
from dsh_fs.mcp.http import bind_socket, serve_http
from dsh_fs.runtime import Context, Plugin, PluginScope, ToolExecution
from dsh_fs.tools import FsTool

from ..tools.test_search_progress import HeldWalk
from .http_testing import TIMEOUT, TOKEN, open_session

pytestmark = pytest.mark.anyio


class LateProgressTool(FsTool[None, str]):
    """Reports progress, then (shielded from the cancellation) once more when the test says
    the cancellation reached the server, then waits to be cancelled."""

    name = "hold"
    description = "Hold until cancelled."
    params = ()

    def __init__(self) -> None:
        super().__init__()
        self.cancel_sent = anyio.Event()
        self.stopped = anyio.Event()

    def parse_values(self, raw: Mapping[str, Any]) -> None:
        return None

    async def run(self, context: Context, execution: ToolExecution, args: None) -> str:
        assert execution.progress is not None
        try:
            await execution.progress(1, 2, "started")
            with anyio.CancelScope(shield=True):
                await self.cancel_sent.wait()
                await execution.progress(2, 2, "late")  # the last one always goes out
            await anyio.sleep_forever()
        finally:
            self.stopped.set()
        return "never"

    def render(self, value: str) -> str:
        return value

    def to_json(self, value: str) -> dict[str, Any]:
        return {"text": value}


class LatePlugin(Plugin[None]):
    name = "late-progress"

    def __init__(self, tool: LateProgressTool) -> None:
        self.tool = tool

    def apply(self, scope: PluginScope, config: None) -> None:
        scope.register_tool(self.tool)


@asynccontextmanager
async def serving(workspace: Workspace) -> AsyncIterator[str]:
    """`workspace` served over HTTP in this process; its URL."""
    sock = bind_socket("127.0.0.1", 0)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    ready = anyio.Event()
    with sock:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(lambda: serve_http(workspace, sock, token=TOKEN, on_ready=ready.set))
            with anyio.fail_after(TIMEOUT):
                await ready.wait()
            yield url
            tasks.cancel_scope.cancel()


def events(lines: list[str]) -> list[Any]:
    return [json.loads(line[5:]) for line in lines if line.startswith("data:") and line[5:].strip()]


async def test_a_cancelled_request_gets_no_answer_and_no_progress_after_the_cancellation(
    tmp_path: Path,
) -> None:
    tool = LateProgressTool()
    call = {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "tools/call",
        "params": {"name": "hold", "arguments": {}, "_meta": {"progressToken": "p5"}},
    }
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}}
    async with Workspace.local(tmp_path) as workspace:
        workspace.context.use(LatePlugin(tool), None)
        async with serving(workspace) as url, httpx2.AsyncClient(timeout=TIMEOUT) as http:
            with anyio.fail_after(TIMEOUT):
                session = await open_session(http, url)
                async with http.stream("POST", url, json=call, headers=session) as response:
                    assert response.headers["content-type"].startswith("text/event-stream")
                    lines = response.aiter_lines()
                    before: list[str] = []
                    async for line in lines:
                        before.append(line)
                        if events(before):
                            break
                    sent = await http.post(url, json=cancel, headers=session)
                    assert sent.status_code == 202
                    tool.cancel_sent.set()
                    await tool.stopped.wait()
                    after = [line async for line in lines]  # until the server ends the stream
                listed = await http.post(
                    url, json={"jsonrpc": "2.0", "id": 6, "method": "tools/list"}, headers=session
                )
    assert [event["params"]["message"] for event in events(before)] == ["started"]
    assert events(after) == []  # neither the late progress nor a -32800 for id 5
    assert listed.status_code == 200
    assert '"id":6' in listed.text


@asynccontextmanager
async def tapped(url: str, seen: list[SessionMessage]) -> AsyncIterator[Any]:
    """The SDK's streamable HTTP client transport, keeping every message it delivers."""
    async with (
        create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"}) as http,
        streamable_http_client(url, http_client=http) as (read, write),
    ):
        send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](100)

        async def tap(source: Any) -> None:
            async with send:
                async for message in source:
                    if isinstance(message, SessionMessage):
                        seen.append(message)
                    await send.send(message)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(tap, read)
            yield receive, write
            tasks.cancel_scope.cancel()


async def test_the_sdk_client_cancelling_a_slow_grep_over_http_hears_nothing_more_of_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "notes.txt").write_text("main idea\n", encoding="utf-8")
    never = anyio.Event()  # the walk stays held: the grep can only end by cancellation
    provider = HeldWalk(tmp_path, never)
    config = DiscoveryConfig(time_budget=30.0, native=False, progress_interval=0.01)
    started = anyio.Event()
    seen: list[SessionMessage] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        started.set()

    async with (
        Workspace(provider, cwd=str(tmp_path), discovery=config) as workspace,
        serving(workspace) as url,
    ):
        with anyio.fail_after(TIMEOUT):
            async with Client(tapped(url, seen)) as client:
                async with anyio.create_task_group() as calls:
                    calls.start_soon(
                        lambda: client.call_tool(
                            "grep", {"pattern": "main"}, progress_callback=on_progress
                        )
                    )
                    await started.wait()
                    calls.cancel_scope.cancel()  # the SDK client sends notifications/cancelled
                await provider.abandoned.wait()  # the server stopped the search
                listed = await client.call_tool("list", {})
    assert "notes.txt" in listed.content[0].text  # type: ignore[union-attr]
    answered = [m.message for m in seen if isinstance(m.message, JSONRPCError)]
    # The stream ended without an answer: the client resolves the abandoned request itself
    # (its own error, never the server's -32800).
    assert all(error.error.code != -32800 for error in answered), answered
    progress = [m for m in seen if isinstance(m.message, JSONRPCNotification)]
    assert progress  # the grep did report while it ran
