"""A synchronous facade over `Workspace` and `Session`, for scripts and sync frameworks.

Every call runs on one event loop in a background thread, through an anyio blocking
portal; no ad-hoc event loops, and the workspace's locks stay on the loop they belong to.
A workspace left open never keeps the interpreter from exiting: it is closed when it is
garbage collected or at interpreter exit, with a `ResourceWarning`.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import warnings
import weakref
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, TypeVar

import anyio
from anyio.from_thread import BlockingPortal

from dsh_fs.fs import Encodings, Rules
from dsh_fs.tools import DEFAULT_APPROVE_TIMEOUT, MAX_IMAGE_BYTES
from dsh_fs.workspace import ALL_TOOLS

from ._anthropic import AnthropicToolResult, anthropic_tool_results
from ._openai import OpenAIToolMessage, execute_openai_tool_calls

if TYPE_CHECKING:
    from typing_extensions import Self

    from dsh_fs.discovery import DiscoveryConfig
    from dsh_fs.fs import JournalEntry, ObservationLedger
    from dsh_fs.journal import Journal, UndoResult
    from dsh_fs.providers import SandboxMode
    from dsh_fs.runtime import ToolResult
    from dsh_fs.tools import Approver
    from dsh_fs.workspace import ApproveOption, JournalOption, Session, Workspace

__all__ = ["SyncJournal", "SyncSession", "SyncWorkspace"]

T = TypeVar("T")

_IMPLICIT_CLOSE_SECONDS: Final = 10.0

_DEFAULT_RULES = Rules()
"""`Workspace`'s default: protect ``.git/``."""
"""How long closing a workspace nobody closed may take (at exit: a remote provider's
network must not hold the interpreter)."""


class _LoopThread:
    """An event loop in a daemon thread, reached through a blocking portal.

    Not `anyio.from_thread.start_blocking_portal`: its context manager, left open, is
    finalized when the interpreter shuts down, after daemon threads have stopped, and its
    call into the stopped loop waits forever.
    """

    __slots__ = ("portal", "thread")

    def __init__(self, backend: str) -> None:
        started = threading.Event()
        failure: list[BaseException] = []
        portals: list[BlockingPortal] = []

        async def serve() -> None:
            async with BlockingPortal() as portal:
                portals.append(portal)
                started.set()
                await portal.sleep_until_stopped()

        def run() -> None:
            try:
                anyio.run(serve, backend=backend)
            except BaseException as exc:  # reported by the constructor, or lost at exit
                failure.append(exc)
            finally:
                started.set()

        self.thread = threading.Thread(target=run, name="dsh-fs SyncWorkspace", daemon=True)
        self.thread.start()
        started.wait()
        if not portals:
            raise RuntimeError(f"cannot start a {backend} event loop") from next(
                iter(failure), None
            )
        self.portal = portals[0]

    def stop(self) -> None:
        """Cancel what still runs on the loop, end it, and wait for the thread."""
        with contextlib.suppress(RuntimeError):  # already stopped
            self.portal.call(self.portal.stop, True)
        self.thread.join()


async def _aclose_within(workspace: Workspace, seconds: float | None) -> None:
    with anyio.move_on_after(seconds if seconds is not None else float("inf")):
        await workspace.aclose()


def _shut(loop: _LoopThread, workspace: Workspace, seconds: float | None) -> None:
    """Close `workspace` on its loop, then stop the loop."""
    if threading.current_thread() is loop.thread:
        # Garbage collected on the loop's own thread, which cannot wait for itself.
        threading.Thread(target=_shut, args=(loop, workspace, seconds), daemon=True).start()
        return
    try:
        loop.portal.call(_aclose_within, workspace, seconds)
    finally:
        loop.stop()


def _close_left_open(loop: _LoopThread, workspace: Workspace) -> None:
    try:
        _shut(loop, workspace, _IMPLICIT_CLOSE_SECONDS)
    finally:
        warnings.warn(
            f"SyncWorkspace over {workspace!r} was never closed; it has been closed now. "
            "Use it as a context manager, or call close().",
            ResourceWarning,
            stacklevel=1,
        )


