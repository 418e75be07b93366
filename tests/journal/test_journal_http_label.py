"""Over HTTP a change is labelled with the client's name (from its `clientInfo`), not the raw
session id, so `undo --session <client>` finds it (SPEC §9.1)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp_types import Implementation

from dsh_fs import Workspace

from ..mcp.http_testing import TIMEOUT, client, http_server

pytestmark = pytest.mark.anyio


async def test_an_http_clients_changes_carry_its_name_and_its_session_undoes_them(
    tmp_path: Path,
) -> None:
    root, store = tmp_path / "project", tmp_path / "store"
    root.mkdir()
    (root / "a.txt").write_text("mine\n")
    env = {"XDG_STATE_HOME": str(tmp_path / "state"), "HOME": str(tmp_path)}
    async with http_server(root, "--journal", str(store), env=env) as server:
        with anyio.fail_after(TIMEOUT):
            async with client(
                server.url, options={"client_info": Implementation(name="review-bot", version="1")}
            ) as mcp:
                await mcp.call_tool("read", {"file_path": "a.txt"})
                result = await mcp.call_tool("write", {"file_path": "a.txt", "content": "bot\n"})
                assert not result.is_error
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        (entry,) = await ws.journal.entries()
        assert entry.session.startswith("review-bot-http-")
        (undone,) = await ws.journal.undo(session="review-bot")
        assert undone.result == "undone"
    assert (root / "a.txt").read_text() == "mine\n"
