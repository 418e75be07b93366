"""The provider contract (`ctx.fs`): the `FileSystem` ABC and its vocabulary.

This layer defines targets, opaque versions, infos, write guards, edit requests (literal,
insert, patch) and outcomes, ranged text streams, text kept as its encoding
(`EncodedText`), observations, the fs/* event keys and the `FS` service key, and the edit
algorithms every provider applies. It does no I/O. Providers (`dsh_fs.providers`)
implement it; the tools and the policy consume it. Below it sit only `dsh_fs.runtime` (for
event and service keys) and `dsh_fs.errors`. The exact messages live in the private
`_messages` module, which the package's own providers and policy share.
"""

from dsh_fs.errors import FsError, FsErrorCode

from ._change import apply_change
from ._contract import FileSystem, delete_dir_journaled
from ._edit import apply_edit
from ._edit_encoded import apply_edit_encoded
from ._encoded import EncodedText
from ._events import (
    FS,
    FS_CHANGE_INTENT,
    FS_DELETE_INTENT,
    FS_EDIT_INTENT,
    FS_FORGET,
    FS_MOVE_INTENT,
    FS_OBSERVED,
    FS_WRITE_INTENT,
    FsForget,
    FsIntent,
    FsObserved,
)
from ._journal_contract import (
    ENTRY_ID,
    FsCapture,
    FsChangeMeta,
    FsChangeStart,
    FsPreImage,
    JournalEntry,
    JournalProblem,
    JournalStore,
    JournalUsage,
    line_counts,
)
from ._rules import DEFAULT_PROTECT, PathRules, RuleMatch, Rules
from ._search import (
    VCS_DIRECTORIES,
    FsGlobQuery,
    FsGrepHit,
    FsGrepQuery,
    NativeSearchAbandoned,
)
from ._text_stream import FsTextChunk, FsTextStream
from ._types import (
    BEFORE_LIMIT,
    Absent,
    CreateIfAbsent,
    FsCapabilities,
    FsDeleteOutcome,
    FsDirEntry,
    FsDirListing,
    FsEdit,
    FsEditOutcome,
    FsEditRequest,
    FsFileType,
    FsInfo,
    FsInsertRequest,
    FsMkdirOutcome,
    FsMoveOutcome,
    FsPatchHunk,
    FsPatchRequest,
    FsPathInfo,
    FsTarget,
    FsTargetKey,
    FsVersion,
    FsWalkEntry,
    FsWriteOutcome,
    Observation,
    PatchOp,
    Present,
    ReplaceIfVersion,
    WriteGuard,
)

__all__ = [
    "BEFORE_LIMIT",
    "DEFAULT_PROTECT",
    "ENTRY_ID",
    "FS",
    "FS_CHANGE_INTENT",
    "FS_DELETE_INTENT",
    "FS_EDIT_INTENT",
    "FS_FORGET",
    "FS_MOVE_INTENT",
    "FS_OBSERVED",
    "FS_WRITE_INTENT",
    "VCS_DIRECTORIES",
    "Absent",
    "CreateIfAbsent",
    "EncodedText",
    "FileSystem",
    "FsCapabilities",
    "FsCapture",
    "FsChangeMeta",
    "FsChangeStart",
    "FsDeleteOutcome",
    "FsDirEntry",
    "FsDirListing",
    "FsEdit",
    "FsEditOutcome",
    "FsEditRequest",
    "FsError",
    "FsErrorCode",
    "FsFileType",
    "FsForget",
    "FsGlobQuery",
    "FsGrepHit",
    "FsGrepQuery",
    "FsInfo",
    "FsInsertRequest",
    "FsIntent",
    "FsMkdirOutcome",
    "FsMoveOutcome",
    "FsObserved",
    "FsPatchHunk",
    "FsPatchRequest",
    "FsPathInfo",
    "FsPreImage",
    "FsTarget",
    "FsTargetKey",
    "FsTextChunk",
    "FsTextStream",
    "FsVersion",
    "FsWalkEntry",
    "FsWriteOutcome",
    "JournalEntry",
    "JournalProblem",
    "JournalStore",
    "JournalUsage",
    "NativeSearchAbandoned",
    "Observation",
    "PatchOp",
    "PathRules",
    "Present",
    "ReplaceIfVersion",
    "RuleMatch",
    "Rules",
    "WriteGuard",
    "apply_change",
    "apply_edit",
    "apply_edit_encoded",
    "delete_dir_journaled",
    "line_counts",
]
