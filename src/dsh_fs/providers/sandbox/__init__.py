"""The sandbox provider: `SandboxFileSystem`, a fence around `LocalFileSystem` that confines
it to root directories (`SandboxMode` names what it allows).

The containment logic, canonical roots and "is this path inside?", is pure (`_paths`);
the fence is applied through the local provider's `LocalGuards` on what it really opens.
"""

from ._filesystem import SandboxFileSystem, SandboxMode

__all__ = ["SandboxFileSystem", "SandboxMode"]
