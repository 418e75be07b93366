"""Two real `dsh-fs mcp` stdio servers (each driven by the MCP SDK's client) and two CLI
`dsh-fs undo` processes at once on one root and one store (SPEC §9, "several processes on
one root append safely"): ids unique, nothing lost, `log --json` consistent.

Only invariants are asserted, never an order or a timing: every change a server reported is
listed exactly once, under its session; each file's entries form one unbroken chain of
versions from its first bytes to its bytes now, each pre-image the exact bytes the change
before it left; every undone change is undone exactly once, by one of the two undos, and
each undone file holds its pre-image's bytes.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp_types import CallToolResult, TextContent

from dsh_fs import Workspace

from ..mcp.mcp_testing import stdio_server

pytestmark = pytest.mark.anyio

_DSH_FS = str(Path(sys.executable).with_name("dsh-fs"))
ROUNDS = 12
"""Changes per server to each of its own files, and attempts at the shared one."""
UNDONE = ["u0.txt", "u1.txt", "u2.txt", "u3.txt"]
"""Files the seed session changes and the undos revert (no server touches them)."""
TAKEN = "u4.txt"
"""A file the seed changes and a server changes after it: its undo is refused."""


def _text(result: CallToolResult) -> str:
    [block] = result.content
    assert isinstance(block, TextContent)
    return block.text


def _code(result: CallToolResult) -> str | None:
    return (result.meta or {}).get("dsh-fs/code") if result.is_error else None


async def _agent(client: Client, name: str, written: dict[str, list[str]]) -> int:
    """ROUNDS alternating writes and edits of the agent's own file, and as many attempts to
    write the shared file (a stale one is re-read and retried once); returns the shared
    writes that succeeded. `written[path]` gets each content the agent published."""
    own = f"{name}.txt"
    shared_ok = 0
    await client.call_tool("read", {"file_path": own})
    for n in range(ROUNDS):
        if n % 2 == 0:
            content = f"{name} wrote {n}\n" + "filler line\n" * n
            result = await client.call_tool("write", {"file_path": own, "content": content})
        else:
            previous = written[own][-1]
            content = previous.replace(f"wrote {n - 1}", f"edited {n}")
            result = await client.call_tool(
                "edit",
                {"file_path": own, "old_string": f"wrote {n - 1}", "new_string": f"edited {n}"},
            )
        assert not result.is_error, _text(result)
        written[own].append(content)
        for _attempt in range(2):
            read = await client.call_tool("read", {"file_path": "shared.txt"})
            assert not read.is_error, _text(read)
            content = f"shared by {name}, round {n}\n"
            result = await client.call_tool(
                "write", {"file_path": "shared.txt", "content": content}
            )
            if not result.is_error:
                written["shared.txt"].append(content)
                shared_ok += 1
                break
            assert _code(result) == "FS_STALE_VERSION", _text(result)
    return shared_ok


def _undo(root: Path, store: Path) -> list[dict[str, object]]:
    done = subprocess.run(
        [_DSH_FS, "undo", str(root), "--journal", str(store), "--session", "seed", "--json"],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode in (0, 1), done.stderr
    results: list[dict[str, object]] = json.loads(done.stdout)
    return results


async def test_two_mcp_servers_and_two_cli_undos_at_once_keep_one_consistent_journal(
    tmp_path: Path,
) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    first: dict[str, bytes] = {}
    for name in [*UNDONE, TAKEN, "shared.txt", "a.txt", "b.txt"]:
        first[name] = f"first bytes of {name}\n".encode()
        (root / name).write_bytes(first[name])
    # The seed session: one journaled change to each file the undos revert (and one create).
    async with Workspace.sandbox(root, journal=store) as ws:
        seed = ws.session(label="seed")
        for name in [*UNDONE, TAKEN]:
            assert not (await seed.call("read", {"file_path": name})).is_error
            result = await seed.call("write", {"file_path": name, "content": f"seed {name}\n"})
            assert not result.is_error, result.text
        created = await seed.call("write", {"file_path": "new.txt", "content": "seed new\n"})
        assert not created.is_error, created.text

    written: dict[str, list[str]] = {"a.txt": [], "b.txt": [], "shared.txt": []}
    shared_ok: dict[str, int] = {}
    undos: list[list[dict[str, object]]] = []
    connected = [anyio.Event(), anyio.Event()]
    go = anyio.Event()

    async def serve(index: int, name: str) -> None:
        args = stdio_server(str(root), "--journal", str(store))
        async with Client(args) as client:
            if name == "a":  # a newer change over the seed's: that undo must be refused
                await client.call_tool("read", {"file_path": TAKEN})
                taken = await client.call_tool(
                    "write", {"file_path": TAKEN, "content": "a server's newer bytes\n"}
                )
                assert not taken.is_error, _text(taken)
            connected[index].set()
            await go.wait()
            shared_ok[name] = await _agent(client, name, written)

    async def undo() -> None:
        await go.wait()
        undos.append(await anyio.to_thread.run_sync(_undo, root, store))

    with anyio.fail_after(600):
        async with anyio.create_task_group() as tg:
            tg.start_soon(serve, 0, "a")
            tg.start_soon(serve, 1, "b")
            tg.start_soon(undo)
            tg.start_soon(undo)
            for event in connected:
                await event.wait()
            go.set()

    log = await anyio.run_process(
        [_DSH_FS, "log", str(root), "--journal", str(store), "--json"], check=True
    )
    entries: list[dict[str, object]] = json.loads(log.stdout)
    ids = [str(e["id"]) for e in entries]
    assert len(set(ids)) == len(ids), "ids are unique"
    assert ids == sorted(ids, reverse=True), "newest first"
    assert all(e["undoable"] for e in entries)

    # Every change a server reported is listed exactly once, under that server's session.
    by_path = Counter(Path(str(e["path"])).name for e in entries if e["tool"] != "undo")
    assert by_path["a.txt"] == by_path["b.txt"] == ROUNDS
    assert by_path["shared.txt"] == sum(shared_ok.values()) == len(written["shared.txt"])
    assert by_path[TAKEN] == 2
    sessions = {str(e["session"]) for e in entries if Path(str(e["path"])).name == "a.txt"}
    assert len(sessions) == 1
    b_sessions = {str(e["session"]) for e in entries if Path(str(e["path"])).name == "b.txt"}
    assert len(b_sessions) == 1
    assert sessions != b_sessions
    for name, session in (("a", sessions), ("b", b_sessions)):
        shared_by = [
            e
            for e in entries
            if Path(str(e["path"])).name == "shared.txt" and e["session"] in session
        ]
        assert len(shared_by) == shared_ok[name]

    # The two undos: every seed change on the undone files undone exactly once, by either;
    # the taken file's refused by both, nothing of it changed.
    results = [r for run in undos for r in run]
    undone = Counter(str(r["id"]) for r in results if r["result"] == "undone")
    assert all(count == 1 for count in undone.values())
    seed_entries = [e for e in entries if str(e["session"]).startswith("seed-")]
    assert len(seed_entries) == len(UNDONE) + 2
    for entry in seed_entries:
        name = Path(str(entry["path"])).name
        assert undone[str(entry["id"])] == (0 if name == TAKEN else 1), (name, results)
    undo_entries = [e for e in entries if e["tool"] == "undo"]
    assert sorted(str(e["undoes"]) for e in undo_entries) == sorted(undone)
    assert len({str(e["session"]) for e in undo_entries}) in (1, 2)
    for name in UNDONE:
        assert (root / name).read_bytes() == first[name]
    assert not (root / "new.txt").exists()
    assert (root / TAKEN).read_bytes() == b"a server's newer bytes\n"
    taken_reasons = [r["reason"] for r in results if Path(str(r["path"])).name == TAKEN]
    assert len(taken_reasons) == 2
    assert all(re.search("changed since", str(reason)) for reason in taken_reasons)

    # Each file's entries: one chain of versions, first bytes to now, every pre-image exact.
    async with Workspace.sandbox(root, journal=store) as ws:
        assert ws.journal is not None
        journal = ws.journal
        for name in ("a.txt", "b.txt", "shared.txt"):
            chain = {str(e["before"]): e for e in entries if Path(str(e["path"])).name == name}
            assert len(chain) == len([e for e in entries if Path(str(e["path"])).name == name])
            info = await journal.fs.stat(await journal.fs.resolve(name))
            assert info is not None
            expected = [first[name], *(c.encode() for c in written[name])]
            firsts = [b for b in chain if b not in {str(e["after"]) for e in chain.values()}]
            assert len(firsts) == 1, "one unbroken chain"
            version, seen = firsts[0], 0
            contents: list[bytes] = []
            while version in chain:
                entry = chain[version]
                kept = journal.store.pre_image_bytes(str(entry["id"]), 1 << 20)
                assert kept is not None
                contents.append(kept)
                version, seen = str(entry["after"]), seen + 1
            assert seen == len(chain)
            assert version == info.version, "the chain ends at the file's version now"
            contents.append((root / name).read_bytes())
            if name == "shared.txt":  # the order of the servers' writes is theirs to race
                assert sorted(contents) == sorted(expected)
            else:
                assert contents == expected
