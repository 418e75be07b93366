"""What the discovery tools share: their configuration, the searched root, display paths,
the time budget, and turning a cut line back into text."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Generic, TypeVar

import anyio

from dsh_fs.fs import FS, FileSystem, FsTarget, messages
from dsh_fs.runtime import Context, ToolExecution
from dsh_fs.tools import FsTool, session_cwd

from ._heartbeat import BEAT_INTERVAL, heartbeat

__all__ = [
    "LINE_BYTES",
    "DiscoveryConfig",
    "Located",
    "SearchTool",
    "line_text",
    "locate",
    "so_far",
    "time_budget",
]

A = TypeVar("A")
V = TypeVar("V")

LINE_BYTES = 2000
"""A matched line is shown up to this many bytes."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DiscoveryConfig:
    """How the discovery tools search."""

    time_budget: float = 30.0
    """Seconds a glob or grep may run before it stops with `SEARCH_ABORTED`."""
    native: bool = True
    """Use the provider's own searcher (ripgrep on local disks) when it has one; False
    always uses the pure-Python engine (the results are the same)."""
    progress_interval: float = BEAT_INTERVAL
    """Seconds between two progress reports of a running search, when the call has a
    progress reporter (an MCP client's progress token)."""


class SearchTool(FsTool[A, V], Generic[A, V]):
    """A discovery tool: its schema shows optional strings plainly; it knows its config."""

    def __init__(self, config: DiscoveryConfig | None = None) -> None:
        super().__init__()
        self.config = config if config is not None else DiscoveryConfig()

    @asynccontextmanager
    async def searching(
        self, execution: ToolExecution, display: str, narrow: str, found: Callable[[], str]
    ) -> AsyncIterator[None]:
        """Run the block within the time budget, reporting progress while it runs: the
        seconds spent of the budget, and `found()` as the message.

        Raises:
            FsError: `SEARCH_ABORTED` when the budget runs out; the block's own errors.
        """
        with time_budget(self.config.time_budget, display, narrow):
            async with heartbeat(
                execution.progress,
                self.config.time_budget,
                found,
                interval=self.config.progress_interval,
            ):
                yield


@dataclass(frozen=True, slots=True, kw_only=True)
class Located:
    """A searched path, and the base that displayed paths are relative to."""

    fs: FileSystem
    """The context's provider."""
    target: FsTarget
    """What `path` resolved to."""
    base: str
    """The display path of the session's working directory."""

    def shown(self, rel: str = "") -> str:
        """How the model sees the path `rel` below the target: relative to the working
        directory when inside it (``.`` for the directory itself), else the display path."""
        full = self.target.display_path
        if rel:
            full = (full if full.endswith("/") else full + "/") + rel
        if full == self.base:
            return "."
        prefix = self.base if self.base.endswith("/") else self.base + "/"
        shown = full[len(prefix) :] if full.startswith(prefix) else full
        return messages.shown(shown)


async def locate(context: Context, execution: ToolExecution, path: str | None) -> Located:
    """Resolve `path` (the working directory when None) like `read` does."""
    fs = context.get(FS)
    cwd = session_cwd(execution)
    target = await fs.resolve(path if path is not None else ".", cwd)
    base = await fs.resolve(".", cwd)
    return Located(fs=fs, target=target, base=base.display_path)


@contextmanager
def time_budget(seconds: float, display: str, narrow: str) -> Iterator[None]:
    """Stop the block after `seconds` with `SEARCH_ABORTED` (nothing partial is kept)."""
    with anyio.move_on_after(seconds) as scope:
        yield
    if scope.cancelled_caught:
        raise messages.search_aborted(display, seconds, narrow)


def so_far(count: int, one: str, many: str) -> str:
    """A running search's progress message: ``1 match so far``, ``12 matches so far``."""
    return f"{count} {one if count == 1 else many} so far"


def line_text(data: bytes, truncated: bool) -> str:
    """A matched line's text: a cut line loses the incomplete character at its end; bytes
    that are not UTF-8 show as U+FFFD."""
    if truncated:
        data = _whole_characters(data)
    return data.decode("utf-8", "replace")


def _whole_characters(data: bytes) -> bytes:
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte < 0x80:
            return data
        if byte >= 0xC0:  # a lead byte: keep its sequence only if it is complete
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return data if back >= need else data[:-back]
    return data
