"""A review page served for real: a journaled folder, the page on a loopback port (its own
event loop in a thread), and agents that change the folder through workspaces of their own
writing the same store (as separate servers would)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import pytest
from anyio.from_thread import start_blocking_portal

from dsh_fs.adapters import SyncSession, SyncWorkspace
from dsh_fs.mcp.http import bind_socket
from dsh_fs.review import Review, ReviewSource, review_url, serve_review
from dsh_fs.workspace import Workspace

TOKEN = "review-test-token-0123456789abcdef"


@dataclass
class Served:
    """A review page being served over `root`'s journal."""

    root: Path
    """The served folder."""
    journal: Path
    """The store directory."""
    base: str
    """``http://127.0.0.1:PORT``."""
    url: str
    """The URL the command prints (the token in it)."""
    token: str = TOKEN
    _agents: list[SyncWorkspace] = field(default_factory=list)

    def agent(self, label: str) -> SyncSession:
        """A session of an agent with its own workspace on the same folder and store."""
        workspace = SyncWorkspace.sandbox(str(self.root), journal=str(self.journal))
        self._agents.append(workspace)
        return workspace.session(label=label)

    def close_agents(self) -> None:
        for workspace in self._agents:
            workspace.close()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    root = tmp_path / "ws"
    root.mkdir()
    journal = tmp_path / "journal"
    with start_blocking_portal() as portal:
        workspace = portal.call(partial(Workspace.sandbox, str(root), journal=str(journal)))
        assert workspace.journal is not None
        review = Review([ReviewSource(root=str(root), journal=workspace.journal)])
        sock = bind_socket("127.0.0.1", 0)
        ready = threading.Event()
        serving = portal.start_task_soon(
            partial(serve_review, review, sock, token=TOKEN, on_ready=ready.set)
        )
        try:
            assert ready.wait(60), "the review page did not start"
            port = sock.getsockname()[1]
            page = Served(
                root=root,
                journal=journal,
                base=f"http://127.0.0.1:{port}",
                url=review_url(sock, TOKEN),
            )
            try:
                yield page
            finally:
                page.close_agents()
        finally:
            serving.cancel()
            portal.call(workspace.aclose)
            sock.close()
