"""The provider layer: implementations of the `dsh_fs.fs.FileSystem` contract.

`LocalFileSystem` (the host filesystem), `SandboxFileSystem` (a fence around it, applied
through the local provider's `LocalGuards`) and `FsspecFileSystem` (any fsspec storage:
memory, S3, SFTP, …); `RuledFileSystem` applies path rules around any of them. `RedisLedger`
keeps the observation policy's state in a Redis server a fleet of replicas shares.
Providers sit above the contract and below the tools and the policy,
which never import them. This is the only layer that touches `os`-level file APIs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .local import LocalGuards

__all__ = [
    "FsspecFileSystem",
    "LocalFileSystem",
    "LocalGuards",
    "LocalJournalStore",
    "LocalSetRecords",
    "PendingAnswer",
    "PendingApprovals",
    "RedisLedger",
    "RuledFileSystem",
    "SandboxFileSystem",
    "SandboxMode",
    "default_journal_location",
]

if TYPE_CHECKING:
    from ._redis_ledger import RedisLedger
    from ._ruled import RuledFileSystem
    from .fsspec import FsspecFileSystem
    from .local import (
        LocalFileSystem,
        LocalJournalStore,
        LocalSetRecords,
        PendingAnswer,
        PendingApprovals,
        default_journal_location,
    )
    from .sandbox import SandboxFileSystem, SandboxMode


def __getattr__(name: str) -> Any:
    # Lazy so `import dsh_fs.providers` costs nothing and optional backends (fsspec) load
    # only when asked for.
    if name == "FsspecFileSystem":
        from .fsspec import FsspecFileSystem

        return FsspecFileSystem
    if name == "LocalFileSystem":
        from .local import LocalFileSystem

        return LocalFileSystem
    if name == "RedisLedger":
        from ._redis_ledger import RedisLedger

        return RedisLedger
    if name == "RuledFileSystem":
        from ._ruled import RuledFileSystem

        return RuledFileSystem
    if name in (
        "LocalJournalStore",
        "LocalSetRecords",
        "PendingAnswer",
        "PendingApprovals",
        "default_journal_location",
    ):
        from . import local

        return getattr(local, name)
    if name == "SandboxFileSystem":
        from .sandbox import SandboxFileSystem

        return SandboxFileSystem
    if name == "SandboxMode":
        from .sandbox import SandboxMode

        return SandboxMode
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
