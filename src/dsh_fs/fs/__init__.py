"""The provider contract (`ctx.fs`): the `FileSystem` ABC and its vocabulary.

This layer defines targets, opaque versions, infos, write guards, edit requests (literal,
insert, patch) and outcomes, observations, the fs/* event keys and the `FS` service key,
and the edit algorithms every provider applies. It does no I/O. Providers
(`dsh_fs.providers`) implement it; the tools and the policy consume it. Below it sit only
`dsh_fs.runtime` (for event and service keys) and `dsh_fs.errors`. The exact messages live
in the private `_messages` module, which the package's own providers and policy share.
"""

from dsh_fs.errors import FsError, FsErrorCode

from ._change import apply_change
from ._contract import FileSystem
from ._edit import apply_edit
from ._events import (
    FS,
    FS_DELETE_INTENT,
    FS_EDIT_INTENT,
    FS_OBSERVED,
    FS_WRITE_INTENT,
    FsIntent,
    FsObserved,
)
from ._types import (
    BEFORE_LIMIT,
    Absent,
    CreateIfAbsent,
    FsCapabilities,
    FsDeleteOutcome,
    FsDirEntry,
    FsEdit,
    FsEditOutcome,
    FsEditRequest,
    FsFileType,
    FsInfo,
    FsInsertRequest,
    FsPatchHunk,
    FsPatchRequest,
    FsPathInfo,
    FsTarget,
    FsTargetKey,
    FsVersion,
    FsWriteOutcome,
    Observation,
    PatchOp,
    Present,
    ReplaceIfVersion,
    WriteGuard,
)

__all__ = [
    "BEFORE_LIMIT",
    "FS",
    "FS_DELETE_INTENT",
    "FS_EDIT_INTENT",
    "FS_OBSERVED",
    "FS_WRITE_INTENT",
    "Absent",
    "CreateIfAbsent",
    "FileSystem",
    "FsCapabilities",
    "FsDeleteOutcome",
    "FsDirEntry",
    "FsEdit",
    "FsEditOutcome",
    "FsEditRequest",
    "FsError",
    "FsErrorCode",
    "FsFileType",
    "FsInfo",
    "FsInsertRequest",
    "FsIntent",
    "FsObserved",
    "FsPatchHunk",
    "FsPatchRequest",
    "FsPathInfo",
    "FsTarget",
    "FsTargetKey",
    "FsVersion",
    "FsWriteOutcome",
    "Observation",
    "PatchOp",
    "Present",
    "ReplaceIfVersion",
    "WriteGuard",
    "apply_change",
    "apply_edit",
]
