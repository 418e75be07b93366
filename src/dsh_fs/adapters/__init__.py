"""The adapters layer: the workspace's tools for agent frameworks and synchronous code.

Top layer, beside `dsh_fs.mcp`; below it sits `dsh_fs.workspace`. OpenAI-compatible
function calling, Anthropic tool use with Claude's own text editor (neither SDK is needed
at runtime) and a blocking facade built on an anyio portal.
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
from ._sync import SyncSession, SyncWorkspace

__all__ = [
    "AnthropicTool",
    "AnthropicToolResult",
    "EditorOutcome",
    "OpenAIFunction",
    "OpenAITool",
    "OpenAIToolMessage",
    "SyncSession",
    "SyncWorkspace",
    "TextEditorTool",
    "anthropic_tool_results",
    "anthropic_tools",
    "execute_openai_tool_calls",
    "openai_tools",
    "run_text_editor",
]
