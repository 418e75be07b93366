"""`dsh-fs mcp --print-config HOST`: a host configuration that works as printed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from dsh_fs.cli import main
from dsh_fs.providers import default_journal_location

SCRIPT = Path(sys.executable).parent / "dsh-fs"


def _pinned() -> list[str]:
    """The journal store every printed entry pins (SPEC §9.1): this user's default store."""
    return ["--journal", default_journal_location()]


def _printed(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[Any, str]:
    assert main(argv) == 0
    captured = capsys.readouterr()
    return json.loads(captured.out), captured.err


def test_claude_config_names_this_interpreter_and_absolute_roots(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "project").mkdir()
    monkeypatch.chdir(tmp_path)
    config, hint = _printed(["mcp", "--print-config", "claude", "project"], capsys)
    command = [sys.executable, "-m", "dsh_fs", "mcp", *_pinned(), str(tmp_path / "project")]
    assert config == {
        "mcpServers": {"dsh-fs": {"type": "stdio", "command": command[0], "args": command[1:]}}
    }
    assert hint.endswith(f"or run: claude mcp add dsh-fs -- {' '.join(command)}\n")


def test_the_printed_config_keeps_the_path_rules(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--deny", ".env", "--deny", "*.pem", "--protect", "dist/", "--no-default-rules"]
    config, _ = _printed(["mcp", *argv, "--print-config", "claude", str(tmp_path)], capsys)
    args = config["mcpServers"]["dsh-fs"]["args"]
    assert args[args.index("mcp") + 1 :] == [
        "--no-default-rules",
        "--deny",
        ".env",
        "--deny",
        "*.pem",
        "--protect",
        "dist/",
        *_pinned(),
        str(tmp_path),
    ]


def test_the_printed_config_keeps_the_client_roots_choice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--client-roots", "strict", "--print-config", "claude", str(tmp_path)]
    config, _ = _printed(["mcp", *argv], capsys)
    args = config["mcpServers"]["dsh-fs"]["args"]
    assert args[args.index("mcp") + 1 :] == ["--client-roots", "strict", *_pinned(), str(tmp_path)]


def test_cursor_and_vscode_configs_have_their_hosts_shapes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cursor, _ = _printed(["mcp", "--print-config", "cursor", str(tmp_path)], capsys)
    vscode, hint = _printed(["mcp", "--print-config", "vscode", str(tmp_path)], capsys)
    entry = {"command": sys.executable, "args": ["-m", "dsh_fs", "mcp", *_pinned(), str(tmp_path)]}
    assert cursor == {"mcpServers": {"dsh-fs": entry}}
    assert vscode == {"servers": {"dsh-fs": {"type": "stdio", **entry}}}
    assert ".vscode/mcp.json" in hint


def test_the_printed_command_keeps_the_server_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["mcp", "--read-only", "--structured", "--log-level", "info", "--tools", "grep, read"]
    argv += ["--print-config", "claude", "--max-message-size", "64MiB"]
    config, _ = _printed([*argv, str(tmp_path), str(tmp_path)], capsys)
    assert config["mcpServers"]["dsh-fs"]["args"][3:] == [
        "--read-only",
        "--structured",
        "--max-message-size",
        str(64 << 20),
        "--log-level",
        "info",
        *_pinned(),
        "--tools",
        "grep,read",
        str(tmp_path),
        str(tmp_path),
    ]


def test_the_installed_script_prints_itself_as_the_command(tmp_path: Path) -> None:
    assert SCRIPT.is_file(), "the package's console script is installed beside the interpreter"
    done = subprocess.run(
        [str(SCRIPT), "mcp", "--print-config", "cursor", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    entry = json.loads(done.stdout)["mcpServers"]["dsh-fs"]
    assert entry == {"command": str(SCRIPT), "args": ["mcp", *_pinned(), str(tmp_path)]}


@pytest.mark.anyio
async def test_a_host_starting_the_printed_entry_gets_the_tools(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.txt").write_text("alpha\n", encoding="utf-8")
    config, _ = _printed(["mcp", "--print-config", "claude", str(tmp_path)], capsys)
    entry = config["mcpServers"]["dsh-fs"]
    server = StdioServerParameters(command=entry["command"], args=entry["args"], cwd="/")
    with anyio.fail_after(30):
        async with Client(server) as client:
            result = await client.call_tool("read", {"file_path": "notes.txt"})
    assert not result.is_error
    assert "1: alpha" in getattr(result.content[0], "text", "")


def test_a_missing_mcp_sdk_says_how_to_install_it_into_this_environment(tmp_path: Path) -> None:
    without_sdk = (
        "import sys; sys.modules['mcp'] = None; from dsh_fs.cli import main; "
        f"sys.exit(main(['mcp', {str(tmp_path)!r}]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", without_sdk],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert f"{sys.executable} -m pip install 'mcp>=2.3,<3'" in done.stderr
    assert "dsh-fs[mcp]" not in done.stderr


def test_an_http_entry_names_the_url_and_reads_the_token_from_the_environment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["mcp", "--http", "127.0.0.1:8765", "--print-config"]
    url = "http://127.0.0.1:8765/mcp"
    claude, hint = _printed([*argv, "claude", str(tmp_path)], capsys)
    assert claude == {
        "mcpServers": {
            "dsh-fs": {
                "type": "http",
                "url": url,
                "headers": {"Authorization": "Bearer ${DSH_FS_MCP_TOKEN}"},
            }
        }
    }
    assert (
        f'claude mcp add --transport http dsh-fs {url} --header "Authorization: Bearer '
        '$DSH_FS_MCP_TOKEN"' in hint
    )
    cursor, _ = _printed([*argv, "cursor", str(tmp_path)], capsys)
    assert cursor == {
        "mcpServers": {
            "dsh-fs": {"url": url, "headers": {"Authorization": "Bearer ${env:DSH_FS_MCP_TOKEN}"}}
        }
    }
    vscode, _ = _printed([*argv, "vscode", str(tmp_path)], capsys)
    assert vscode["servers"]["dsh-fs"] == {
        "type": "http",
        "url": url,
        "headers": {"Authorization": "Bearer ${input:dsh-fs-token}"},
    }
    assert vscode["inputs"] == [
        {
            "type": "promptString",
            "id": "dsh-fs-token",
            "description": "dsh-fs MCP server token",
            "password": True,
        }
    ]


def test_an_http_entry_without_auth_has_no_header(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["mcp", "--http", "[::1]:8765", "--no-auth", "--print-config", "cursor", str(tmp_path)]
    config, hint = _printed(argv, capsys)
    assert config == {"mcpServers": {"dsh-fs": {"url": "http://[::1]:8765/mcp"}}}
    assert "--http '[::1]:8765' --no-auth" in hint  # quoted for the shell


def test_the_http_hint_starts_the_server_on_the_same_absolute_folders_and_flags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "project").mkdir()
    monkeypatch.chdir(tmp_path)
    argv = ["mcp", "--http", "127.0.0.1:8765", "--read-only", "--print-config", "claude"]
    _, hint = _printed([*argv, "project"], capsys)
    pinned = " ".join(_pinned())
    assert hint.rstrip().endswith(
        f"mcp --http 127.0.0.1:8765 --read-only {pinned} {tmp_path / 'project'}"
    ), hint
    _, hint = _printed(
        ["mcp", "--http", "127.0.0.1:8765", "--no-auth", "--print-config", "cursor", "project"],
        capsys,
    )
    assert hint.rstrip().endswith(
        f"mcp --http 127.0.0.1:8765 --no-auth {pinned} {tmp_path / 'project'}"
    ), hint


def test_the_printed_entry_of_a_venv_install_runs_with_an_empty_environment_and_another_home(
    tmp_path: Path,
) -> None:
    printed = subprocess.run(
        [str(SCRIPT), "mcp", "--print-config", "claude", str(tmp_path)],
        capture_output=True,
        check=True,
    )
    entry = json.loads(printed.stdout)["mcpServers"]["dsh-fs"]
    (tmp_path / "otherhome").mkdir()
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "host", "version": "0"},
        },
    }
    served = subprocess.run(
        ["env", "-i", f"HOME={tmp_path / 'otherhome'}", entry["command"], *entry["args"]],
        input=json.dumps(initialize).encode() + b"\n",
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert served.returncode == 0, served.stderr
    assert json.loads(served.stdout.splitlines()[0])["result"]["serverInfo"]["name"] == "dsh-fs"
    # The store is the one this user's `dsh-fs log` reads, not one under the host's HOME.
    assert f"dsh-fs: journal store {default_journal_location()}/" in served.stderr.decode()
    assert not (tmp_path / "otherhome" / ".local").exists()


@pytest.mark.skipif(
    os.geteuid() == 0,
    reason="root lists every folder, so no folder is unreadable to this test",
)
def test_an_unreadable_root_is_refused_at_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "locked"
    root.mkdir(mode=0o000)
    try:
        assert main(["mcp", str(root)]) == 2
    finally:
        root.chmod(0o700)
    assert "permission denied" in capsys.readouterr().err


def test_the_printed_command_keeps_the_journal_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    argv = ["mcp", "--journal", "store", "--journal-max-bytes", "500M"]
    argv += ["--journal-max-age", "36h", "--print-config", "claude", str(tmp_path)]
    config, _ = _printed(argv, capsys)
    args = config["mcpServers"]["dsh-fs"]["args"]
    assert args[args.index("mcp") + 1 :] == [
        "--journal",
        str(tmp_path / "store"),
        "--journal-max-bytes",
        str(500 << 20),
        "--journal-max-age",
        "36h",
        str(tmp_path),
    ]
    off, _ = _printed(["mcp", "--no-journal", "--print-config", "cursor", str(tmp_path)], capsys)
    assert off["mcpServers"]["dsh-fs"]["args"][3:] == ["--no-journal", str(tmp_path)]
    default, _ = _printed(["mcp", "--print-config", "cursor", str(tmp_path)], capsys)
    assert default["mcpServers"]["dsh-fs"]["args"][3:] == [*_pinned(), str(tmp_path)]


def test_the_config_of_a_remote_root_keeps_its_journal_on_its_storage(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["mcp", "--print-config", "claude", "s3://bucket/ws"]) == 0
    args = json.loads(capsys.readouterr().out)["mcpServers"]["dsh-fs"]["args"]
    # No local store pinned: the server's default is the bucket's, beside the root.
    assert args[-2:] == ["mcp", "s3://bucket/ws"]
    assert "--journal" not in args


def test_the_printed_config_keeps_the_approval_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--approve", "destructive", "--approve-path", "*.toml", "--approve-timeout", "2m"]
    config, _ = _printed(["mcp", *argv, "--print-config", "claude", str(tmp_path)], capsys)
    args = config["mcpServers"]["dsh-fs"]["args"]
    assert args[args.index("mcp") + 1 :] == [
        "--approve",
        "destructive",
        "--approve-path",
        "*.toml",
        "--approve-timeout",
        "120",
        *_pinned(),
        str(tmp_path),
    ]


def test_the_cli_default_approval_timeout_is_the_librarys() -> None:
    from dsh_fs.cli._main import DEFAULT_APPROVE_TIMEOUT
    from dsh_fs.tools import DEFAULT_APPROVE_TIMEOUT as LIBRARY

    assert DEFAULT_APPROVE_TIMEOUT == LIBRARY