class SyncSession:
    """A workspace `Session` whose calls block until the result is ready."""

    __slots__ = ("_owner", "_portal", "session")

    def __init__(
        self, session: Session, portal: BlockingPortal, *, owner: SyncWorkspace | None = None
    ) -> None:
        self.session = session
        """The underlying async session (the observation owner)."""
        self._portal = portal
        # A session keeps its workspace (and so its loop) alive: `ws.session()` on a
        # workspace nobody else holds still works.
        self._owner = owner

    def call(self, name: str, arguments: object, *, call_id: str | None = None) -> ToolResult:
        """Run one tool call; like `Session.call`, a failure is a result, never an exception
        (on a closed workspace, `FS_ABORTED`)."""
        call = functools.partial(self.session.call, name, arguments, call_id=call_id)
        if self.session.workspace.closed:
            # Its loop may be gone; a call on a closed workspace touches nothing of it.
            return anyio.run(call)
        return self._portal.call(call)

    def run(self, func: Callable[[], Awaitable[T]]) -> T:
        """Await `func()` on the workspace's loop and return its result: what an adapter
        whose framework calls it from synchronous code runs (`WorkspaceBackend`). On a
        closed workspace it runs in a fresh loop, as `call` does."""
        if self.session.workspace.closed:
            return anyio.run(func)
        return self._portal.call(func)

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


class SyncJournal:
    """`Journal` with blocking calls (`SyncWorkspace.journal`)."""

    __slots__ = ("_portal", "journal")

    def __init__(self, journal: Journal, portal: BlockingPortal) -> None:
        self.journal = journal
        """The underlying async journal."""
        self._portal = portal

    def entries(
        self, *, session: str | None = None, since: str | None = None, paths: Sequence[str] = ()
    ) -> list[JournalEntry]:
        """`Journal.entries`."""
        return self._portal.call(
            functools.partial(self.journal.entries, session=session, since=since, paths=paths)
        )

    def diff(self, entry_id: str) -> str:
        """`Journal.diff`."""
        return self._portal.call(self.journal.diff, entry_id)

    def undo(
        self,
        *,
        ids: Iterable[str] = (),
        session: str | None = None,
        since: str | None = None,
        dry_run: bool = False,
        hunks: Iterable[int] = (),
        merge: bool = False,
        paths: Sequence[str] = (),
    ) -> list[UndoResult]:
        """`Journal.undo` (a revert by hunk with `hunks` or `merge`)."""
        return self._portal.call(
            functools.partial(
                self.journal.undo,
                ids=list(ids),
                session=session,
                since=since,
                dry_run=dry_run,
                hunks=list(hunks),
                merge=merge,
                paths=paths,
            )
        )


