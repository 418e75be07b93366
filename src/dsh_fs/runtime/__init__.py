"""The runtime layer: context, services, events, plugins, tools and prompt sections.

It knows no files. The fs contract (`dsh_fs.fs`) names its events and its service with the
keys defined here; the tools and the policy plug into a `Context` through `Plugin`s. Only
`dsh_fs.errors` sits below it.
"""

from ._context import Context, Plugin, PluginHandle, PluginScope, ServiceKey, Tool, ToolRegistry
from ._events import Dispose, EventBus, Next, Signal, Waterfall, WaterfallListener
from ._json import parse_json
from ._prompts import PromptRegistry, PromptSection
from ._result import ToolResult
from ._session import AgentSession, ProgressReporter, ToolExecution
from ._tool import ToolAnnotations, ToolArgumentError, ToolError

__all__ = [
    "AgentSession",
    "Context",
    "Dispose",
    "EventBus",
    "Next",
    "Plugin",
    "PluginHandle",
    "PluginScope",
    "ProgressReporter",
    "PromptRegistry",
    "PromptSection",
    "ServiceKey",
    "Signal",
    "Tool",
    "ToolAnnotations",
    "ToolArgumentError",
    "ToolError",
    "ToolExecution",
    "ToolRegistry",
    "ToolResult",
    "Waterfall",
    "WaterfallListener",
    "parse_json",
]
