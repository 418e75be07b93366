"""The tools layer: `read`, `write` and `edit` (SPEC §6), and `glob`, `grep`, `list` (§8.1).

Argument models and schemas, read windowing, rendering, remedies, and the executors that
call the context's `fs` service and dispatch the fs/* events. It sits on the provider
contract (`dsh_fs.fs`) and the runtime; above it, `dsh_fs.workspace` assembles a usable
stack. It never imports a provider or the policy: whoever answers the intents is a plugin.
"""

from ._arguments import EditArguments, ReadArguments, WriteArguments
from ._discovery import DiscoveryPlugin
from ._edit import EditTool
from ._errors import REMEDIES, message_with_remedy
from ._glob import GlobTool
from ._grep import GrepTool
from ._list import ListTool
from ._plugin import FsToolsPlugin
from ._read import ReadTool
from ._render import render_edit, render_read, render_write
from ._search_arguments import GlobArguments, GrepArguments, ListArguments
from ._search_values import GlobValue, GrepMatch, GrepValue, ListEntry, ListValue
from ._searching import DiscoveryConfig
from ._values import EditValue, ReadValue, WriteValue
from ._window import MAX_BYTES, MAX_LINE_CHARS, MAX_LINES, LineWindow, Window, window_text
from ._write import WriteTool

__all__ = [
    "MAX_BYTES",
    "MAX_LINES",
    "MAX_LINE_CHARS",
    "REMEDIES",
    "DiscoveryConfig",
    "DiscoveryPlugin",
    "EditArguments",
    "EditTool",
    "EditValue",
    "FsToolsPlugin",
    "GlobArguments",
    "GlobTool",
    "GlobValue",
    "GrepArguments",
    "GrepMatch",
    "GrepTool",
    "GrepValue",
    "LineWindow",
    "ListArguments",
    "ListEntry",
    "ListTool",
    "ListValue",
    "ReadArguments",
    "ReadTool",
    "ReadValue",
    "Window",
    "WriteArguments",
    "WriteTool",
    "WriteValue",
    "message_with_remedy",
    "render_edit",
    "render_read",
    "render_write",
    "window_text",
]
