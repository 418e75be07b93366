"""A running glob or grep reports its progress (seconds of its time budget, and what it found
so far) when the call has a progress reporter, through the library and over MCP.

The search is held at the start of its walk until the first report arrives, so a report is
certain to come while it runs, whatever the machine's speed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from dsh_fs import Workspace
from dsh_fs.discovery import DiscoveryConfig
from dsh_fs.errors import FsError
from dsh_fs.fs import FsTarget, FsWalkEntry
from dsh_fs.mcp import create_server
from dsh_fs.providers import LocalFileSystem

pytestmark = pytest.mark.anyio

TIMEOUT = 30
BUDGET = 30.0


class HeldWalk(LocalFileSystem):
    """A local disk whose walks wait for `release` before they list anything."""

    def __init__(self, base: Path, release: anyio.Event) -> None:
        super().__init__(str(base))
        self.release = release
        self.abandoned = anyio.Event()
        """Set when a walk was cancelled while it waited."""

    def walk(
        self, root: FsTarget, *, descend: Callable[[str], bool] | None = None
    ) -> AbstractAsyncContextManager[AsyncIterator[list[FsWalkEntry]]]:
        inner = super().walk(root, descend=descend)

        @asynccontextmanager
        async def held() -> AsyncIterator[AsyncIterator[list[FsWalkEntry]]]:
            try:
                await self.release.wait()
            except anyio.get_cancelled_exc_class():
                self.abandoned.set()
                raise
            async with inner as batches:
                yield batches

        return held()


class Reports:
    """A progress reporter that keeps what it is told and releases the held walk."""

    def __init__(self, release: anyio.Event) -> None:
        self.release = release
        self.seen: list[tuple[float, float | None, str | None]] = []

    async def __call__(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        self.seen.append((progress, total, message))
        self.release.set()


def tree(root: Path) -> None:
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("def main():\n    pass\n", encoding="utf-8")
    (root / "notes.txt").write_text("main idea\n", encoding="utf-8")


def held_workspace(root: Path, release: anyio.Event) -> Workspace:
    config = DiscoveryConfig(time_budget=BUDGET, native=False, progress_interval=0.01)
    return Workspace(HeldWalk(root, release), cwd=str(root), discovery=config)


@pytest.mark.parametrize(
    ("tool", "arguments", "found"),
    [
        ("grep", {"pattern": "main"}, "matches so far"),
        ("glob", {"pattern": "*.py"}, "paths so far"),
    ],
)
async def test_a_running_search_reports_seconds_of_its_budget_and_what_it_found(
    tmp_path: Path, tool: str, arguments: dict[str, Any], found: str
) -> None:
    tree(tmp_path)
    release = anyio.Event()
    reports = Reports(release)
    with anyio.fail_after(TIMEOUT):
        async with held_workspace(tmp_path, release) as workspace:
            result = await workspace.session().call(tool, arguments, progress=reports)
    assert not result.is_error, result.text
    assert reports.seen
    progress, total, message = reports.seen[0]
    assert 0 < progress <= BUDGET
    assert total == BUDGET
    assert message is not None
    assert message.endswith(found)
    done = [seen[0] for seen in reports.seen]
    assert done == sorted(done)


async def test_a_reported_search_finds_what_an_unreported_one_finds(tmp_path: Path) -> None:
    tree(tmp_path)
    release = anyio.Event()
    reports = Reports(release)
    async with Workspace.local(tmp_path) as workspace:
        plain = await workspace.session().call("grep", {"pattern": "main"})
    with anyio.fail_after(TIMEOUT):
        async with held_workspace(tmp_path, release) as workspace:
            reported = await workspace.session().call("grep", {"pattern": "main"}, progress=reports)
    assert not plain.is_error
    assert reported.text == plain.text


async def test_a_failing_search_with_a_reporter_fails_with_its_own_error(tmp_path: Path) -> None:
    release = anyio.Event()
    release.set()
    reports = Reports(release)
    async with held_workspace(tmp_path, release) as workspace:
        result = await workspace.session().call(
            "grep", {"pattern": "x", "path": "missing"}, progress=reports
        )
    assert result.code == "FS_NOT_FOUND"
    assert isinstance(result.error, dict)
    assert result.error["name"] == FsError.__name__


async def test_an_mcp_client_gets_progress_notifications_for_a_search(tmp_path: Path) -> None:
    tree(tmp_path)
    release = anyio.Event()
    notified: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        notified.append((progress, total, message))
        release.set()

    with anyio.fail_after(TIMEOUT):
        async with (
            held_workspace(tmp_path, release) as workspace,
            Client(create_server(workspace), mode="legacy") as client,
        ):
            result = await client.call_tool(
                "grep", {"pattern": "main"}, progress_callback=on_progress
            )
    assert not result.is_error
    assert notified
    assert all(total == BUDGET for _, total, _ in notified)
    assert notified[0][2] == "0 matches so far"


async def test_an_mcp_client_that_cancels_a_running_search_is_still_served(tmp_path: Path) -> None:
    tree(tmp_path)
    never = anyio.Event()  # the walk stays held: the search can only end by cancellation
    started = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        started.set()

    provider = HeldWalk(tmp_path, never)
    config = DiscoveryConfig(time_budget=BUDGET, native=False, progress_interval=0.01)
    with anyio.fail_after(TIMEOUT):
        async with (
            Workspace(provider, cwd=str(tmp_path), discovery=config) as workspace,
            Client(create_server(workspace), mode="legacy") as client,
        ):
            async with anyio.create_task_group() as calls:
                calls.start_soon(
                    lambda: client.call_tool(
                        "grep", {"pattern": "main"}, progress_callback=on_progress
                    )
                )
                await started.wait()
                calls.cancel_scope.cancel()  # the SDK client sends notifications/cancelled
            await provider.abandoned.wait()  # the server stopped the search
            listed = await client.call_tool("list", {})
    assert not listed.is_error
    assert "notes.txt" in listed.content[0].text  # type: ignore[union-attr]
