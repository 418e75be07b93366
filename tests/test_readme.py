"""The README tells the truth: its snippets are real files, its tables match the code."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from dsh_fs import FsErrorCode
from dsh_fs.cli import main
from dsh_fs.errors import ToolErrorCode

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def fenced_blocks(language: str) -> list[str]:
    """The bodies of the README's fenced code blocks tagged `language` ("" for untagged)."""
    blocks: list[str] = []
    body: list[str] | None = None
    tag = ""
    for line in README.splitlines(keepends=True):
        if line.startswith("```"):
            if body is None:
                body, tag = [], line[3:].strip()
            else:
                if tag == language:
                    blocks.append("".join(body))
                body = None
        elif body is not None:
            body.append(line)
    return blocks


def test_the_python_quickstart_is_the_example_file_verbatim() -> None:
    example = (ROOT / "examples" / "quickstart.py").read_text(encoding="utf-8")
    assert example in fenced_blocks("python")


def test_the_agent_loop_in_the_readme_is_the_example_s_code_verbatim() -> None:
    example = (ROOT / "examples" / "openai_agent.py").read_text(encoding="utf-8")
    loops = [block for block in fenced_blocks("python") if "execute_openai_tool_calls" in block]
    assert loops
    for block in loops:
        assert block in example


def test_the_quickstart_prints_what_the_readme_shows() -> None:
    run = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "quickstart.py")],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    printed = re.sub(r"/tmp/[^/\s\"]+/app\.py", "/tmp/tmpXXXX/app.py", run.stdout)
    shown = fenced_blocks("")
    assert any(block == printed for block in shown), printed


def test_every_error_code_in_the_readme_exists_and_every_code_is_documented() -> None:
    pattern = r"`((?:FS|SEARCH|TOOL)_[A-Z_]+|INVALID_ARGS|UNKNOWN_TOOL)`"
    documented = set(re.findall(pattern, README))
    assert documented == {code.value for code in (*FsErrorCode, *ToolErrorCode)}


def test_every_mcp_option_in_the_readme_exists() -> None:
    options = set(re.findall(r"^\| `(--[a-z-]+)", README, flags=re.MULTILINE))
    assert options
    run = subprocess.run(
        [sys.executable, "-m", "dsh_fs", "mcp", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    for option in options:
        assert option in run.stdout, option
    assert main(["--version"]) == 0
