"""examples/langchain_agent.py and examples/deep_agent.py on a scripted chat model."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("langgraph", reason="the langchain extra is not installed")
pytest.importorskip("deepagents", reason="deepagents supports Python 3.11+ only")

from ..scripted_chat import ScriptedChatModel, call, say, tool_messages
from .scripted import load_example

pytestmark = pytest.mark.anyio


async def test_langchain_example_reads_then_edits(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("fix teh typo\n", encoding="utf-8")
    model = ScriptedChatModel(
        script=[
            call("read", {"file_path": "notes.txt"}, "c1"),
            call(
                "edit",
                {"file_path": "notes.txt", "old_string": "teh", "new_string": "the"},
                "c2",
            ),
            say("Fixed."),
        ]
    )
    example = load_example("langchain_agent")
    assert await example.run_agent(model, str(tmp_path), "Fix the typo") == "Fixed."
    assert [m.status for m in tool_messages(model.seen[-1])] == ["success", "success"]
    assert model.seen[0][0].text.startswith("Use the read tool")  # our system prompt first
    assert notes.read_bytes() == b"fix the typo\n"


async def test_deep_agent_example_reads_then_edits(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("fix teh typo\n", encoding="utf-8")
    model = ScriptedChatModel(
        script=[
            call("read_file", {"file_path": "/notes.txt"}, "c1"),
            call(
                "edit_file",
                {"file_path": "/notes.txt", "old_string": "teh", "new_string": "the"},
                "c2",
            ),
            say("Fixed."),
        ]
    )
    example = load_example("deep_agent")
    assert await example.run_agent(model, str(tmp_path), "Fix the typo") == "Fixed."
    assert [m.status for m in tool_messages(model.seen[-1])] == ["success", "success"]
    assert notes.read_bytes() == b"fix the typo\n"
