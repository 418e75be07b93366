"""Every adapter and dialect reads through the provider the tools use (SPEC §10): a file a
``--deny``-style rule hides is never revealed, neither its bytes nor its name, whichever way
the model asks (red team round 4: deep agents' ``download_files`` returned a denied file's
bytes, the text editor's directory ``view`` listed denied names: both read around the
rules)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from dsh_fs import Workspace
from dsh_fs.adapters import (
    SyncWorkspace,
    execute_openai_tool_calls,
    run_apply_patch,
    run_text_editor,
)
from dsh_fs.fs import Rules
from dsh_fs.workspace import Session

pytestmark = pytest.mark.anyio

SECRET = "TOPSECRET-7d1f"
"""In every denied file's content, never in an answer."""

RULES = Rules(deny=("secret.txt", "vault/"))


@pytest.fixture
def tree(root: Path) -> Path:
    (root / "notes.txt").write_text("plain\n", encoding="utf-8")
    (root / "secret.txt").write_text(f"{SECRET}\n", encoding="utf-8")
    (root / "vault").mkdir()
    (root / "vault" / "key.txt").write_text(f"{SECRET}\n", encoding="utf-8")
    (root / "link.txt").symlink_to(root / "secret.txt")
    return root


@pytest.fixture
async def ruled(tree: Path) -> AsyncIterator[Session]:
    async with Workspace.sandbox(tree, rules=RULES) as workspace:
        yield workspace.session()


def revealed(text: str) -> bool:
    """Whether `text` shows a denied file's content or a denied name it was not asked about
    (a refusal naming the path the model spelled reveals nothing)."""
    return SECRET in text or "secret.txt" in text or "vault" in text or "key.txt" in text


def read_refused(text: str) -> bool:
    return SECRET not in text and text.endswith(": not found")


async def test_the_workspace_hands_out_only_the_ruled_provider(tree: Path) -> None:
    async with Workspace.sandbox(tree, rules=RULES) as workspace:
        session = workspace.session()
        for fs in (workspace.fs, session.fs):
            assert await fs.stat(await fs.resolve(str(tree / "secret.txt"))) is None
            names = [e.name for e in await fs.list_dir(await fs.resolve(str(tree)))]
            assert "secret.txt" not in names
            assert "vault" not in names


async def test_the_model_facing_tools_never_reveal_a_denied_file(
    ruled: Session, tree: Path
) -> None:
    for path in ("secret.txt", "link.txt", "vault/key.txt"):
        read = await ruled.call("read", {"file_path": path})
        assert read.code == "FS_NOT_FOUND"
        assert read_refused(read.text), read.text
    for name, arguments in (
        ("list", {"path": "."}),
        ("glob", {"pattern": "**/*.txt"}),
        ("grep", {"pattern": SECRET}),
    ):
        result = await ruled.call(name, arguments)
        assert not revealed(result.text), (name, result.text)


async def test_the_text_editor_never_views_a_denied_file_or_name(
    ruled: Session, tree: Path
) -> None:
    directory = await run_text_editor(ruled, {"command": "view", "path": str(tree)})
    assert not directory.is_error, directory.text
    assert "notes.txt" in directory.text
    assert not revealed(directory.text), directory.text
    for path in ("secret.txt", "vault", "vault/key.txt"):
        viewed = await run_text_editor(ruled, {"command": "view", "path": path})
        assert viewed.is_error, viewed.text
        assert SECRET not in viewed.text
        if path == "vault":
            assert "key.txt" not in viewed.text


async def test_openai_function_calls_and_apply_patch_never_reveal_a_denied_file(
    ruled: Session, tree: Path
) -> None:
    calls = [
        {"id": "c1", "function": {"name": "read", "arguments": json.dumps({"file_path": p})}}
        for p in ("secret.txt", "vault/key.txt")
    ]
    for message in await execute_openai_tool_calls(ruled, calls):
        assert SECRET not in message["content"]
    patched = await run_apply_patch(
        ruled, {"type": "update_file", "path": "secret.txt", "diff": f"@@\n-{SECRET}\n+x\n"}
    )
    assert patched["status"] == "failed"
    assert SECRET not in patched["output"]
    assert (tree / "secret.txt").read_text(encoding="utf-8") == f"{SECRET}\n"


async def test_deep_agents_never_download_list_or_find_a_denied_file(
    ruled: Session, tree: Path
) -> None:
    pytest.importorskip("deepagents", reason="deepagents supports Python 3.11+ only")
    from dsh_fs.adapters import WorkspaceBackend

    backend = WorkspaceBackend(ruled)
    downloads = await backend.adownload_files(["/secret.txt", "/link.txt", "/vault/key.txt"])
    for download in downloads:
        assert download.content is None, download
        assert download.error == "file_not_found", download
    listing = await backend.als("/")
    assert listing.entries is not None
    # A link to a denied file is hidden with it.
    assert [e["path"] for e in listing.entries] == ["/notes.txt"]
    read = await backend.aread("/secret.txt")
    assert read.file_data is None
    found = await backend.aglob("**/*.txt")
    assert found.matches is not None
    assert not revealed(json.dumps(found.matches))
    hits = await backend.agrep(SECRET)
    assert not hits.matches


async def test_langchain_tools_never_reveal_a_denied_file(ruled: Session, tree: Path) -> None:
    pytest.importorskip("langchain_core")
    from dsh_fs.adapters import langchain_tools

    tools = {tool.name: tool for tool in langchain_tools(ruled)}
    for arguments in ({"file_path": "secret.txt"}, {"file_path": "vault/key.txt"}):
        message = await tools["read"].ainvoke(
            {"type": "tool_call", "id": "t1", "name": "read", "args": arguments}
        )
        assert SECRET not in str(message.content)
    listed = await tools["list"].ainvoke(
        {"type": "tool_call", "id": "t2", "name": "list", "args": {"path": "."}}
    )
    assert not revealed(str(listed.content))


def test_the_blocking_facade_never_reveals_a_denied_file(tree: Path) -> None:
    with SyncWorkspace.sandbox(tree, rules=RULES) as workspace:
        session = workspace.session()
        assert read_refused(session.call("read", {"file_path": "secret.txt"}).text)
        for name, arguments in (("list", {"path": "."}), ("grep", {"pattern": SECRET})):
            result = session.call(name, arguments)
            assert not revealed(result.text), (name, result.text)
