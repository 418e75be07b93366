"""A child that makes one change set over three files, then undoes it, and kills itself
during the undo (SPEC §13).

    python set_undo_agent.py ROOT STORE KILL

Each file of ROOT named ``g1.txt`` … holds ``token0``; the set moves every file to
``token1`` with one `edit_files` call, then the journal undoes the set (``undo GROUP``).
KILL places a SIGKILL of its own in the undo: ``record`` (right after the undo's intent
record is stored, before any restore), ``restore:<k>`` (right after the k-th file is
restored). The journal lives in STORE and the intent records beside it, where
`Workspace.sandbox(ROOT, journal=STORE)` keeps them, so the next one finds them.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

import anyio

from dsh_fs import Workspace
from dsh_fs.fs import SetRecord
from dsh_fs.providers import LocalFileSystem
from dsh_fs.providers.local import LocalSetRecords

GROUP = ("g1.txt", "g2.txt", "g3.txt")


def group_text(name: str, token: int) -> str:
    """A file of the set at `token`."""
    return f"{name} keeps token{token} here\n" * 200


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def kill_after_restores(count: int) -> None:
    """From now on, kill the process right after the `count`-th restore returned."""
    restore = LocalFileSystem.restore
    done = 0

    async def restore_then_die(self: LocalFileSystem, *args: Any, **kwargs: Any) -> Any:
        nonlocal done
        version = await restore(self, *args, **kwargs)
        done += 1
        if done == count:
            die()
        return version

    LocalFileSystem.restore = restore_then_die  # type: ignore[method-assign]


def kill_after_record() -> None:
    """From now on, kill the process right after an intent record is durable."""
    begin = LocalSetRecords.begin

    async def begin_then_die(self: LocalSetRecords, record: SetRecord) -> None:
        await begin(self, record)
        die()

    LocalSetRecords.begin = begin_then_die  # type: ignore[method-assign]


async def main(root: str, store: str, kill: str) -> None:
    async with Workspace.sandbox(root, journal=store) as workspace:
        journal = workspace.journal
        assert journal is not None
        edits = [
            {
                "file_path": name,
                "old_string": "token0 ",
                "new_string": "token1 ",
                "replace_all": True,
            }
            for name in GROUP
        ]
        session = workspace.session()
        for name in GROUP:  # the policy wants each file read before it is edited
            assert not (await session.call("read", {"file_path": name})).is_error
        made = await session.call("edit_files", {"edits": edits})
        assert not made.is_error, made.text
        assert made.value is not None
        group = made.value["group"]
        assert isinstance(group, str)
        print(f"set {group}", flush=True)
        if kill == "record":
            kill_after_record()
        else:
            kill_after_restores(int(kill.removeprefix("restore:")))
        await journal.undo(ids=[group], label="agent")
    print("undone: not killed", flush=True)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2], sys.argv[3])
