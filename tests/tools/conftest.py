"""Fixtures for the tools' integration tests: a workspace over each disk-backed provider.

Tests get `make_workspace(policy=True)` bound to `root` (a fresh directory) and check the
disk through `root` directly, out of band. Adding a disk-backed provider is one entry in
`BACKENDS`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from dsh_fs import Workspace

WorkspaceFactory = Callable[..., Workspace]


def _local(root: Path, policy: bool) -> Workspace:
    return Workspace.local(root, policy=policy)


def _sandbox(root: Path, policy: bool) -> Workspace:
    from dsh_fs.providers import SandboxFileSystem

    return Workspace(SandboxFileSystem([root]), cwd=str(root), policy=policy)


BACKENDS: dict[str, Callable[[Path, bool], Workspace]] = {"local": _local, "sandbox": _sandbox}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """The workspace directory (a real path, so display paths are predictable)."""
    return tmp_path.resolve()


@pytest.fixture(params=sorted(BACKENDS))
async def make_workspace(
    request: pytest.FixtureRequest, root: Path
) -> AsyncIterator[WorkspaceFactory]:
    """Build workspaces over `root` with the backend under test; all are closed after."""
    build = BACKENDS[request.param]
    built: list[Workspace] = []

    def make(*, policy: bool = True) -> Workspace:
        workspace = build(root, policy)
        built.append(workspace)
        return workspace

    yield make
    for workspace in built:
        await workspace.aclose()
