"""Running a server's event loop so that one Ctrl-C stops it the same way on every Python."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable

import anyio

__all__ = ["run_until_interrupted"]


def run_until_interrupted(serve: Callable[[], Awaitable[None]]) -> None:
    """``anyio.run(serve)``; one Ctrl-C cancels `serve` and raises `KeyboardInterrupt`.

    anyio's runner turns SIGINT into a cancellation of the main task and, on 3.11+, into
    `KeyboardInterrupt` once that task is done. 3.10's asyncio has no ``Task.uncancel``, so
    there the main task's `CancelledError` escapes instead (a double traceback, status 1).
    Nothing else holds the main task, so only that Ctrl-C can cancel it.

    Raises:
        KeyboardInterrupt: Ctrl-C was pressed; `serve` has been cancelled and has finished.
    """
    try:
        anyio.run(serve)
    except asyncio.CancelledError:
        if sys.version_info >= (3, 11):
            raise
        raise KeyboardInterrupt from None
