"""examples/openai_agent.py end to end, against a scripted OpenAI-compatible server on loopback."""

from __future__ import annotations

import importlib.util
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from dsh_fs import Workspace
from dsh_fs.adapters import openai_tools

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "openai_agent.py"


def _load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("openai_agent_example", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def _completion(message: dict[str, Any], turn: int) -> dict[str, Any]:
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return {
        "id": f"chatcmpl-{turn}",
        "object": "chat.completion",
        "created": 0,
        "model": "scripted",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
    }


SCRIPT: list[dict[str, Any]] = [
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [_tool_call("call_read", "read", {"file_path": "notes.txt"})],
    },
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            _tool_call(
                "call_edit",
                "edit",
                {"file_path": "notes.txt", "old_string": "teh", "new_string": "the"},
            )
        ],
    },
    {"role": "assistant", "content": "Fixed the typo in notes.txt."},
]


@pytest.fixture
def scripted_server() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A Chat Completions endpoint replaying SCRIPT; yields its base URL and the requests."""
    requests: list[dict[str, Any]] = []

    async def completions(request: Request) -> JSONResponse:
        body = await request.json()
        requests.append(body)
        turn = len(requests) - 1
        return JSONResponse(_completion(SCRIPT[min(turn, len(SCRIPT) - 1)], turn))

    app = Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", log_config=None))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1", requests
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
        assert not thread.is_alive()


def test_example_agent_reads_then_edits_and_answers(
    tmp_path: Path,
    scripted_server: tuple[str, list[dict[str, Any]]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    base_url, requests = scripted_server
    notes = tmp_path / "notes.txt"
    notes.write_text("fix teh typo\n", encoding="utf-8")
    monkeypatch.setenv("OPENAI_BASE_URL", base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")

    example = _load_example()
    assert example.main([str(tmp_path), "Fix the typo", "--model", "scripted"]) == 0

    assert capsys.readouterr().out == "Fixed the typo in notes.txt.\n"
    assert notes.read_text(encoding="utf-8") == "fix the typo\n"
    assert len(requests) == 3
    workspace = Workspace.sandbox(tmp_path)
    first = requests[0]
    assert first["tools"] == openai_tools(workspace)
    assert first["messages"][0] == {"role": "system", "content": workspace.system_prompt()}
    read_reply = requests[1]["messages"][-1]
    assert read_reply["role"] == "tool"
    assert read_reply["tool_call_id"] == "call_read"
    assert "1: fix teh typo" in read_reply["content"]
    edit_reply = requests[2]["messages"][-1]
    assert edit_reply == {
        "role": "tool",
        "tool_call_id": "call_edit",
        "content": f"The file {notes} has been updated successfully.",
    }
