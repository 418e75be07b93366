"""An image `read` through the adapters (SPEC §10): an image block where the vendor's tool
result carries one, else a text saying it is not shown. Shapes checked with the SDKs' types."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from anthropic.types import ToolResultBlockParam, ToolUseBlock
from openai.types.chat import ChatCompletionToolMessageParam
from openai.types.responses import ResponseFunctionToolCall, ResponseInputItemParam
from pydantic import TypeAdapter

from dsh_fs import Workspace
from dsh_fs.adapters import (
    anthropic_tool_results,
    execute_openai_response,
    execute_openai_tool_calls,
)

from ..images import png

pytestmark = pytest.mark.anyio

B64 = base64.b64encode(png()).decode("ascii")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "red.png").write_bytes(png())
    return tmp_path.resolve()


def _text(root: Path) -> str:
    return (
        f"<path>{root}/red.png</path>\n<type>image</type>\n<content>\n"
        f"image/png, {len(png())} bytes\n</content>"
    )


async def test_anthropic_gets_an_image_block_from_read_and_from_the_text_editor(
    root: Path,
) -> None:
    calls = [
        ToolUseBlock(id="toolu_1", name="read", input={"file_path": "red.png"}, type="tool_use"),
        ToolUseBlock(
            id="toolu_2",
            name="str_replace_based_edit_tool",
            input={"command": "view", "path": "red.png"},
            type="tool_use",
        ),
    ]
    async with Workspace.sandbox(root) as workspace:
        results = await anthropic_tool_results(workspace.session(), calls)
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": B64}}
    for result in results:
        TypeAdapter(ToolResultBlockParam).validate_python(result)
        assert result["content"] == [image]
        assert not result["is_error"]


async def test_the_responses_api_gets_the_text_and_an_input_image(root: Path) -> None:
    call = ResponseFunctionToolCall(
        type="function_call",
        id="fc_1",
        call_id="call_1",
        name="read",
        arguments='{"file_path": "red.png"}',
    )
    async with Workspace.sandbox(root) as workspace:
        (reply,) = await execute_openai_response(workspace.session(), [call])
    TypeAdapter(ResponseInputItemParam).validate_python(reply)
    output: Any = reply["output"]
    assert output == [
        {"type": "input_text", "text": _text(root)},
        {"type": "input_image", "image_url": f"data:image/png;base64,{B64}", "detail": "auto"},
    ]


async def test_chat_completions_tool_messages_say_the_image_is_not_shown(root: Path) -> None:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "read", "arguments": '{"file_path": "red.png"}'},
    }
    async with Workspace.sandbox(root) as workspace:
        (message,) = await execute_openai_tool_calls(workspace.session(), [call])
    TypeAdapter(ChatCompletionToolMessageParam).validate_python(message)
    assert message["content"] == (
        f"{_text(root)}\n(The image is not shown: this tool result can carry text only.)"
    )
