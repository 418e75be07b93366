"""The journal plugin: answers `fs/change-intent` with the store's capture of the change,
told who makes it (the tool and the session) where the call starts; decides nothing,
records (SPEC §9)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from dsh_fs.fs import (
    FS_CHANGE_INTENT,
    FsCapture,
    FsChangeMeta,
    FsIntent,
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


LABEL_LIMIT = 200
"""The most characters of a name a session label keeps: a label is in every record, and a
client's name is whatever the client sends (a 1 MiB name must not make 1 MiB records)."""


def session_label(name: str) -> str:
    """`name` (its first `LABEL_LIMIT` characters) made unique across processes (a
    per-process suffix)."""
    return f"{name[:LABEL_LIMIT]}-{_PROCESS}"


def capture(store: JournalStore, meta: FsChangeMeta) -> FsCapture:
    """The capture of one change described by `meta` into `store` (`store.capture`)."""
    return store.capture(meta)


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
            # The author is attached here, where the call starts: the provider's calls
            # inside its critical section go straight to the store.
            meta = FsChangeMeta(tool=tool, session=session_label(owner), group=intent.group)
            return self.store.capture(meta)

        scope.on_waterfall(FS_CHANGE_INTENT, answer)
