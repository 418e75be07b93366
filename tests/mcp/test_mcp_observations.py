"""`dsh-fs mcp --observations redis://…` (SPEC §14): the server's observations in Redis.

A real ``redis-server`` on loopback (skipped, with the reason, where it can't be had) and
the server over stdio driven by the official client: read→edit works through the ledger,
and with the ledger gone the server keeps answering reads while it refuses every mutation.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import Client

from dsh_fs.cli import main

from ..redis_server import RedisServer, redis_or_skip
from .mcp_testing import HANDSHAKE, make_root, stdio_server
from .test_mcp_stdio import TIMEOUT, code_of, text_of

pytestmark = pytest.mark.anyio


async def test_a_server_on_a_redis_ledger_refuses_mutations_while_redis_is_gone(
    tmp_path: Path,
) -> None:
    server = RedisServer(redis_or_skip(), tmp_path / "redis")
    server.start()
    root = make_root(tmp_path)
    edit = {"file_path": "notes.txt", "old_string": "beta", "new_string": "BETA"}
    try:
        params = stdio_server(str(root), "--observations", server.url, "--observation-ttl", "1h")
        with anyio.fail_after(TIMEOUT):
            async with Client(params, mode=HANDSHAKE) as client:
                assert not (await client.call_tool("read", {"file_path": "notes.txt"})).is_error
                assert not (await client.call_tool("edit", edit)).is_error
                server.stop()
                read = await client.call_tool("read", {"file_path": "notes.txt"})
                assert "BETA" in text_of(read)
                again = {"file_path": "notes.txt", "old_string": "BETA", "new_string": "b"}
                refused = await client.call_tool("edit", again)
                created = await client.call_tool("write", {"file_path": "n.txt", "content": "x"})
    finally:
        server.stop()
    assert code_of(refused) == "FS_NOT_OBSERVED"
    assert "the observation ledger is unreachable" in text_of(refused)
    assert code_of(created) == "FS_NOT_OBSERVED"
    assert (root / "notes.txt").read_text(encoding="utf-8") == "alpha\nBETA\ngamma\n"
    assert not (root / "n.txt").exists()


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (["--observations", "ftp://ledger"], "expected 'memory' or a redis:// URL"),
        (["--observation-ttl", "0"], "invalid duration '0'"),
        (["--observation-ttl", "soon"], "invalid duration 'soon'"),
    ],
)
def test_a_bad_ledger_or_ttl_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], words: str
) -> None:
    assert main(["mcp", str(tmp_path), *flags]) == 2
    assert words in capsys.readouterr().err
