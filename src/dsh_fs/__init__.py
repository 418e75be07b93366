"""dsh-fs: safe file tools for LLM agents (read, write, edit, glob, grep, list).

The public API re-exported here is pinned by tests/test_exported_members.py.
"""

from ._version import __version__
from .errors import FsError, FsErrorCode
from .runtime import ToolResult
from .workspace import Session, Workspace

__all__ = ["FsError", "FsErrorCode", "Session", "ToolResult", "Workspace", "__version__"]
