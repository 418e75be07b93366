"""The tools layer: `read`, `write` and `edit` (SPEC §6), `glob`, `grep`, `list` (§8.1),
and the internal `insert`, `patch` and `delete` the vendor dialect adapters call.

Argument checks and schemas, read windowing, rendering, remedies, and the executors that
call the context's `fs` service and dispatch the fs/* events. It sits on the provider
contract (`dsh_fs.fs`) and the runtime; above it, `dsh_fs.workspace` assembles a usable
stack. It never imports a provider or the policy: whoever answers the intents is a plugin.

Public: the plugins that register the tools, the tool classes (to compose a stack by hand)
and their canonical values (what `ToolResult.data` holds). Windowing, rendering and argument
checking are internal.
"""

from ._dialects import (
    DeleteTool,
    DeleteValue,
    DialectGrants,
    DialectOperation,
    DialectToolsPlugin,
    InsertTool,
    PatchTool,
)
from ._discovery import DiscoveryPlugin
from ._edit import EditTool
from ._glob import GlobTool
from ._grep import GrepTool
from ._image import IMAGE_FORMATS, MAX_IMAGE_BYTES
from ._list import ListTool
from ._plugin import FsToolsPlugin
from ._read import ReadTool
from ._search_values import GlobValue, GrepMatch, GrepValue, ListEntry, ListValue
from ._searching import DiscoveryConfig
from ._values import EditValue, ImageValue, ReadValue, WriteValue
from ._write import WriteTool

__all__ = [
    "IMAGE_FORMATS",
    "MAX_IMAGE_BYTES",
    "DeleteTool",
    "DeleteValue",
    "DialectGrants",
    "DialectOperation",
    "DialectToolsPlugin",
    "DiscoveryConfig",
    "DiscoveryPlugin",
    "EditTool",
    "EditValue",
    "FsToolsPlugin",
    "GlobTool",
    "GlobValue",
    "GrepMatch",
    "GrepTool",
    "GrepValue",
    "ImageValue",
    "InsertTool",
    "ListEntry",
    "ListTool",
    "ListValue",
    "PatchTool",
    "ReadTool",
    "ReadValue",
    "WriteTool",
    "WriteValue",
]
