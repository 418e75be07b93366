"""dsh-fs: safe read/write/edit file tools for LLM agents.

The public API re-exported here is pinned by tests/test_exported_members.py.
"""

from ._version import __version__
from .errors import FsError, FsErrorCode

__all__ = ["FsError", "FsErrorCode", "__version__"]
