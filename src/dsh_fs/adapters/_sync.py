"""A synchronous facade over `Workspace` and `Session`, for scripts and sync frameworks.

Every call runs on one event loop in a background thread, through an anyio blocking
portal; no ad-hoc event loops, and the workspace's locks stay on the loop they belong to.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from types import TracebackType
from typing import TYPE_CHECKING, Any

from anyio.from_thread import BlockingPortal, start_blocking_portal

from ._anthropic import AnthropicToolResult, anthropic_tool_results
from ._openai import OpenAIToolMessage, execute_openai_tool_calls

if TYPE_CHECKING:
    from typing_extensions import Self

    from dsh_fs.runtime import ToolResult
    from dsh_fs.workspace import Session, Workspace

__all__ = ["SyncSession", "SyncWorkspace"]


class SyncSession:
    """A workspace `Session` whose calls block until the result is ready."""

    __slots__ = ("_portal", "session")

    def __init__(self, session: Session, portal: BlockingPortal) -> None:
        self.session = session
        """The underlying async session (the observation owner)."""
        self._portal = portal

    def call(self, name: str, arguments: object, *, call_id: str | None = None) -> ToolResult:
        """Run one tool call; like `Session.call`, a failure is a result, never an exception."""
        return self._portal.call(
            functools.partial(self.session.call, name, arguments, call_id=call_id)
        )

    def execute_openai_tool_calls(
        self, tool_calls: Iterable[object] | None
    ) -> list[OpenAIToolMessage]:
        """Blocking `dsh_fs.adapters.execute_openai_tool_calls` in this session."""
        return self._portal.call(execute_openai_tool_calls, self.session, tool_calls)

    def anthropic_tool_results(
        self, content_blocks: Iterable[object] | None
    ) -> list[AnthropicToolResult]:
        """Blocking `dsh_fs.adapters.anthropic_tool_results` in this session."""
        return self._portal.call(anthropic_tool_results, self.session, content_blocks)


class SyncWorkspace:
    """A `Workspace` driven from synchronous code; use it as a context manager.

    Example:
        ```python
        with SyncWorkspace.sandbox("project") as ws:
            session = ws.session()
            print(session.call("read", {"file_path": "README.md"}).text)
        ```
    """

    __slots__ = ("_closed", "_portal", "_stack", "workspace")

    def __init__(
        self, make_workspace: Callable[[], Workspace], *, backend: str = "asyncio"
    ) -> None:
        """Start the portal, then build the workspace on its event loop.

        Args:
            make_workspace: Builds the workspace (called on the portal's loop thread, so
                anything it creates belongs to that loop).
            backend: The anyio backend of the portal's loop (``"asyncio"`` or ``"trio"``).
        """
        self._closed = False
        self._stack = ExitStack()
        self._portal: BlockingPortal = self._stack.enter_context(start_blocking_portal(backend))
        try:
            self.workspace: Workspace = self._portal.call(make_workspace)
            """The underlying async workspace."""
        except BaseException:
            self._stack.close()
            raise

    @classmethod
    def local(cls, cwd: str | None = None, *, policy: bool = True, **options: Any) -> Self:
        """A synchronous `Workspace.local` (same arguments, e.g. ``tools=``)."""
        from dsh_fs.workspace import Workspace

        return cls(functools.partial(Workspace.local, cwd, policy=policy, **options))

    @classmethod
    def sandbox(cls, root: str, *more_roots: str, **options: Any) -> Self:
        """A synchronous `Workspace.sandbox` (same arguments)."""
        from dsh_fs.workspace import Workspace

        return cls(functools.partial(Workspace.sandbox, root, *more_roots, **options))

    def session(self, *, cwd: str | None = None, id: str | None = None) -> SyncSession:
        """A new observation owner (see `Workspace.session`)."""
        session = self._portal.call(functools.partial(self.workspace.session, cwd=cwd, id=id))
        return SyncSession(session, self._portal)

    def tool_schemas(self) -> list[dict[str, Any]]:
        """See `Workspace.tool_schemas`."""
        return self.workspace.tool_schemas()

    def system_prompt(self) -> str:
        """See `Workspace.system_prompt`."""
        return self.workspace.system_prompt()

    def close(self) -> None:
        """Close the workspace, then stop the portal's loop. Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            self._portal.call(self.workspace.aclose)
        finally:
            self._stack.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
