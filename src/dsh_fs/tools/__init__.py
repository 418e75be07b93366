"""The tools layer: `read`, `write` and `edit` (SPEC §6), `edit_files` (§13), `move`,
`delete`, `mkdir` (§10), the internal `insert`, `patch` and `delete_file` the vendor dialect
adapters call, and the public API for writing a tool.

Argument checks and schemas, read paging (`tools.paging`), rendering, remedies, and the
executors that call the context's `fs` service and dispatch the fs/* events. It sits on the
provider contract (`dsh_fs.fs`) and the runtime; above it, `dsh_fs.discovery` (glob, grep,
list) is a plugin built on this API, and `dsh_fs.workspace` assembles a usable stack. It
never imports a provider or the policy: whoever answers the intents is a plugin.

Public: the plugins that register the tools, the tool classes (to compose a stack by hand),
their canonical values (what `ToolResult.data` holds; an image read: an `ImageValue`), and
the tool-writing API (see docs/writing-a-tool.md):

- `FsTool`, the base of a file tool: declare `params`, implement `parse_values` and
  `execute`; `parse_arguments` checks the shape first, `error_message` adds the remedies.
- Parameters: `Param` (`JsonType`), `string_param`, `object_schema`, `check_shape`.
- Argument values: `non_blank`, `is_blank` (`JS_SPACE`), `positive_integer`, `js_number`;
  errors are `dsh_fs.runtime.ToolArgumentError` (code ``INVALID_ARGS``).
- Change sets: `ChangeSet` (stage edits over several files, then publish them all or none;
  `edit_files` and `patch_files` are built on it).
- Observation: `session_cwd` (where relative paths resolve), `observe` (dispatch
  `fs/observed`, what the policy learns from), `guarded_edit` (an `edit_text` change
  guarded by the edit-intent, journaled, then observed), `capture_for` (the journal's
  capture of a mutation, `fs/change-intent`: pass it to the provider when not None).
- Errors and rendering: `message_with_remedy` (`REMEDIES`), and the renderers of the seed
  tools' values (`render_read`, `render_write`, `render_edit`) for a tool that answers
  with one of them.
"""

from ._approval import (
    DEFAULT_APPROVE_TIMEOUT,
    Approval,
    ApprovalGate,
    ApproveMode,
    Approver,
    ApprovingFileSystem,
    Proposal,
    ProposedChange,
    apply_proposal,
    workspace_id,
)
from ._arguments import (
    JS_SPACE,
    JsonType,
    Param,
    check_shape,
    is_blank,
    js_number,
    non_blank,
    object_schema,
    positive_integer,
    string_param,
)
from ._base import FsTool, capture_for, guarded_edit, observe, session_cwd
from ._changeset import MAX_SET_BYTES, ChangeSet
from ._dialects import (
    DeleteFileTool,
    DialectGrants,
    DialectOperation,
    DialectToolsPlugin,
    InsertTool,
    PatchFilesTool,
    PatchTool,
)
from ._edit import EditTool
from ._edit_files import EditFilesTool
from ._image import IMAGE_FORMATS, MAX_IMAGE_BYTES
from ._manage import MANAGEMENT_TOOLS, DeleteTool, FileManagementPlugin, MkdirTool, MoveTool
from ._plugin import FsToolsPlugin
from ._read import ReadTool
from ._render import REMEDIES, message_with_remedy, render_edit, render_read, render_write
from ._set_recovery import SetRecovery, recover_sets
from ._values import (
    DeleteValue,
    EditedFile,
    EditFilesValue,
    EditValue,
    ImageValue,
    MkdirValue,
    MoveValue,
    ReadValue,
    WriteValue,
)
from ._write import WriteTool

__all__ = [
    "DEFAULT_APPROVE_TIMEOUT",
    "IMAGE_FORMATS",
    "JS_SPACE",
    "MANAGEMENT_TOOLS",
    "MAX_IMAGE_BYTES",
    "MAX_SET_BYTES",
    "REMEDIES",
    "Approval",
    "ApprovalGate",
    "ApproveMode",
    "Approver",
    "ApprovingFileSystem",
    "ChangeSet",
    "DeleteFileTool",
    "DeleteTool",
    "DeleteValue",
    "DialectGrants",
    "DialectOperation",
    "DialectToolsPlugin",
    "EditFilesTool",
    "EditFilesValue",
    "EditTool",
    "EditValue",
    "EditedFile",
    "FileManagementPlugin",
    "FsTool",
    "FsToolsPlugin",
    "ImageValue",
    "InsertTool",
    "JsonType",
    "MkdirTool",
    "MkdirValue",
    "MoveTool",
    "MoveValue",
    "Param",
    "PatchFilesTool",
    "PatchTool",
    "Proposal",
    "ProposedChange",
    "ReadTool",
    "ReadValue",
    "SetRecovery",
    "WriteTool",
    "WriteValue",
    "apply_proposal",
    "capture_for",
    "check_shape",
    "guarded_edit",
    "is_blank",
    "js_number",
    "message_with_remedy",
    "non_blank",
    "object_schema",
    "observe",
    "positive_integer",
    "recover_sets",
    "render_edit",
    "render_read",
    "render_write",
    "session_cwd",
    "string_param",
    "workspace_id",
]
