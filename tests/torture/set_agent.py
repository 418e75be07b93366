"""A child that applies change sets over several files until it is killed (SPEC §13).

    python set_agent.py ROOT FILES KILL [SETS]

Each file of ROOT named ``f0.txt`` … holds ``gen = <g>`` on its first line, then padding;
every set moves every file from one generation to the next with one `edit_files` call, so
after any crash the files must all show one generation (all old or all new). The agent
prints ``set <g>`` once a set returned. KILL places a SIGKILL of its own: ``never`` (the
parent kills it at random), ``record`` (right after the set's intent record is stored),
``file:<k>`` (right after the k-th file of its first set is published). The intent records
live where `Workspace.local` keeps them (``$XDG_STATE_HOME/dsh-fs/sets``), so the next
`Workspace.local(ROOT)` finds them.
"""

from __future__ import annotations

import os
import re
import signal
import sys

import anyio

from dsh_fs import Workspace
from dsh_fs.fs import FsCapture, FsTarget, FsWriteOutcome, SetRecord, WrapperFileSystem, WriteGuard
from dsh_fs.providers import LocalFileSystem
from dsh_fs.providers.local import (
    LocalSetRecords,
    default_set_records_location,
    set_records_directory,
)

GENERATION = re.compile(r"\bgen = (\d+)$", re.MULTILINE)


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


class KillAfterWrites(WrapperFileSystem):
    """Kills the process right after its `after`-th `write_text` returned (0: never)."""

    def __init__(self, wrapped: LocalFileSystem, after: int) -> None:
        super().__init__(wrapped)
        self.after = after
        self.writes = 0

    async def write_text(
        self,
        target: FsTarget,
        content: str,
        expected: WriteGuard | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsWriteOutcome:
        outcome = await self.wrapped.write_text(target, content, expected, capture=capture)
        self.writes += 1
        if self.writes == self.after:
            die()
        return outcome


class KillAfterRecord(LocalSetRecords):
    """Kills the process right after a set's intent record is durable."""

    async def begin(self, record: SetRecord) -> None:
        await super().begin(record)
        die()


async def main(root: str, directory: str, files: int, kill: str, sets: int) -> None:
    after = int(kill.split(":")[1]) if kill.startswith("file:") else 0
    fs = KillAfterWrites(LocalFileSystem(root), after)
    records = KillAfterRecord(directory) if kill == "record" else LocalSetRecords(directory)
    async with Workspace(fs, cwd=root, set_records=records) as workspace:
        session = workspace.session()
        names = [f"f{index}.txt" for index in range(files)]
        for _ in range(sets):
            generations = set()
            for name in names:
                result = await session.call("read", {"file_path": name})
                assert not result.is_error, result.text
                found = GENERATION.search(result.text)
                assert found is not None
                generations.add(int(found.group(1)))
            assert len(generations) == 1, f"mixed generations at the start: {generations}"
            (generation,) = generations
            edits = [
                {
                    "file_path": name,
                    "old_string": f"gen = {generation}\n",
                    "new_string": f"gen = {generation + 1}\n",
                }
                for name in names
            ]
            result = await session.call("edit_files", {"edits": edits})
            assert not result.is_error, result.text
            print(f"set {generation + 1}", flush=True)


if __name__ == "__main__":
    count = int(sys.argv[4]) if len(sys.argv) > 4 else 1_000_000
    place = set_records_directory(default_set_records_location(), os.path.realpath(sys.argv[1]))
    anyio.run(main, sys.argv[1], place, int(sys.argv[2]), sys.argv[3], count)
