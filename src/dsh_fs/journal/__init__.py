"""The change journal (SPEC §9): a plugin beside the policy that records every change a
tool publishes (the provider captures the pre-image inside its critical section), and the
`Journal` that lists, diffs and undoes them. Removing it leaves the tools working.

Stores live with the providers (`dsh_fs.providers.LocalJournalStore`); this package does no
I/O of its own.
"""

from ._hunks import HunkResult
from ._journal import DIFF_LIMIT, SHORT_ID, Journal, UndoResult, parse_since, printable
from ._plugin import (
    DEFAULT_MAX_AGE_SECONDS,
    DEFAULT_MAX_BYTES,
    JournalConfig,
    JournalPlugin,
    session_label,
)

__all__ = [
    "DEFAULT_MAX_AGE_SECONDS",
    "DEFAULT_MAX_BYTES",
    "DIFF_LIMIT",
    "SHORT_ID",
    "HunkResult",
    "Journal",
    "JournalConfig",
    "JournalPlugin",
    "UndoResult",
    "parse_since",
    "printable",
    "session_label",
]
