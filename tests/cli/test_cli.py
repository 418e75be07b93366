"""The ``dsh-fs`` command line: help, version, schema shapes and one-line usage errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from anthropic.types import ToolParam
from mcp_types import Tool
from openai.types.chat import ChatCompletionToolParam
from pydantic import TypeAdapter

from dsh_fs import Workspace, __version__
from dsh_fs.cli import main


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"dsh-fs {__version__}\n"


@pytest.mark.parametrize("argv", [[], ["--help"], ["mcp", "--help"], ["schema", "--help"]])
def test_help_describes_the_commands(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: dsh-fs")
    if argv[:1] == ["mcp"]:
        for flag in ("--read-only", "--full-access", "--read-anywhere", "--no-policy", "--http"):
            assert flag in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--bogus"], "dsh-fs: unrecognized arguments: --bogus (see 'dsh-fs --help')"),
        (["mcp", "--read-only", "--full-access"], "not allowed with argument"),
        (["mcp", "--http", "127.0.0.1:http"], "dsh-fs mcp: --http: invalid port 'http'"),
        (["mcp", "/no/such/dir"], "dsh-fs mcp: /no/such/dir: does not exist"),
        (["mcp", __file__], f"dsh-fs mcp: {__file__}: not a directory"),
        (
            ["mcp", "s3://bucket/x", "."],
            "dsh-fs mcp: s3://bucket/x: a remote ROOT is served alone; name only one ROOT",
        ),
        (
            ["mcp", "--read-only", "memory://x"],
            "dsh-fs mcp: --read-only applies to local folders, not to memory://x",
        ),
        (
            ["mcp", "--client-roots", "strict", "memory://x"],
            "dsh-fs mcp: --client-roots applies to local folders, not to memory://x",
        ),
        (["mcp", "nosuchprotocol://x"], "dsh-fs mcp: nosuchprotocol://x: "),
        (["mcp", "--client-roots", "loose"], "invalid choice: 'loose'"),
        (["mcp", "--http", ":0", "--print-config", "claude"], "needs the port clients will use"),
        (["mcp", "--print-config", "emacs"], "invalid choice: 'emacs'"),
        (["mcp", "--max-message-size", "lots"], "invalid size 'lots' (e.g. 1048576, 512K, 32M)"),
        (["mcp", "--max-message-size", "100"], "'100' is too small (at least 1K)"),
        (["schema", "--format", "yaml"], "invalid choice: 'yaml'"),
        (["schema", "--tools", "read,find"], "dsh-fs schema: --tools: unknown tool find"),
        (["mcp", "--tools", ""], "dsh-fs mcp: --tools: unknown tool (none)"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        (["mcp", "--deny", "!"], "dsh-fs mcp: invalid deny pattern '!'"),
        (["mcp", "--protect", " "], "dsh-fs mcp: invalid protect pattern ' '"),
        (["mcp", "--encoding", "*.txt=klingon"], "dsh-fs mcp: unknown encoding 'klingon'"),
        (
            ["mcp", "--encoding", "cp1252"],
            "dsh-fs mcp: --encoding 'cp1252': expected PATTERN=CODEC",
        ),
        (["mcp", "--encoding-fallback", "gbk,nope"], "dsh-fs mcp: unknown encoding 'nope'"),
    ],
)
def test_bad_command_lines_are_one_line_on_stderr_with_status_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1
    assert message in captured.err


def _schema(fmt: str, capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    assert main(["schema", "--format", fmt]) == 0
    tools: list[dict[str, object]] = json.loads(capsys.readouterr().out)
    return tools


def test_schema_openai_is_chat_completions_tools(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tools = _schema("openai", capsys)
    for tool in tools:
        TypeAdapter(ChatCompletionToolParam).validate_python(tool, strict=True)
    schemas = Workspace.local(tmp_path).tool_schemas()
    assert [t["function"] for t in tools] == schemas


def test_schema_anthropic_is_messages_tools(capsys: pytest.CaptureFixture[str]) -> None:
    for tool in _schema("anthropic", capsys):
        TypeAdapter(ToolParam).validate_python(tool, strict=True)


def test_schema_mcp_is_tools_list_tools(capsys: pytest.CaptureFixture[str]) -> None:
    tools = [Tool.model_validate(t) for t in _schema("mcp", capsys)]
    assert [t.name for t in tools] == [
        "read",
        "write",
        "edit",
        "edit_files",
        "glob",
        "grep",
        "list",
        "move",
        "delete",
        "mkdir",
    ]
    assert "inputSchema" in _schema("mcp", capsys)[0]


def test_schema_exports_the_chosen_tools_in_the_usual_order(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["schema", "--tools", "grep, read,list"]) == 0
    tools = json.loads(capsys.readouterr().out)
    assert [tool["name"] for tool in tools] == ["read", "grep", "list"]


def test_python_m_dsh_fs_bad_flag_exits_2_without_a_traceback() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "dsh_fs", "mcp", "--frobnicate"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1


def test_demo_prints_the_transcript_exits_0_and_leaves_nothing_behind(tmp_path: Path) -> None:
    # A home and a temporary folder of its own, as a user's: the demo's server journals by
    # default, so a journal store under this home would be a leak into the user's state.
    home, temp = tmp_path / "home", tmp_path / "tmp"
    home.mkdir()
    temp.mkdir()
    env = {name: value for name, value in os.environ.items() if not name.startswith("XDG_")}
    env.update(HOME=str(home), TMPDIR=str(temp))
    done = subprocess.run(
        [sys.executable, "-m", "dsh_fs", "demo"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "refused (FS_STALE_VERSION)" in done.stdout
    assert "re-read the file, then retry" in done.stdout
    assert "refused (FS_SANDBOX_DENIED)" in done.stdout
    assert list(temp.iterdir()) == []
    assert list(home.iterdir()) == []


def test_schema_piped_into_a_reader_that_is_gone_exits_quietly() -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # like `dsh-fs schema | head` after head has exited
    try:
        child = subprocess.run(
            [sys.executable, "-m", "dsh_fs", "schema", "--format", "openai"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            timeout=60,
            check=False,
        )
    finally:
        os.close(write_end)
    assert child.stderr == b""
    assert child.returncode == 141


def test_the_default_message_size_limit_is_the_servers() -> None:
    from dsh_fs.cli._main import _DEFAULT_MESSAGE_SIZE
    from dsh_fs.mcp.stdio._lines import DEFAULT_MAX_MESSAGE_SIZE

    assert _DEFAULT_MESSAGE_SIZE == DEFAULT_MAX_MESSAGE_SIZE == 32 << 20
