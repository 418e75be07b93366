"""The adapters layer: the workspace's tools for agent frameworks and synchronous code.

Top layer, beside `dsh_fs.mcp`; below it sits `dsh_fs.workspace`. OpenAI-compatible
function calling, the Responses API with ``apply_patch``, Anthropic tool use with Claude's
own text editor (no vendor SDK is needed at runtime) and a blocking facade built on an
anyio portal.
"""

from ._anthropic import AnthropicTool, AnthropicToolResult, anthropic_tool_results, anthropic_tools
from ._anthropic_editor import EditorOutcome, TextEditorTool, run_text_editor
from ._openai import (
    OpenAIFunction,
    OpenAITool,
    OpenAIToolMessage,
    execute_openai_tool_calls,
    openai_tools,
)
from ._openai_responses import (
    ApplyPatchCallOutput,
    FunctionCallOutput,
    PatchOutcome,
    ResponsesFunctionTool,
    execute_openai_response,
    openai_responses_tools,
    run_apply_patch,
)
from ._sync import SyncSession, SyncWorkspace

__all__ = [
    "AnthropicTool",
    "AnthropicToolResult",
    "ApplyPatchCallOutput",
    "EditorOutcome",
    "FunctionCallOutput",
    "OpenAIFunction",
    "OpenAITool",
    "OpenAIToolMessage",
    "PatchOutcome",
    "ResponsesFunctionTool",
    "SyncSession",
    "SyncWorkspace",
    "TextEditorTool",
    "anthropic_tool_results",
    "anthropic_tools",
    "execute_openai_response",
    "execute_openai_tool_calls",
    "openai_responses_tools",
    "openai_tools",
    "run_apply_patch",
    "run_text_editor",
]
