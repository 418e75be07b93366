"""The workspace layer: `Workspace` and `Session`, the public way to use dsh-fs.

A `Workspace` assembles a runtime context from a provider (`dsh_fs.providers`), the tools
(`dsh_fs.tools`) and the observation policy (`dsh_fs.policy`); a `Session` is one agent
conversation calling the tools. Adapters (MCP server, CLI, function-calling helpers) sit
above it.
"""

from ._workspace import ALL_TOOLS, ApproveOption, JournalOption, Session, Workspace

__all__ = ["ALL_TOOLS", "ApproveOption", "JournalOption", "Session", "Workspace"]
