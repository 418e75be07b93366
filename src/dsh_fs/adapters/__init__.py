"""The adapters layer: the workspace's tools for agent frameworks and synchronous code.

Top layer, beside `dsh_fs.mcp`; below it sits `dsh_fs.workspace`. OpenAI-compatible
function calling, the Responses API with ``apply_patch``, Anthropic tool use with Claude's
own text editor (no vendor SDK is needed at runtime) and a blocking facade built on an
anyio portal. The OpenAI Agents SDK (`agents_tools`, `WorkspaceEditor`) and pydantic-ai
(`WorkspaceToolset`), LangChain (`langchain_tools`) and deep agents (`WorkspaceBackend`)
integrations load their framework on first use.
"""

import importlib
import sys
from typing import TYPE_CHECKING, Any

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
from ._sync import SyncJournal, SyncSession, SyncWorkspace

if TYPE_CHECKING:
    from ._agents import WorkspaceEditor, agents_tools
    from ._deepagents import WorkspaceBackend
    from ._langchain import langchain_tools
    from ._pydantic_ai import WorkspaceToolset

# These need their framework installed (`dsh-fs[agents]`, `dsh-fs[pydantic-ai]`,
# `dsh-fs[langchain]`, `dsh-fs[deepagents]`), so they are imported on first use, not with
# the package.
_LAZY = {
    "WorkspaceBackend": "._deepagents",
    "WorkspaceEditor": "._agents",
    "WorkspaceToolset": "._pydantic_ai",
    "agents_tools": "._agents",
    "langchain_tools": "._langchain",
}


_NEEDS_3_11 = {"WorkspaceBackend": "deepagents", "WorkspaceToolset": "pydantic-ai"}
"""The names whose framework supports Python 3.11+ only (their extra installs nothing on
3.10), by the extra that brings it."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    extra = _NEEDS_3_11.get(name)
    if extra is not None and sys.version_info < (3, 11):
        # Not the framework's own ModuleNotFoundError: installing it again would not help.
        raise ImportError(
            f"dsh_fs.adapters.{name} needs Python 3.11+ ({extra} supports no older Python; "
            f"the {extra} extra installs it only there); this is Python "
            f"{sys.version_info.major}.{sys.version_info.minor}",
            name=f"{__name__}.{name}",
        )
    return getattr(importlib.import_module(module, __name__), name)


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
    "SyncJournal",
    "SyncSession",
    "SyncWorkspace",
    "TextEditorTool",
    "WorkspaceBackend",
    "WorkspaceEditor",
    "WorkspaceToolset",
    "agents_tools",
    "anthropic_tool_results",
    "anthropic_tools",
    "execute_openai_response",
    "execute_openai_tool_calls",
    "langchain_tools",
    "openai_responses_tools",
    "openai_tools",
    "run_apply_patch",
    "run_text_editor",
]
