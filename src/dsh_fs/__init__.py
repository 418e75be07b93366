"""dsh-fs: safe file tools for LLM agents (read, write, edit, glob, grep, list).

The public API re-exported here is pinned by tests/test_exported_members.py.
"""

import sys

if sys.platform == "win32":
    # The providers need POSIX descriptor calls (fcntl, openat-style dir_fd): say so plainly,
    # rather than fail later with an ImportError from fcntl.
    raise ImportError(
        "dsh-fs runs on Linux and macOS; on Windows, install and run it inside WSL "
        "(Windows Subsystem for Linux)"
    )

from ._version import __version__
from .errors import FsError, FsErrorCode
from .runtime import ToolResult
from .workspace import Session, Workspace

__all__ = ["FsError", "FsErrorCode", "Session", "ToolResult", "Workspace", "__version__"]
