"""The journal's store is never reachable by a tool (SPEC §9.1), whatever the mode: with
``--read-anywhere`` the model could list and read every root's pre-images, with
``--full-access`` write into the store and delete records, and a client root containing
``$XDG_STATE_HOME`` exposed it to both (red team: the sandbox fenced the store out only when
it lay inside a ROOT at start). Real disk, the real CLI over stdio, the real MCP client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from dsh_fs import Workspace
from dsh_fs.workspace import Session

pytestmark = pytest.mark.anyio

_DSH_FS = str(Path(sys.executable).with_name("dsh-fs"))

ORIGINAL = "original content 51c3\n"
"""What the journaled file held before the agent's change: kept in the store's pre-image."""


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    state = (tmp_path / "state").resolve()
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    return state


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    (root / "a.txt").write_text(ORIGINAL, encoding="utf-8")
    return root


def store_of(state: Path) -> Path:
    return state / "dsh-fs" / "journal"


def records(state: Path) -> list[Path]:
    """The store's records and pre-images (its own housekeeping files come and go)."""
    found = sorted(
        p for p in store_of(state).rglob("*") if p.is_file() and p.suffix in (".json", ".pre")
    )
    assert found, "the journal recorded nothing"
    return found


async def journal_a_change(session: Session, path: Path) -> None:
    assert not (await session.call("read", {"file_path": str(path)})).is_error
    written = await session.call("write", {"file_path": str(path), "content": "changed\n"})
    assert not written.is_error, written.text


async def assert_unreachable(session: Session, state: Path) -> None:
    """Nothing of the store can be read, listed, found or changed through `session`."""
    store = store_of(state)
    kept = records(state)
    for record in kept:
        read = await session.call("read", {"file_path": str(record)})
        assert read.code == "FS_NOT_FOUND", read.text
        assert ORIGINAL not in read.text
    listed = await session.call("list", {"path": str(state / "dsh-fs")})
    assert "journal" not in listed.text.replace(str(state / "dsh-fs"), ""), listed.text
    for path in (state, state / "dsh-fs"):
        found = await session.call("glob", {"pattern": "**/*", "path": str(path)})
        assert str(store) not in found.text, found.text
        hits = await session.call("grep", {"pattern": "original content", "path": str(path)})
        assert ORIGINAL.strip() not in hits.text, hits.text
        assert str(store) not in hits.text, hits.text
    planted = await session.call(
        "write", {"file_path": str(kept[0].parent / "planted.json"), "content": "{}"}
    )
    assert planted.is_error, planted.text
    made = await session.call("mkdir", {"path": str(store / "made")})
    assert made.is_error, made.text
    gone = await session.call("delete", {"file_path": str(kept[0])})
    assert gone.is_error, gone.text
    moved = await session.call(
        "move", {"source_path": str(kept[0]), "destination_path": str(state / "moved")}
    )
    assert moved.is_error, moved.text
    assert records(state) == kept
    assert not (state / "moved").exists()


async def test_with_reads_anywhere_the_store_is_absent(root: Path, state: Path) -> None:
    async with Workspace.sandbox(root, confine_reads=False, journal=True) as workspace:
        session = workspace.session()
        await journal_a_change(session, root / "a.txt")
        await assert_unreachable(session, state)


async def test_with_full_access_the_store_is_absent_and_never_changed(
    root: Path, state: Path
) -> None:
    async with Workspace.sandbox(root, mode="full-access", journal=True) as workspace:
        session = workspace.session()
        await journal_a_change(session, root / "a.txt")
        await assert_unreachable(session, state)
        # Without the policy the provider itself refuses, in the fence's words.
    async with Workspace.sandbox(root, mode="full-access", journal=True, policy=False) as workspace:
        target = records(state)[0]
        refused = await workspace.session().call(
            "write", {"file_path": str(target), "content": "forged"}
        )
        assert refused.code == "FS_SANDBOX_DENIED"
        assert refused.text.startswith(
            f'Error: cannot write "{target}": inside the change journal\'s store, '
            "which no tool may reach"
        )


