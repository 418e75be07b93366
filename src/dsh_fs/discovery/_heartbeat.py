"""Progress for a search: how much of its time budget has passed, and what it found so far.

A search cannot know its total in advance (the tree is walked as it is searched), and
ripgrep says nothing until it finds something, so counting files or matches would leave a
client without news during a long quiet search. A search reports the seconds it has run out
of its budget (after which it stops with `SEARCH_ABORTED`): a quantity that only grows, with
a known total, and a message with the count found so far. A client that resets its timeout
on progress (the MCP SDKs do) keeps waiting for a search that is still within its budget.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import anyio

from dsh_fs.runtime import ProgressReporter

__all__ = ["BEAT_INTERVAL", "heartbeat"]

_log = logging.getLogger(__name__)

BEAT_INTERVAL = 0.5
"""Seconds between two reports of a running search."""


@asynccontextmanager
async def heartbeat(
    progress: ProgressReporter | None,
    budget: float,
    found: Callable[[], str],
    *,
    interval: float = BEAT_INTERVAL,
) -> AsyncIterator[None]:
    """Report `progress(elapsed, budget, found())` every `interval` seconds while the block
    runs; nothing when `progress` is None. The block's own exception (a `FsError`, or a
    cancellation) leaves as it is, never wrapped in a group; a reporter that fails is not
    called again.

    Raises:
        BaseException: whatever the block raised.
    """
    if progress is None:
        yield
        return
    start = anyio.current_time()

    async def beat() -> None:
        while True:
            await anyio.sleep(interval)
            elapsed = min(anyio.current_time() - start, budget)
            try:
                await progress(round(elapsed, 3), budget, found())
            except Exception:  # a report that failed must not fail the search
                _log.debug("progress report failed; no more reports", exc_info=True)
                return

    # The block's exception is kept aside and raised after the task group, which would
    # otherwise wrap it in an exception group.
    failure: BaseException | None = None
    async with anyio.create_task_group() as beats:
        beats.start_soon(beat)
        try:
            yield
        except BaseException as exc:
            failure = exc
        finally:
            beats.cancel_scope.cancel()
    if failure is not None:
        raise failure