class SyncWorkspace:
    """A `Workspace` driven from synchronous code; use it as a context manager.

    Example:
        ```python
        with SyncWorkspace.sandbox("project") as ws:
            session = ws.session()
            print(session.call("read", {"file_path": "README.md"}).text)
        ```
    """

    __slots__ = ("__weakref__", "_finalizer", "_loop", "workspace")

    def __init__(
        self, make_workspace: Callable[[], Workspace], *, backend: str = "asyncio"
    ) -> None:
        """Start the loop thread, then build the workspace on it.

        For your own provider: ``SyncWorkspace(lambda: Workspace(MyFileSystem()))``.

        Args:
            make_workspace: Builds the workspace (called on the loop's thread, so anything
                it creates belongs to that loop).
            backend: The anyio backend of the loop (``"asyncio"`` or ``"trio"``).
        """
        self._loop = _LoopThread(backend)
        try:
            self.workspace: Workspace = self._loop.portal.call(make_workspace)
            """The underlying async workspace."""
        except BaseException:
            self._loop.stop()
            raise
        self._finalizer = weakref.finalize(self, _close_left_open, self._loop, self.workspace)

    @classmethod
    def local(
        cls,
        cwd: str | os.PathLike[str] | None = None,
        *,
        policy: bool = True,
        tools: Iterable[str] = ALL_TOOLS,
        discovery: DiscoveryConfig | None = None,
        max_image_bytes: int = MAX_IMAGE_BYTES,
        rules: Rules | None = _DEFAULT_RULES,
        journal: JournalOption = None,
        encodings: Encodings | Mapping[str, str] | None = None,
        encoding_fallback: Sequence[str] = (),
        editorconfig: bool = False,
        placeholders: bool = True,
        observations: ObservationLedger | None = None,
        approve: ApproveOption = "none",
        approver: Approver | None = None,
        approve_paths: Sequence[str] = (),
        approve_timeout: float = DEFAULT_APPROVE_TIMEOUT,
    ) -> Self:
        """A synchronous `Workspace.local` (same arguments)."""
        from dsh_fs.workspace import Workspace

        return cls(
            functools.partial(
                Workspace.local,
                cwd,
                policy=policy,
                tools=tools,
                discovery=discovery,
                max_image_bytes=max_image_bytes,
                rules=rules,
                journal=journal,
                encodings=encodings,
                encoding_fallback=encoding_fallback,
                editorconfig=editorconfig,
                placeholders=placeholders,
                observations=observations,
                approve=approve,
                approver=approver,
                approve_paths=approve_paths,
                approve_timeout=approve_timeout,
            )
        )

    @classmethod
    def sandbox(
        cls,
        root: str | os.PathLike[str],
        *more_roots: str | os.PathLike[str],
        mode: SandboxMode = "workspace-write",
        policy: bool = True,
        confine_reads: bool = True,
        tools: Iterable[str] = ALL_TOOLS,
        discovery: DiscoveryConfig | None = None,
        max_image_bytes: int = MAX_IMAGE_BYTES,
        rules: Rules | None = _DEFAULT_RULES,
        journal: JournalOption = None,
        encodings: Encodings | Mapping[str, str] | None = None,
        encoding_fallback: Sequence[str] = (),
        editorconfig: bool = False,
        placeholders: bool = True,
        observations: ObservationLedger | None = None,
        approve: ApproveOption = "none",
        approver: Approver | None = None,
        approve_paths: Sequence[str] = (),
        approve_timeout: float = DEFAULT_APPROVE_TIMEOUT,
    ) -> Self:
        """A synchronous `Workspace.sandbox` (same arguments).

        Raises:
            ValueError: A root does not exist or is not a directory, or the mode is unknown.
        """
        from dsh_fs.workspace import Workspace

        return cls(
            functools.partial(
                Workspace.sandbox,
                root,
                *more_roots,
                mode=mode,
                policy=policy,
                confine_reads=confine_reads,
                tools=tools,
                discovery=discovery,
                max_image_bytes=max_image_bytes,
                rules=rules,
                journal=journal,
                encodings=encodings,
                encoding_fallback=encoding_fallback,
                editorconfig=editorconfig,
                placeholders=placeholders,
                observations=observations,
                approve=approve,
                approver=approver,
                approve_paths=approve_paths,
                approve_timeout=approve_timeout,
            )
        )

    @property
    def journal(self) -> SyncJournal | None:
        """The workspace's journal with blocking calls, or None when not journaling."""
        journal = self.workspace.journal
        return None if journal is None else SyncJournal(journal, self._loop.portal)

    @classmethod
    def remote(
        cls,
        url: str,
        *,
        policy: bool = True,
        tools: Iterable[str] = ALL_TOOLS,
        discovery: DiscoveryConfig | None = None,
        max_image_bytes: int = MAX_IMAGE_BYTES,
        rules: Rules | None = _DEFAULT_RULES,
        journal: JournalOption = None,
        encodings: Encodings | Mapping[str, str] | None = None,
        encoding_fallback: Sequence[str] = (),
        placeholders: bool = True,
        observations: ObservationLedger | None = None,
        approve: ApproveOption = "none",
        approver: Approver | None = None,
        approve_paths: Sequence[str] = (),
        approve_timeout: float = DEFAULT_APPROVE_TIMEOUT,
        **storage_options: Any,
    ) -> Self:
        """A synchronous `Workspace.remote` (same arguments): any fsspec storage.

        Raises:
            ValueError, ImportError: From fsspec: an unknown protocol, or its backend
                package is not installed.
        """
        from dsh_fs.workspace import Workspace

        return cls(
            functools.partial(
                Workspace.remote,
                url,
                policy=policy,
                tools=tools,
                discovery=discovery,
                max_image_bytes=max_image_bytes,
                rules=rules,
                journal=journal,
                encodings=encodings,
                encoding_fallback=encoding_fallback,
                placeholders=placeholders,
                observations=observations,
                approve=approve,
                approver=approver,
                approve_paths=approve_paths,
                approve_timeout=approve_timeout,
                **storage_options,
            )
        )

    def session(
        self,
        *,
        cwd: str | os.PathLike[str] | None = None,
        id: str | None = None,
        label: str | None = None,
    ) -> SyncSession:
        """A new observation owner (see `Workspace.session`)."""
        portal = self._loop.portal
        session = portal.call(
            functools.partial(self.workspace.session, cwd=cwd, id=id, label=label)
        )
        return SyncSession(session, portal, owner=self)

    def tool_schemas(self) -> list[dict[str, Any]]:
        """See `Workspace.tool_schemas`."""
        return self.workspace.tool_schemas()

    def system_prompt(self) -> str:
        """See `Workspace.system_prompt`."""
        return self.workspace.system_prompt()

    @property
    def closed(self) -> bool:
        """Whether the workspace was closed (by `close`, or implicitly)."""
        return not self._finalizer.alive

    def close(self) -> None:
        """Close the workspace, then stop the loop thread. Idempotent."""
        if self._finalizer.detach() is not None:
            _shut(self._loop, self.workspace, None)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
