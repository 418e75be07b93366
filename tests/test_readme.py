"""The README and the docs pages tell the truth: their snippets are real files, their tables
match the code, and every page and file they link to exists."""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

from dsh_fs import FsErrorCode
from dsh_fs.cli import main
from dsh_fs.errors import ToolErrorCode

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = ROOT / "docs"


def fenced_blocks(language: str, text: str = README) -> list[str]:
    """The bodies of `text`'s fenced code blocks tagged `language` ("" for untagged; the
    first word of the info string: ```` ```python runnable ```` is ``python``)."""
    blocks: list[str] = []
    body: list[str] | None = None
    tag = ""
    for line in text.splitlines(keepends=True):
        if line.startswith("```"):
            if body is None:
                body, tag = [], (line[3:].split() or [""])[0]
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


def test_the_agent_loop_in_the_docs_is_the_example_s_code_verbatim() -> None:
    example = (ROOT / "examples" / "openai_agent.py").read_text(encoding="utf-8")
    page = (DOCS / "agent-loop.md").read_text(encoding="utf-8")
    blocks = fenced_blocks("python", page)
    loops = [block for block in blocks if "execute_openai_tool_calls" in block]
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
    # The example's folder is under the temporary directory (TMPDIR), not always /tmp.
    folder = re.escape(tempfile.gettempdir()) + r"/[^/\s\"]+/app\.py"
    printed = re.sub(folder, "/tmp/tmpXXXX/app.py", run.stdout)
    shown = fenced_blocks("")
    assert any(block == printed for block in shown), printed


def test_every_error_code_in_the_readme_exists_and_every_code_is_documented() -> None:
    pattern = r"`((?:FS|SEARCH|TOOL)_[A-Z_]+|INVALID_ARGS|UNKNOWN_TOOL)`"
    documented = set(re.findall(pattern, README))
    assert documented == {code.value for code in (*FsErrorCode, *ToolErrorCode)}


def test_every_mcp_option_in_the_readme_and_the_http_page_exists() -> None:
    http = (DOCS / "http.md").read_text(encoding="utf-8")
    options = set(re.findall(r"^\| `(--[a-z-]+)", README + http, flags=re.MULTILINE))
    assert {"--read-only", "--http", "--token-file", "--allow-remote"} <= options
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


def _links(text: str) -> set[str]:
    """The relative targets of `text`'s markdown links, without their #fragments."""
    targets = re.findall(r"\]\(([^)\s]+)\)", text)
    return {t.split("#", 1)[0] for t in targets if not re.match(r"[a-z]+:", t)} - {""}


def test_every_file_the_readme_and_the_docs_link_to_exists() -> None:
    pages = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
    missing = [
        f"{page.relative_to(ROOT)} -> {target}"
        for page in pages
        for target in _links(page.read_text(encoding="utf-8"))
        if not (page.parent / target).exists()
    ]
    assert missing == []


def test_every_docs_page_is_linked_from_the_readme() -> None:
    linked = {(ROOT / target).resolve() for target in _links(README)}
    assert [page.name for page in sorted(DOCS.glob("*.md")) if page not in linked] == []


def test_the_readme_stays_short_enough_to_read() -> None:
    assert len(README.splitlines()) <= 350, "move the depth to a page under docs/"
