"""The journal plugin: answers `fs/change-intent` with a capture bound to the tool and the
session; decides nothing, records (SPEC §9)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from dsh_fs.fs import (
    FS_CHANGE_INTENT,
    EncodedText,
    FsCapture,
    FsChangeMeta,
    FsChangeStart,
    FsIntent,
    FsVersion,
    JournalStore,
)
from dsh_fs.runtime import Next, Plugin, PluginScope, ToolExecution

__all__ = ["DEFAULT_MAX_AGE_SECONDS", "DEFAULT_MAX_BYTES", "JournalConfig", "JournalPlugin"]

DEFAULT_MAX_BYTES = 1 << 30
"""1 GiB of pre-images per root, oldest first out."""

DEFAULT_MAX_AGE_SECONDS = 14 * 24 * 3600.0
"""14 days."""

_PROCESS = secrets.token_hex(3)
"""What makes this process's session labels unique across processes."""


@dataclass(frozen=True, slots=True, kw_only=True)
class JournalConfig:
    """Where the journal is kept and how much it keeps.

    Attributes:
        location: The store directory (one sub-store per canonical root inside); None:
            ``$XDG_STATE_HOME/dsh-fs/journal`` (else ``~/.local/state/dsh-fs/journal``).
            For remote storage, a URL on the same storage (None: the hidden sibling prefix
            ``<parent of the root>/.dsh-fs-journal``).
        max_bytes: Most bytes of pre-images kept per root (default 1 GiB).
        max_age_seconds: Oldest pre-image kept (default 14 days).
    """

    location: str | None = None
    max_bytes: int = DEFAULT_MAX_BYTES
    max_age_seconds: float = DEFAULT_MAX_AGE_SECONDS


def session_label(name: str) -> str:
    """`name` made unique across processes (a per-process suffix)."""
    return f"{name}-{_PROCESS}"


class _Capture(FsCapture):
    """One mutation's capture: the store, told who makes the change."""

    __slots__ = ("_meta", "_store")

    def __init__(self, store: JournalStore, meta: FsChangeMeta) -> None:
        self._store = store
        self._meta = meta

    def prepare(self, start: FsChangeStart) -> object:
        return self._store.prepare(self._meta, start)

    def commit(
        self, ticket: object, after: FsVersion | None, content: bytes | EncodedText | None
    ) -> None:
        self._store.commit(ticket, after, content)

    def abandon(self, ticket: object) -> None:
        self._store.abandon(ticket)


def capture(store: JournalStore, meta: FsChangeMeta) -> FsCapture:
    """A capture of one change described by `meta` into `store`."""
    return _Capture(store, meta)


class JournalPlugin(Plugin[None]):
    """Journals every mutation a tool makes: answers `fs/change-intent` with a capture.

    Args:
        store: Where the entries go.
    """

    name = "fs-journal"

    def __init__(self, store: JournalStore) -> None:
        self.store = store

    def apply(self, scope: PluginScope, config: None) -> None:
        """Listen to `fs/change-intent`."""

        async def answer(intent: FsIntent, next_: Next[FsCapture | None]) -> FsCapture | None:
            del next_
            actor = intent.actor
            tool = actor.tool if isinstance(actor, ToolExecution) else "api"
            owner = (
                actor.session.id
                if isinstance(actor, ToolExecution) and actor.session is not None
                else "api"
            )
            meta = FsChangeMeta(tool=tool, session=session_label(owner), group=intent.group)
            return _Capture(self.store, meta)

        scope.on_waterfall(FS_CHANGE_INTENT, answer)
