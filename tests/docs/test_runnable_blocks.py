"""Docs that run: every block of the README and docs/*.md whose fence says ``runnable``
(```` ```sh runnable ````, ```` ```python runnable ````) is run as a user would, so a doc
can't drift from the code. A block runs in a fresh folder that is its working directory and
its ``HOME`` (so ``project`` and ``~/project`` are one folder, holding ``notes.txt``), with
a copy of ``examples/`` as in a checkout, this environment's ``dsh-fs`` first on ``PATH``,
and nothing on standard input. A Python block with a top-level ``await`` runs inside an
async ``main``. Mark every block that runs offline in seconds; leave the others unmarked."""

from __future__ import annotations

import ast
import inspect
import os
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
"""Where the blocks are (docs/SPEC.md, the contract, has none marked)."""
LANGUAGES = ("sh", "python")


@dataclass(frozen=True, slots=True, kw_only=True)
class Block:
    """A fenced block marked runnable."""

    page: str
    """The page, relative to the checkout."""
    line: int
    """The line of its opening fence."""
    language: str
    """The first word of its info string."""
    body: str
    """What is between the fences."""


def runnable_blocks(page: Path) -> list[Block]:
    """The blocks of `page` whose fence's info string has the word ``runnable``."""
    blocks: list[Block] = []
    opening: tuple[int, list[str]] | None = None
    body: list[str] = []
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if not line.startswith("```"):
            body.append(line)
            continue
        if opening is None:
            opening, body = (number, line[3:].split()), []
            continue
        start, words = opening
        if "runnable" in words[1:]:
            name = str(page.relative_to(ROOT))
            blocks.append(
                Block(page=name, line=start, language=words[0], body="\n".join(body) + "\n")
            )
        opening, body = None, []
    return blocks


BLOCKS = [block for page in PAGES for block in runnable_blocks(page)]


def as_script(source: str) -> str:
    """`source`, its top-level ``await`` (if any) wrapped in an async ``main`` run by anyio."""
    code = compile(source, "<block>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    if not code.co_flags & inspect.CO_COROUTINE:
        return source
    return (
        "import anyio\n\n\nasync def main() -> None:\n"
        + textwrap.indent(source, "    ")
        + "\n\nanyio.run(main)\n"
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """The folder a block runs in, as a user's home and a checkout at once."""
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "notes.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    return tmp_path


def environment(home: Path) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTHON", "DSH_FS_", "XDG_"))
    }
    bin_dir = str(Path(sys.executable).parent)
    return {
        **env,
        "HOME": str(home),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "PATH": os.pathsep.join([bin_dir, env.get("PATH", "")]),
    }


def test_the_readme_and_the_docs_mark_their_runnable_blocks() -> None:
    marked = {(block.page, block.language) for block in BLOCKS}
    assert {("README.md", "sh"), ("README.md", "python"), ("docs/mcp.md", "python")} <= marked
    assert {block.language for block in BLOCKS} <= set(LANGUAGES)


@pytest.mark.parametrize("block", BLOCKS, ids=[f"{b.page}:{b.line}" for b in BLOCKS])
def test_a_runnable_block_runs(block: Block, home: Path) -> None:
    if block.language == "python":
        script = home / ".block.py"
        script.write_text(as_script(block.body), encoding="utf-8")
        command = [sys.executable, str(script)]
    else:
        command = ["bash", "-euo", "pipefail", "-c", block.body]
    ran = subprocess.run(
        command,
        cwd=home,
        env=environment(home),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert ran.returncode == 0, f"{block.page}:{block.line}\n{ran.stdout}\n{ran.stderr}"
    assert "Traceback" not in ran.stderr, ran.stderr
