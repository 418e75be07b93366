"""`dsh-fs mcp --observations URL --observation-ttl DURATION`: where observations live.

``memory`` (the default) keeps them in the server's process; ``redis://host:port/db`` (or
``rediss://``, ``unix://``) in a Redis server every replica of a fleet shares (SPEC §14).
Entries expire after the TTL either way (default 24 h).
"""

from __future__ import annotations

import argparse
import re

from dsh_fs.fs import ObservationLedger

from ._usage import UsageError

__all__ = ["DEFAULT_TTL", "duration_type", "observation_ledger"]

DEFAULT_TTL = 24 * 60 * 60.0
"""`--observation-ttl`'s default: 24 hours, in seconds."""

_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*([smhd]?)", re.IGNORECASE)
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


def duration_type(value: str) -> float:
    """Seconds, or a number with an s, m, h or d suffix (``90``, ``30m``, ``24h``); > 0."""
    match = _DURATION.fullmatch(value.strip())
    if not match or float(match.group(1)) <= 0:
        raise argparse.ArgumentTypeError(f"invalid duration {value!r} (e.g. 3600, 30m, 24h)")
    return float(match.group(1)) * _UNITS[match.group(2).lower()]


def observation_ledger(url: str | None, ttl: float) -> ObservationLedger:
    """The ledger `--observations` names (None or ``memory``: this process's memory).

    Raises:
        UsageError: an unknown kind of ledger, or Redis without the ``redis`` package.
    """
    if url is None or url == "memory":
        from dsh_fs.policy import MemoryLedger

        return MemoryLedger(ttl=ttl)
    if not url.startswith(_REDIS_SCHEMES):
        raise UsageError(f"dsh-fs mcp: --observations {url!r}: expected 'memory' or a redis:// URL")
    try:
        from dsh_fs.providers import RedisLedger
    except ModuleNotFoundError as exc:
        raise UsageError(
            "dsh-fs mcp: --observations redis:// needs the redis package: "
            "pip install 'dsh-fs[fleet]'"
        ) from exc
    try:
        return RedisLedger.from_url(url, ttl=ttl)
    except ValueError as exc:
        raise UsageError(f"dsh-fs mcp: --observations {url!r}: {exc}") from exc
