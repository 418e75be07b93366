"""One session reached from async and from blocking code, for frameworks that call both.

LangChain tools and deep agents backends have a synchronous and an asynchronous entry
point, and the framework picks one (``agent.invoke`` or ``agent.ainvoke``). A `Session`
lives on the caller's event loop: its async entry points await it directly, and its blocking
ones refuse (there is no loop of its own to block on). A `SyncSession` lives on its own loop
thread: blocking entry points wait on that loop, async ones wait for it in a worker thread,
so the workspace's locks stay on the loop they belong to either way.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

import anyio.to_thread

from ._sync import SyncSession

if TYPE_CHECKING:
    from dsh_fs.runtime import ToolResult
    from dsh_fs.workspace import Session

__all__ = ["SessionRunner"]

T = TypeVar("T")


class SessionRunner:
    """`session`'s calls, from a coroutine or from a blocking caller."""

    __slots__ = ("blocking_session", "session")

    def __init__(self, session: Session | SyncSession) -> None:
        self.blocking_session: SyncSession | None = (
            session if isinstance(session, SyncSession) else None
        )
        """The blocking facade, when one was given (then blocking calls are possible)."""
        self.session: Session = session.session if isinstance(session, SyncSession) else session
        """The observation owner every call runs in."""

    async def run(self, func: Callable[[], Awaitable[T]]) -> T:
        """Await `func()` on the session's loop."""
        if self.blocking_session is None:
            return await func()
        return await anyio.to_thread.run_sync(self.blocking_session.run, func)

    def run_blocking(self, func: Callable[[], Awaitable[T]], what: str) -> T:
        """`func()` run to completion on the session's loop, from synchronous code.

        Raises:
            RuntimeError: the session is an async `Session` (`what` names the caller).
        """
        if self.blocking_session is None:
            raise RuntimeError(
                f"{what} was called synchronously, but it runs on an async Session: use the "
                "agent's async API (ainvoke, astream), or pass a SyncSession "
                "(SyncWorkspace.session()) for synchronous use"
            )
        return self.blocking_session.run(func)

    async def call(self, name: str, arguments: object) -> ToolResult:
        """One tool call in the session (never raises for a tool failure)."""
        return await self.run(functools.partial(self.session.call, name, arguments))

    def call_blocking(self, name: str, arguments: object, what: str) -> ToolResult:
        """`call` from synchronous code (see `run_blocking`)."""
        return self.run_blocking(functools.partial(self.session.call, name, arguments), what)