async def test_a_client_root_that_contains_the_store_does_not_reach_it(
    root: Path, state: Path, tmp_path: Path
) -> None:
    async with Workspace.sandbox(root, mode="full-access", journal=True) as workspace:
        session = workspace.session()
        session.set_roots([str(tmp_path)], replace=True)
        await journal_a_change(session, root / "a.txt")
        await assert_unreachable(session, state)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path.resolve()


async def test_a_local_workspace_whose_folder_holds_the_store_does_not_reach_it(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = home / ".local" / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    (home / "a.txt").write_text(ORIGINAL, encoding="utf-8")
    async with Workspace.local(home, journal=True) as workspace:
        session = workspace.session()
        await journal_a_change(session, home / "a.txt")
        await assert_unreachable(session, state)


def serve(
    args: list[str], calls: list[tuple[str, dict[str, Any]]], env: dict[str, str]
) -> list[Any]:
    """One stdio MCP session of `dsh-fs mcp ARGS`: the tool calls' results, in order."""
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "tester", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    lines += [
        {
            "jsonrpc": "2.0",
            "id": index,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
        for index, (name, arguments) in enumerate(calls, start=1)
    ]
    done = subprocess.run(
        [_DSH_FS, "mcp", *args],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=120,
    )
    answers = {a["id"]: a for a in map(json.loads, done.stdout.splitlines()) if "id" in a}
    return [answers[index]["result"] for index in range(1, len(calls) + 1)]


def text(result: Any) -> str:
    return "".join(part.get("text", "") for part in result["content"])


@pytest.mark.parametrize("flag", ["--read-anywhere", "--full-access"])
def test_the_cli_server_never_reaches_its_store(
    root: Path, state: Path, tmp_path: Path, flag: str
) -> None:
    env = {**os.environ, "XDG_STATE_HOME": str(state), "HOME": str(tmp_path)}
    serve(
        [flag, str(root)],
        [
            ("read", {"file_path": "a.txt"}),
            ("write", {"file_path": "a.txt", "content": "changed\n"}),
        ],
        env,
    )
    kept = records(state)
    store = store_of(state)
    results = serve(
        [flag, str(root)],
        [
            *(("read", {"file_path": str(record)}) for record in kept),
            ("list", {"path": str(state / "dsh-fs")}),
            ("glob", {"pattern": "**/*", "path": str(state)}),
            ("grep", {"pattern": "original content", "path": str(state)}),
            ("write", {"file_path": str(kept[0].parent / "planted.json"), "content": "{}"}),
            ("delete", {"file_path": str(kept[0])}),
        ],
        env,
    )
    for result in results[: len(kept)]:
        assert result["isError"]
        assert ORIGINAL not in text(result)
        assert text(result).endswith(": not found")
    listed, found, hits, planted, deleted = results[len(kept) :]
    assert "journal" not in text(listed).replace(str(state / "dsh-fs"), "")
    assert str(store) not in text(found)
    assert ORIGINAL.strip() not in text(hits)
    assert planted["isError"]
    assert deleted["isError"]
    assert records(state) == kept


async def test_a_server_without_root_whose_client_root_holds_the_store_never_reaches_it(
    root: Path, state: Path, home: Path
) -> None:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters
    from mcp_types import ListRootsResult, Root

    async def client_roots(context: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root.model_validate({"uri": home.as_uri()})])

    env = {
        **os.environ,
        "XDG_STATE_HOME": str(state),
        "HOME": str(home),
        "DSH_FS_MCP_ROOTS_WAIT": "120",
    }
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "dsh_fs", "mcp"], cwd=str(root), env=env
    )
    with anyio.fail_after(180):
        async with Client(params, list_roots_callback=client_roots) as client:
            await client.call_tool("read", {"file_path": str(root / "a.txt")})
            changed = await client.call_tool(
                "write", {"file_path": str(root / "a.txt"), "content": "changed\n"}
            )
            assert not changed.is_error
            kept = records(state)
            for record in kept:
                read = await client.call_tool("read", {"file_path": str(record)})
                assert read.is_error
                assert ORIGINAL not in str(read.content)
            found = await client.call_tool("glob", {"pattern": "**/*", "path": str(state)})
            assert str(store_of(state)) not in str(found.content)
            planted = await client.call_tool(
                "write", {"file_path": str(kept[0].parent / "planted.json"), "content": "{}"}
            )
            assert planted.is_error
    assert records(state) == kept
