"""The provider layer: implementations of the `dsh_fs.fs.FileSystem` contract.

`LocalFileSystem` (the host filesystem), `SandboxFileSystem` (a fence around it) and
`FsspecFileSystem` (any fsspec storage: memory, S3, SFTP, …). Providers sit above the
contract and below the tools and the policy, which never import them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["FsspecFileSystem", "LocalFileSystem", "SandboxFileSystem"]

if TYPE_CHECKING:
    from ._fsspec import FsspecFileSystem
    from ._local import LocalFileSystem
    from ._sandbox import SandboxFileSystem


def __getattr__(name: str) -> Any:
    # Lazy so `import dsh_fs.providers` costs nothing and optional backends (fsspec) load
    # only when asked for.
    if name == "FsspecFileSystem":
        from ._fsspec import FsspecFileSystem

        return FsspecFileSystem
    if name == "LocalFileSystem":
        from ._local import LocalFileSystem

        return LocalFileSystem
    if name == "SandboxFileSystem":
        from ._sandbox import SandboxFileSystem

        return SandboxFileSystem
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
