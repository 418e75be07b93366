"""The shared fixture tree of the discovery tests, and workspaces over every backend.

One tree exercises what glob and grep decide (hidden, ignored, negated, binary, CRLF, long
and non-ASCII lines, nested ignore files): both engines must render it byte for byte the
same, on every backend.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

from dsh_fs import Workspace
from dsh_fs.discovery import DiscoveryConfig

__all__ = ["BACKENDS", "TREE", "WorkspaceOver", "write_local"]

LONG = "é" * 700 + " needle " + "x" * 3000

TREE: dict[str, bytes] = {
    ".git/HEAD": b"ref: refs/heads/main\n",
    ".gitignore": b"build/\n*.log\n!keep.log\n",
    ".env": b"TOKEN=needle\n",
    "README.md": b"# needle project\n",
    "keep.log": b"needle kept\n",
    "debug.log": b"needle debug\n",
    "build/out.txt": b"needle built\n",
    "src/app.py": b"def needle():\n    return 'needle'\n\nneedle()\n",
    "src/util.py": b"x = 1\r\ny = needle\r\n",
    "src/.ignore": b"generated/\n",
    "src/generated/gen.py": b"needle gen\n",
    "src/long.txt": ("start\n" + LONG + "\nend needle").encode(),
    "src/uni.txt": "naïve needle café\n٣ digits\nword_needle\n".encode(),
    "data/blob.bin": b"needle\x00binary\n",
    "docs/guide.md": b"needle in docs\n",
    "docs/.hidden/secret.md": b"needle hidden\n",
    "notes/a b.txt": b"needle with space in name\n",
    "notes/empty.txt": b"",
}
"""Relative path → content."""

MTIMES = {path: 1_700_000_000 + index * 10 for index, path in enumerate(sorted(TREE))}
"""Distinct modification times (seconds) so glob's oldest-first order is known."""


def write_local(root: Path, tree: dict[str, bytes] = TREE) -> None:
    """Write `tree` under `root`, with `MTIMES` where given."""
    for rel, data in tree.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        if rel in MTIMES:
            os.utime(path, (MTIMES[rel], MTIMES[rel]))


WorkspaceOver = Callable[[Path, dict[str, bytes]], AbstractAsyncContextManager[Workspace]]
"""Builds a workspace whose working directory holds a tree."""


def _local(native: bool) -> Callable[[Path], Workspace]:
    def build(root: Path) -> Workspace:
        return Workspace.local(root, discovery=DiscoveryConfig(native=native))

    return build


def _sandbox(native: bool) -> Callable[[Path], Workspace]:
    def build(root: Path) -> Workspace:
        return Workspace.sandbox(root, discovery=DiscoveryConfig(native=native))

    return build


@asynccontextmanager
async def disk_workspace(
    build: Callable[[Path], Workspace], root: Path, tree: dict[str, bytes]
) -> AsyncIterator[Workspace]:
    write_local(root, tree)
    async with build(root) as workspace:
        yield workspace


@asynccontextmanager
async def memory_workspace(root: Path, tree: dict[str, bytes]) -> AsyncIterator[Workspace]:
    del root
    from fsspec.implementations.memory import MemoryFileSystem

    name = f"search-{uuid.uuid4().hex}"
    memory = MemoryFileSystem()
    for rel, data in tree.items():
        memory.pipe_file(f"/{name}/{rel}", data)
    try:
        async with Workspace.remote(f"memory://{name}") as workspace:
            yield workspace
    finally:
        memory.rm(f"/{name}", recursive=True)


@asynccontextmanager
async def s3_workspace(root: Path, tree: dict[str, bytes]) -> AsyncIterator[Workspace]:
    del root
    from tests.s3_server import shared_server

    server = shared_server()
    bucket = server.new_bucket()
    client = server.client()
    for rel, data in tree.items():
        client.put_object(Bucket=bucket, Key=f"repo/{rel}", Body=data)
    async with Workspace.remote(f"s3://{bucket}/repo", **server.storage_options()) as workspace:
        yield workspace


def _disk(build: Callable[[Path], Workspace]) -> WorkspaceOver:
    def factory(root: Path, tree: dict[str, bytes]) -> AbstractAsyncContextManager[Workspace]:
        return disk_workspace(build, root, tree)

    return factory


BACKENDS: dict[str, WorkspaceOver] = {
    "local-rg": _disk(_local(True)),
    "local-pure": _disk(_local(False)),
    "sandbox-rg": _disk(_sandbox(True)),
    "sandbox-pure": _disk(_sandbox(False)),
    "memory": memory_workspace,
    "s3": s3_workspace,
}
"""Every way the discovery tools run: name → ``factory(root, tree)``, an async context
manager giving a workspace whose working directory holds `tree`."""
