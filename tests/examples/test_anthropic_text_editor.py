"""examples/anthropic_text_editor.py end to end, against a scripted Messages endpoint."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .scripted import load_example, scripted_endpoint

EDITOR = "str_replace_based_edit_tool"


def _message(turn: int, content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
    return {
        "id": f"msg_{turn}",
        "type": "message",
        "role": "assistant",
        "model": "scripted",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def _use(call_id: str, **command: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": EDITOR, "input": command}


SCRIPT = [
    ([_use("toolu_view", command="view", path="notes.txt")], "tool_use"),
    (
        [_use("toolu_edit", command="str_replace", path="notes.txt", old_str="teh", new_str="the")],
        "tool_use",
    ),
    ([{"type": "text", "text": "Fixed the typo in notes.txt."}], "end_turn"),
]


def reply(turn: int, body: dict[str, Any]) -> dict[str, Any]:
    content, stop = SCRIPT[min(turn, len(SCRIPT) - 1)]
    return _message(turn, content, stop)


def test_example_claude_views_then_edits_with_its_own_tool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("fix teh typo\n", encoding="utf-8")
    with scripted_endpoint("/v1/messages", reply) as (base_url, requests):
        monkeypatch.setenv("ANTHROPIC_BASE_URL", base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        example = load_example("anthropic_text_editor")
        assert example.main([str(tmp_path), "Fix the typo", "--model", "scripted"]) == 0

    assert capsys.readouterr().out == "Fixed the typo in notes.txt.\n"
    assert notes.read_text(encoding="utf-8") == "fix the typo\n"
    assert len(requests) == 3
    offered = requests[0]["tools"]
    assert offered[0] == {"type": "text_editor_20250728", "name": EDITOR}
    assert [tool["name"] for tool in offered[1:]] == [
        "edit_files",
        "glob",
        "grep",
        "list",
        "move",
        "delete",
        "mkdir",
    ]
    view_result = requests[1]["messages"][-1]["content"][0]
    assert view_result == {
        "type": "tool_result",
        "tool_use_id": "toolu_view",
        "content": "1: fix teh typo",
        "is_error": False,
    }
    edit_result = requests[2]["messages"][-1]["content"][0]
    assert edit_result["tool_use_id"] == "toolu_edit"
    assert edit_result["is_error"] is False
    assert edit_result["content"].startswith(f"The file {notes.resolve()} has been edited.")
