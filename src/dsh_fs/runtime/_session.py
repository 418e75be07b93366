"""Agent sessions and tool executions: who is acting, as the runtime sees it."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Protocol

__all__ = ["AgentSession", "ProgressReporter", "ToolExecution"]

_session_ids = itertools.count(1)


class AgentSession:
    """One agent conversation: the owner of observations, with its own working directory.

    Plugins keep per-session state keyed weakly on this object, so dropping the last
    reference to a session frees everything recorded for it.
    """

    __slots__ = ("__weakref__", "cwd", "id", "principal")

    def __init__(
        self, *, cwd: str | None = None, id: str | None = None, principal: str | None = None
    ) -> None:
        self.cwd = cwd
        """Base for relative paths; None means the provider's default base."""
        self.id = id if id is not None else f"session-{next(_session_ids)}"
        """A label for logs; identity is the object, not this string."""
        self.principal = principal
        """Who owns the observations in a shared ledger (SPEC §14): sessions with the same
        principal (one agent and client name, on any replica) share them; None: this
        session object alone, as in memory."""

    def __repr__(self) -> str:
        return f"AgentSession(id={self.id!r}, cwd={self.cwd!r})"


class ProgressReporter(Protocol):
    """Where a long tool call says how far it got (an MCP client's progress token, a UI).

    A tool calls it with a `progress` that only grows (bytes read, files searched) and the
    `total` when it is known, as often as it has news: the reporter decides what to pass on
    and how often. Awaiting it is a cancellation point, so a cancelled call stops there.
    """

    async def __call__(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report that the call has done `progress` of `total` units."""


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class ToolExecution:
    """One call of one tool: the actor that events carry (opaque to the fs contract)."""

    tool: str
    """The tool's name."""
    session: AgentSession | None = None
    """The session the call belongs to; None for a call made outside any session."""
    call_id: str | None = None
    """The model's tool-call id, when it gave one."""
    extra: dict[str, object] = field(default_factory=dict)
    """Host data that travels with the call (e.g. an MCP request id); never interpreted."""
    progress: ProgressReporter | None = None
    """Where the tool may report its progress; None when nobody asked for it (then a tool
    skips the work of measuring)."""
