"""A child that applies one ``apply_patch`` response mixing a create, a patched move, a
delete and an update (SPEC §13) and SIGKILLs itself right after the k-th publication step
(a write, a delete or a move) of its set:

    python patch_set_agent.py ROOT K

The intent record lives where `Workspace.local` keeps it (``$XDG_STATE_HOME/dsh-fs/sets``),
so the next `Workspace.local(ROOT)` finds it."""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

import anyio

from dsh_fs import Workspace
from dsh_fs.adapters import execute_openai_response
from dsh_fs.fs import WrapperFileSystem
from dsh_fs.providers import LocalFileSystem
from dsh_fs.providers.local import (
    LocalSetRecords,
    default_set_records_location,
    set_records_directory,
)

RENAME = "@@\n-    return old\n+    return new\n"
OPERATIONS = [
    {"type": "create_file", "path": "new.py", "diff": "+x = 1\n"},
    {"type": "update_file", "path": "a.py", "diff": RENAME, "move_to": "moved.py"},
    {"type": "delete_file", "path": "b.py"},
    {"type": "update_file", "path": "c.py", "diff": RENAME},
]


class KillAfterSteps(WrapperFileSystem):
    """Kills the process right after its `after`-th write, delete or move returned."""

    def __init__(self, wrapped: LocalFileSystem, after: int) -> None:
        super().__init__(wrapped)
        self.after = after
        self.steps = 0

    def _stepped(self) -> None:
        self.steps += 1
        if self.steps == self.after:
            os.kill(os.getpid(), signal.SIGKILL)

    async def write_text(self, *args: Any, **kwargs: Any) -> Any:
        outcome = await self.wrapped.write_text(*args, **kwargs)
        self._stepped()
        return outcome

    async def delete(self, *args: Any, **kwargs: Any) -> Any:
        outcome = await self.wrapped.delete(*args, **kwargs)
        self._stepped()
        return outcome

    async def move(self, *args: Any, **kwargs: Any) -> Any:
        outcome = await self.wrapped.move(*args, **kwargs)
        self._stepped()
        return outcome


async def main(root: str, place: str, after: int) -> None:
    fs = KillAfterSteps(LocalFileSystem(root), after)
    async with Workspace(fs, cwd=root, set_records=LocalSetRecords(place)) as workspace:
        session = workspace.session()
        for name in ("a.py", "b.py", "c.py"):
            result = await session.call("read", {"file_path": name})
            assert not result.is_error, result.text
        calls = [
            {"type": "apply_patch_call", "call_id": f"call_{n}", "operation": operation}
            for n, operation in enumerate(OPERATIONS)
        ]
        replies = await execute_openai_response(session, calls)
        print([reply["output"] for reply in replies], flush=True)


if __name__ == "__main__":
    records = set_records_directory(default_set_records_location(), os.path.realpath(sys.argv[1]))
    anyio.run(main, sys.argv[1], records, int(sys.argv[2]))
