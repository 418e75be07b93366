"""examples/openai_apply_patch.py end to end, against a scripted Responses endpoint."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .scripted import load_example, scripted_endpoint

SCRIPT: list[list[dict[str, Any]]] = [
    [
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_read",
            "name": "read",
            "arguments": json.dumps({"file_path": "notes.txt"}),
            "status": "completed",
        }
    ],
    [
        {
            "type": "apply_patch_call",
            "id": "apc_1",
            "call_id": "call_patch",
            "status": "completed",
            "operation": {
                "type": "update_file",
                "path": "notes.txt",
                "diff": "@@\n-fix teh typo\n+fix the typo\n",
            },
        }
    ],
    [
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [
                {"type": "output_text", "text": "Fixed the typo in notes.txt.", "annotations": []}
            ],
        }
    ],
]


def reply(turn: int, body: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"resp_{turn}",
        "object": "response",
        "created_at": 0,
        "model": "scripted",
        "status": "completed",
        "output": SCRIPT[min(turn, len(SCRIPT) - 1)],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }


def test_example_model_reads_then_patches_with_apply_patch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("fix teh typo\n", encoding="utf-8")
    with scripted_endpoint("/v1/responses", reply) as (base_url, requests):
        monkeypatch.setenv("OPENAI_BASE_URL", f"{base_url}/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        example = load_example("openai_apply_patch")
        assert example.main([str(tmp_path), "Fix the typo", "--model", "scripted"]) == 0

    assert capsys.readouterr().out == "Fixed the typo in notes.txt.\n"
    assert notes.read_text(encoding="utf-8") == "fix the typo\n"
    assert len(requests) == 3
    assert {"type": "apply_patch"} in requests[0]["tools"]
    read_reply = requests[1]["input"][-1]
    assert read_reply["type"] == "function_call_output"
    assert "1: fix teh typo" in read_reply["output"]
    patch_reply = requests[2]["input"][-1]
    assert patch_reply == {
        "type": "apply_patch_call_output",
        "call_id": "call_patch",
        "status": "completed",
        "output": f"Updated file {notes.resolve()}",
    }
