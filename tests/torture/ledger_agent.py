"""Lost-update agents: read → edit → retry-on-stale on one ledger file, through the tools.

The ledger starts as ``count: 0``. A success replaces the exact current count line with the
next count and, right under it, a marker naming who made it: ``<agent> <k> <count>``. So
the file records every success once, newest first, and a lost update shows as a missing
marker, a duplicate count or a gap. Each agent reports its successes as the tools returned
them; the parent checks the file against the union of the reports (`check_ledger`).

Run as ``python ledger_agent.py DIR PREFIX WORKSPACES SESSIONS SUCCESSES``: SESSIONS
sessions on each of WORKSPACES workspaces (each its own provider) in one process, each
making SUCCESSES edits; prints one JSON report per line. Imports only dsh_fs.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field

import anyio

from dsh_fs import Session, Workspace

LEDGER = "ledger.txt"
INITIAL = "count: 0\n"


@dataclass
class AgentReport:
    """What one agent saw: its successes as (k, count written), and its stale retries."""

    agent: str
    successes: list[tuple[int, int]] = field(default_factory=list)
    stale: int = 0

    def to_json(self) -> str:
        return json.dumps({"agent": self.agent, "successes": self.successes, "stale": self.stale})

    @classmethod
    def from_json(cls, line: str) -> AgentReport:
        data = json.loads(line)
        successes = [(int(k), int(count)) for k, count in data["successes"]]
        return cls(agent=data["agent"], successes=successes, stale=int(data["stale"]))


def count_line(count: int) -> str:
    return f"count: {count}\n"


def parse_count(first_line: str) -> int:
    label, _, number = first_line.partition(": ")
    assert label == "count", f"the ledger's first line is {first_line!r}"
    return int(number)


async def run_agent(session: Session, agent: str, successes: int) -> AgentReport:
    """Read the count, replace its exact line, retry on stale; `successes` times."""
    report = AgentReport(agent)
    while len(report.successes) < successes:
        read = await session.call("read", {"file_path": LEDGER, "limit": 1})
        assert not read.is_error, read.text
        assert read.value is not None
        current = parse_count(read.value["lines"][0]["text"])
        k, written = len(report.successes), current + 1
        edit = await session.call(
            "edit",
            {
                "file_path": LEDGER,
                "old_string": count_line(current),
                "new_string": f"{count_line(written)}{agent} {k} {written}\n",
            },
        )
        if edit.is_error:
            # The only acceptable failure: someone else published since our read.
            assert edit.code == "FS_STALE_VERSION", edit.text
            report.stale += 1
        else:
            report.successes.append((k, written))
    return report


def check_ledger(text: str, reports: list[AgentReport]) -> int:
    """Assert the ledger holds exactly the reported successes, in one serial order.

    Returns the number of successes.
    """
    lines = text.splitlines()
    total = sum(len(r.successes) for r in reports)
    assert lines[0] == f"count: {total}", f"{lines[0]!r} after {total} reported successes"
    in_file = {(agent, int(k), int(count)) for agent, k, count in map(str.split, lines[1:])}
    reported = {(r.agent, k, count) for r in reports for k, count in r.successes}
    assert len(in_file) == len(lines) - 1, "a marker appears twice"
    assert in_file == reported, (
        f"lost: {sorted(reported - in_file)[:5]}; never reported: {sorted(in_file - reported)[:5]}"
    )
    # Newest first, one success per count: each edit saw the one before it.
    assert [int(line.split()[2]) for line in lines[1:]] == list(range(total, 0, -1))
    return total


async def main(directory: str, prefix: str, workspaces: int, sessions: int, each: int) -> None:
    reports: list[AgentReport] = []
    spaces = [Workspace.local(directory) for _ in range(workspaces)]

    async def one(session: Session, agent: str) -> None:
        reports.append(await run_agent(session, agent, each))

    async with anyio.create_task_group() as tg:
        for w, workspace in enumerate(spaces):
            for s in range(sessions):
                tg.start_soon(one, workspace.session(), f"{prefix}w{w}s{s}")
    for workspace in spaces:
        await workspace.aclose()
    for report in reports:
        print(report.to_json(), flush=True)


if __name__ == "__main__":
    directory, prefix, workspaces, sessions, each = sys.argv[1:6]
    anyio.run(main, directory, prefix, int(workspaces), int(sessions), int(each))
