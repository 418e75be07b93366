"""`UsageError`: a bad command line, shared by the commands' modules (`_main`, `_http`)."""

from __future__ import annotations

__all__ = ["UsageError"]


class UsageError(Exception):
    """A bad command line; the message is the one line the user sees."""
