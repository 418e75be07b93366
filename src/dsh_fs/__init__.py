"""dsh-fs: safe file tools for LLM agents (read, write, edit, glob, grep, list, move,
delete, mkdir).

The public API re-exported here is pinned by tests/test_exported_members.py.
"""

# First: on Windows it fails, saying to use WSL (rather than an ImportError from fcntl).
from . import _platform  # noqa: F401
from ._version import __version__
from .errors import FsError, FsErrorCode
from .fs import Rules
from .runtime import ToolResult
from .tools import Approval, Proposal
from .workspace import Session, Workspace

__all__ = [
    "Approval",
    "FsError",
    "FsErrorCode",
    "Proposal",
    "Rules",
    "Session",
    "ToolResult",
    "Workspace",
    "__version__",
]
