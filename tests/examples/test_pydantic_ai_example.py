"""examples/pydantic_ai_agent.py on pydantic-ai's function model (pydantic-ai needs 3.11+)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai", reason="pydantic-ai supports Python 3.11+ only")

from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from .scripted import load_example

pytestmark = pytest.mark.anyio


async def test_pydantic_ai_example_reads_then_edits(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("fix teh typo\n", encoding="utf-8")
    calls: list[Any] = [
        ("read", {"file_path": "notes.txt"}),
        ("edit", {"file_path": "notes.txt", "old_string": "teh", "new_string": "the"}),
    ]

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if calls:
            name, args = calls.pop(0)
            return ModelResponse(parts=[ToolCallPart(name, args)])
        return ModelResponse(parts=[TextPart("Fixed.")])

    example = load_example("pydantic_ai_agent")
    assert await example.run_agent(FunctionModel(respond), str(tmp_path), "Fix it") == "Fixed."
    assert notes.read_text(encoding="utf-8") == "fix the typo\n"
