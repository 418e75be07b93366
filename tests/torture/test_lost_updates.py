"""No lost update: many agents doing read → edit → retry-on-stale on one file.

Agents in one process (one workspace, or several workspaces each with its own provider),
in several processes, and behind two MCP servers on one folder all bump one ledger
(`ledger_agent`): the end state must hold every success the tools reported, in one serial
order, and nothing else. The quick profiles run in the normal suite; the ``slow`` ones run
under ``make torture``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp_types import CallToolResult, TextContent

from dsh_fs import Session, Workspace

from ..mcp.mcp_testing import stdio_server
from .ledger_agent import INITIAL, LEDGER, AgentReport, check_ledger, count_line, run_agent

pytestmark = pytest.mark.anyio

AGENT = Path(__file__).with_name("ledger_agent.py")


def make_ledger(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / LEDGER).write_text(INITIAL, encoding="utf-8")
    return folder


def ledger_text(folder: Path) -> str:
    return (folder / LEDGER).read_text(encoding="utf-8")


def assert_no_residue(folder: Path) -> None:
    assert sorted(p.name for p in folder.iterdir()) == [LEDGER]


def summary(kind: str, reports: list[AgentReport], total: int) -> str:
    stale = sum(r.stale for r in reports)
    return f"{kind}: {len(reports)} agents, {total} successes, {stale} stale retries, 0 lost"


@pytest.mark.parametrize(
    ("workspaces", "sessions", "each"),
    [
        pytest.param(1, 8, 8, id="quick-one-workspace"),
        pytest.param(3, 3, 6, id="quick-three-providers"),
        pytest.param(1, 24, 25, id="long-one-workspace", marks=pytest.mark.slow),
        pytest.param(4, 6, 20, id="long-four-providers", marks=pytest.mark.slow),
    ],
)
async def test_sessions_in_one_process_lose_no_update(
    tmp_path: Path, workspaces: int, sessions: int, each: int
) -> None:
    folder = make_ledger(tmp_path)
    spaces = [Workspace.local(folder) for _ in range(workspaces)]
    reports: list[AgentReport] = []

    async def one(session: Session, agent: str) -> None:
        reports.append(await run_agent(session, agent, each))

    with anyio.fail_after(300):
        async with anyio.create_task_group() as tg:
            for w, workspace in enumerate(spaces):
                for s in range(sessions):
                    tg.start_soon(one, workspace.session(), f"w{w}s{s}")
    for workspace in spaces:
        await workspace.aclose()
    total = check_ledger(ledger_text(folder), reports)
    assert total == workspaces * sessions * each
    assert_no_residue(folder)
    print(summary(f"1 process x {workspaces} providers", reports, total))


async def run_agent_process(
    folder: Path, prefix: str, workspaces: int, sessions: int, each: int
) -> list[AgentReport]:
    args = [str(AGENT), str(folder), prefix, str(workspaces), str(sessions), str(each)]
    done = await anyio.run_process([sys.executable, *args], check=False)
    assert done.returncode == 0, done.stderr.decode()
    return [AgentReport.from_json(line) for line in done.stdout.decode().splitlines()]


@pytest.mark.parametrize(
    ("processes", "workspaces", "sessions", "each"),
    [
        pytest.param(3, 1, 2, 6, id="quick"),
        pytest.param(6, 2, 3, 12, id="long", marks=pytest.mark.slow),
    ],
)
async def test_sessions_in_several_processes_lose_no_update(
    tmp_path: Path, processes: int, workspaces: int, sessions: int, each: int
) -> None:
    folder = make_ledger(tmp_path)
    reports: list[AgentReport] = []

    async def one(index: int) -> None:
        reports.extend(await run_agent_process(folder, f"p{index}", workspaces, sessions, each))

    with anyio.fail_after(600):
        async with anyio.create_task_group() as tg:
            for index in range(processes):
                tg.start_soon(one, index)
    total = check_ledger(ledger_text(folder), reports)
    assert total == processes * workspaces * sessions * each
    assert_no_residue(folder)
    print(summary(f"{processes} processes", reports, total))


def text_of(result: CallToolResult) -> str:
    [block] = result.content
    assert isinstance(block, TextContent)
    return block.text


FIRST_LINE = re.compile(r"^1: (.*)$", re.MULTILINE)


async def run_mcp_agent(client: Client, agent: str, successes: int) -> AgentReport:
    """`run_agent` over MCP: the same protocol, parsed from the rendered text."""
    report = AgentReport(agent)
    while len(report.successes) < successes:
        read = await client.call_tool("read", {"file_path": LEDGER, "limit": 1})
        assert not read.is_error, text_of(read)
        first = FIRST_LINE.search(text_of(read))
        assert first is not None, text_of(read)
        current = int(first.group(1).removeprefix("count: "))
        k, written = len(report.successes), current + 1
        edit = await client.call_tool(
            "edit",
            {
                "file_path": LEDGER,
                "old_string": count_line(current),
                "new_string": f"{count_line(written)}{agent} {k} {written}\n",
            },
        )
        if edit.is_error:
            assert (edit.meta or {}).get("dsh-fs/code") == "FS_STALE_VERSION", text_of(edit)
            report.stale += 1
        else:
            report.successes.append((k, written))
    return report


@pytest.mark.parametrize(
    ("servers", "each"),
    [
        pytest.param(2, 15, id="quick"),
        pytest.param(3, 80, id="long", marks=pytest.mark.slow),
    ],
)
async def test_mcp_servers_on_one_folder_lose_no_update(
    tmp_path: Path, servers: int, each: int
) -> None:
    folder = make_ledger(tmp_path)
    reports: list[AgentReport] = []
    # An in-process session joins the servers: a library user and MCP hosts on one repo.
    workspace = Workspace.local(folder)

    connected: list[anyio.Event] = [anyio.Event() for _ in range(servers)]
    go = anyio.Event()

    async def serve(index: int) -> None:
        async with Client(stdio_server(str(folder))) as client:
            connected[index].set()
            await go.wait()  # every server up before anyone edits: real contention
            reports.append(await run_mcp_agent(client, f"mcp{index}", each))

    async def local() -> None:
        await go.wait()
        reports.append(await run_agent(workspace.session(), "lib", each))

    with anyio.fail_after(300):
        async with anyio.create_task_group() as tg:
            for index in range(servers):
                tg.start_soon(serve, index)
            tg.start_soon(local)
            for event in connected:
                await event.wait()
            go.set()
    await workspace.aclose()
    total = check_ledger(ledger_text(folder), reports)
    assert total == (servers + 1) * each
    assert_no_residue(folder)
    print(summary(f"{servers} MCP servers + 1 library session", reports, total))
