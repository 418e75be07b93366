"""The fs/* event vocabulary (SPEC §4) and the `fs` service key.

The contract owns the names and payloads; the runtime owns dispatch. The actor is the tool
execution, opaque here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dsh_fs.runtime import ServiceKey, Signal, Waterfall

from ._journal_contract import FsCapture
from ._types import FsTarget, FsTargetKey, FsVersion, Observation, WriteGuard

if TYPE_CHECKING:
    from ._contract import FileSystem

__all__ = [
    "FS",
    "FS_CHANGE_INTENT",
    "FS_DELETE_INTENT",
    "FS_EDIT_INTENT",
    "FS_FORGET",
    "FS_MOVE_INTENT",
    "FS_OBSERVED",
    "FS_SETTLE",
    "FS_WRITE_INTENT",
    "FsForget",
    "FsIntent",
    "FsObserved",
    "FsSettle",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class FsIntent:
    """Payload of `fs/write-intent`, `fs/edit-intent` and `fs/delete-intent`: who is about
    to mutate what."""

    target: FsTarget
    """The resolved target."""
    actor: object
    """The tool execution (opaque to the contract)."""
    group: str | None = None
    """The change set the mutation belongs to (SPEC §13: every file of an `edit_files`
    call); None for a change of its own."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FsObserved:
    """Payload of `fs/observed`: `actor` saw `target` in the state `observation`."""

    target: FsTarget
    """The resolved target."""
    observation: Observation
    """`Present(version)` or `Absent()`."""
    actor: object
    """The tool execution (opaque to the contract)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FsForget:
    """Payload of `fs/forget`: `actor`'s session no longer knows the targets `forgotten`
    picks (an MCP client removed the root they were under)."""

    forgotten: Callable[[FsTargetKey], bool]
    """Whether the observation of a target key is dropped (the provider that made the key
    decides, e.g. `SandboxFileSystem.holds`)."""
    actor: object
    """The tool execution whose session forgets (opaque to the contract)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FsSettle:
    """Payload of `fs/settle`: `actor` dispatched `fs/observed` and waits until it is stored."""

    actor: object
    """The tool execution whose observations are stored (opaque to the contract)."""


FS: ServiceKey[FileSystem] = ServiceKey("fs")
"""The filesystem service (`ctx.fs`)."""

FS_WRITE_INTENT: Waterfall[FsIntent, WriteGuard | None] = Waterfall("fs/write-intent")
"""Decides the `expected` guard of the next `write_text`; default None (unconditional)."""

FS_EDIT_INTENT: Waterfall[FsIntent, FsVersion | None] = Waterfall("fs/edit-intent")
"""Decides the version guard of the next `edit_text`; default None (unguarded)."""

FS_DELETE_INTENT: Waterfall[FsIntent, FsVersion | None] = Waterfall("fs/delete-intent")
"""Decides the version guard of the next `delete`; default None (unguarded)."""

FS_MOVE_INTENT: Waterfall[FsIntent, FsVersion | None] = Waterfall("fs/move-intent")
"""Decides the version guard of the next `move` of a file (the source); default None
(unguarded). The destination is guarded by `fs/write-intent`, as a write's would be."""

FS_OBSERVED: Signal[FsObserved] = Signal("fs/observed")
"""Records that an actor observed a target present at a version, or absent."""

FS_SETTLE: Waterfall[FsSettle, None] = Waterfall("fs/settle")
"""Awaited after `fs/observed`, before the tool's result goes out: a listener that stores
observations elsewhere (a shared ledger, SPEC §14) stores them, so the next request, on any
replica, sees them. Default None (nothing to store)."""

FS_FORGET: Signal[FsForget] = Signal("fs/forget")
"""Drops what an actor's session observed of the targets the payload picks: they are unseen
again (a write may only create, an edit, move or delete needs a new read)."""

FS_CHANGE_INTENT: Waterfall[FsIntent, FsCapture | None] = Waterfall("fs/change-intent")
"""Asks for the journal's capture of the next mutation (`write_text`, `edit_text`,
`delete`, `restore`); default None (not journaled). The journal plugin answers it."""
