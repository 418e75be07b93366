"""What the adapter tests share: a workspace folder and a session on it, sandboxed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from dsh_fs import Workspace
from dsh_fs.workspace import Session


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    return (tmp_path / "ws").resolve()


@pytest.fixture
async def session(root: Path) -> AsyncIterator[Session]:
    async with Workspace.sandbox(root) as workspace:
        yield workspace.session()
