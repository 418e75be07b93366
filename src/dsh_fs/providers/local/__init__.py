"""The local provider: `LocalFileSystem`, the host filesystem as a `dsh_fs.fs.FileSystem`.

Its rooms: non-blocking opens and what the kernel says of an open descriptor (`_open`),
symbolic links (`_realpath`), bytes through descriptors (`_io`), streamed and ranged text
(`_stream`, `_ranged`), stat-based versions (`_versions`), staging and atomic publication
(`_staging`, `_publish`), the write/edit/delete critical sections (`_mutations`),
directories and walks (`_dirs`, `_walk`), the ``rg`` search engine (`_ripgrep`), and
the journal's local store (`_journal_store`), change sets' intent records
(`_set_records`), and
`LocalGuards`, the checks a wrapper (the sandbox) makes on what it really opens.
`LocalFileSystem` is imported on first use, so importing this package costs almost nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._guards import LocalGuards
from ._realpath import real_path, still_real

__all__ = [
    "LocalFileSystem",
    "LocalGuards",
    "LocalJournalStore",
    "LocalSetRecords",
    "PendingAnswer",
    "PendingApprovals",
    "default_journal_location",
    "default_set_records_location",
    "real_path",
    "set_records_directory",
    "still_real",
]

if TYPE_CHECKING:
    from ._filesystem import LocalFileSystem
    from ._journal_store import LocalJournalStore, default_journal_location
    from ._pending import PendingAnswer, PendingApprovals
    from ._set_records import (
        LocalSetRecords,
        default_set_records_location,
        set_records_directory,
    )


def __getattr__(name: str) -> Any:
    if name == "LocalFileSystem":
        from ._filesystem import LocalFileSystem

        return LocalFileSystem
    if name in ("PendingAnswer", "PendingApprovals"):
        from . import _pending

        return getattr(_pending, name)
    if name in ("LocalJournalStore", "default_journal_location"):
        from . import _journal_store

        return getattr(_journal_store, name)
    if name in ("LocalSetRecords", "default_set_records_location", "set_records_directory"):
        from . import _set_records

        return getattr(_set_records, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
