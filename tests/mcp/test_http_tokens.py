"""``dsh-fs mcp --http --tokens FILE``: one bearer token per agent (SPEC §14).

Each line of the file is ``TOKEN NAME``; a request carrying any agent's token is served, one
carrying the single default token (or none) is refused, and each agent's MCP session owns
its own observations: what one agent read never lets another edit.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from dsh_fs.cli import main

from .http_testing import TIMEOUT, TOKEN, client, http_server
from .mcp_testing import make_root

pytestmark = pytest.mark.anyio

ALICE = "alice-token-0123456789abcdef"
BOB = "bob-token-0123456789abcdef"


async def test_each_agent_token_is_served_and_agents_never_share_observations(
    tmp_path: Path,
) -> None:
    root = make_root(tmp_path)
    tokens = tmp_path / "tokens"
    tokens.write_text(f"# agents\n{ALICE} alice\n\n{BOB}   bob\n", encoding="utf-8")
    tokens.chmod(0o600)
    edit = {"file_path": "notes.txt", "old_string": "beta", "new_string": "BETA"}
    async with http_server(root, "--tokens", str(tokens)) as server:
        assert "(2 agents; each owns its observations)" in server.stderr
        assert ALICE not in server.stderr
        with anyio.fail_after(TIMEOUT):
            async with client(server.url, ALICE) as alice, client(server.url, BOB) as bob:
                assert not (await alice.call_tool("read", {"file_path": "notes.txt"})).is_error
                refused = await bob.call_tool("edit", edit)
                assert refused.is_error
                assert (refused.meta or {}).get("dsh-fs/code") == "FS_NOT_OBSERVED"
                assert not (await alice.call_tool("edit", edit)).is_error
            with pytest.raises(Exception):  # noqa: B017, PT011 - the SDK's 401 is an HTTP error
                async with client(server.url, TOKEN) as stranger:
                    await stranger.list_tools()
    assert (root / "notes.txt").read_text(encoding="utf-8") == "alpha\nBETA\ngamma\n"


@pytest.mark.parametrize(
    ("lines", "words"),
    [
        (f"{ALICE}\n", "line 1: expected 'TOKEN NAME'"),
        (f"{ALICE} alice\n{ALICE} bob\n", "line 2: the token is already 'alice''s"),
        ("short alice\n", "must be at least 16 characters"),
        ("# nobody\n", "no 'TOKEN NAME' line"),
    ],
)
def test_a_bad_tokens_file_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lines: str, words: str
) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text(lines, encoding="utf-8")
    assert main(["mcp", "--http", "127.0.0.1:0", "--tokens", str(tokens), str(tmp_path)]) == 2
    assert words in capsys.readouterr().err


def test_tokens_contradict_no_auth_and_apply_to_http_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tokens = str(tmp_path / "tokens")
    assert main(["mcp", "--http", "127.0.0.1:0", "--tokens", tokens, "--no-auth", "."]) == 2
    assert "--tokens and --no-auth contradict each other" in capsys.readouterr().err
    assert main(["mcp", "--tokens", tokens, str(tmp_path)]) == 2
    assert "--tokens applies to --http only" in capsys.readouterr().err
