"""`DiscoveryPlugin`: registers glob, grep and list and their guidance sections.

A plugin of its own, apart from read/write/edit, so it can be left out or removed; it
records no observation, so the policy never learns anything from it.
"""

from __future__ import annotations

from dsh_fs.runtime import Plugin, PluginScope, PromptSection

from . import _glob, _grep, _list
from ._searching import DiscoveryConfig

__all__ = ["DiscoveryPlugin"]


class DiscoveryPlugin(Plugin[DiscoveryConfig | None]):
    """The three discovery tools over the context's `fs` service.

    Apply with ``context.use(DiscoveryPlugin(), None)`` (or a `DiscoveryConfig`) after
    providing `FS`; `names` limits which tools it registers.
    """

    name = "fs-discovery"

    def __init__(self, names: tuple[str, ...] = ("glob", "grep", "list")) -> None:
        self.names = names
        """The tools registered."""

    def apply(self, scope: PluginScope, config: DiscoveryConfig | None) -> None:
        """Register the tools and their prompt sections (ids ``tools:<name>``)."""
        config = config if config is not None else DiscoveryConfig()
        for tool, prompt in (
            (_glob.GlobTool(config), _glob.PROMPT),
            (_grep.GrepTool(config), _grep.PROMPT),
            (_list.ListTool(config), _list.PROMPT),
        ):
            if tool.name in self.names:
                scope.register_tool(tool)
                scope.add_prompt_section(PromptSection(id=f"tools:{tool.name}", text=prompt))
