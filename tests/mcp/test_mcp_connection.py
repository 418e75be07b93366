"""The MCP connection behind a request (the SDK keeps it private): found, pinned, and an
SDK change fails when the server is created, never one request at a time."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server.session import ServerSession

from dsh_fs import Session, Workspace
from dsh_fs.mcp import _connection, create_server
from dsh_fs.mcp._connection import check_connection_lookup

from .mcp_testing import make_root


def test_the_connection_lookup_works_with_the_installed_sdk() -> None:
    check_connection_lookup()


class _RenamedConnection(ServerSession):
    """A ServerSession as a future SDK might write it: the connection elsewhere."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._peer_connection = self.__dict__.pop("_connection")


def test_an_sdk_that_moved_the_connection_fails_at_server_creation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_connection, "ServerSession", _RenamedConnection)
    workspace = Workspace.local(tmp_path)
    with pytest.raises(RuntimeError, match=r"cannot find the client connection .* in mcp 2\."):
        create_server(workspace)
    create_server(workspace, single_session=True)  # stdio needs no lookup


@pytest.mark.anyio
async def test_a_connections_observation_owner_goes_with_the_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_root(tmp_path)
    owners: list[weakref.ref[Session]] = []
    opened = Workspace.session

    def recorded(self: Workspace, **options: Any) -> Session:
        session = opened(self, **options)
        owners.append(weakref.ref(session))
        return session

    monkeypatch.setattr(Workspace, "session", recorded)
    async with Workspace.sandbox(root) as workspace:
        server = create_server(workspace)
        with anyio.fail_after(60):
            async with Client(server, mode="legacy") as client:
                await client.call_tool("read", {"file_path": "notes.txt"})
                await client.call_tool("read", {"file_path": "notes.txt"})
                assert len(owners) == 1
                assert owners[0]() is not None
        gc.collect()
        assert owners[0]() is None
