"""examples/agents_sdk.py on the Agents SDK's scripted model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agents.testing import ScriptedModel
from openai.types.responses import (
    ResponseApplyPatchToolCall,
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from .scripted import load_example

pytestmark = pytest.mark.anyio


async def test_agents_sdk_example_reads_then_patches(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("fix teh typo\n", encoding="utf-8")
    model = ScriptedModel(
        [
            [
                ResponseFunctionToolCall(
                    type="function_call",
                    call_id="call_read",
                    name="read",
                    arguments=json.dumps({"file_path": "notes.txt"}),
                )
            ],
            [
                ResponseApplyPatchToolCall.model_validate(
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
                )
            ],
            [
                ResponseOutputMessage(
                    type="message",
                    id="msg_1",
                    role="assistant",
                    status="completed",
                    content=[ResponseOutputText(type="output_text", text="Fixed.", annotations=[])],
                )
            ],
        ]
    )
    example = load_example("agents_sdk")
    assert await example.run_agent(model, str(tmp_path), "Fix the typo") == "Fixed."
    assert notes.read_text(encoding="utf-8") == "fix the typo\n"
    model.assert_complete()
