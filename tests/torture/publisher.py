"""Torture child: publish writes and edits of several files forever, logging each step.

Run as ``python publisher.py WORKSPACE NAME:SIZE ...``. Before each publication it prints
``begin NAME G`` and after it ``done NAME G`` (flushed), so the parent that SIGKILLs it knows
which generations were published or being published. Generation G of a file is
`expected_content(name, size, G)`: an edit moves an odd generation's header only, a write
replaces everything, so a mix of two generations can never look like either.
"""

from __future__ import annotations

import os
import sys

import anyio

from dsh_fs.fs import CreateIfAbsent, FsEditRequest, FsVersion, ReplaceIfVersion
from dsh_fs.fs.messages import Verb
from dsh_fs.providers import LocalFileSystem, LocalGuards

PAUSE_ENV = "DSH_FS_TORTURE_PAUSE"
"""When set, every publication stops right before its rename, prints ``staged`` and waits
for a line on stdin: a live owner with its staging directory in place, on demand."""


class PauseBeforePublish(LocalGuards):
    """Stops every publication right before its rename until a line arrives on stdin."""

    def check_publish(self, verb: Verb, display: str, directory: str) -> None:
        print("staged", flush=True)
        sys.stdin.readline()


def header(generation: int) -> str:
    return f"gen: {generation:08d}\n"


def expected_content(name: str, size: int, generation: int) -> str:
    """The exact text of `name` at `generation` (about `size` bytes)."""
    seed = generation - generation % 2
    line = f"{name} filler of write {seed:08d} " + "x" * 40 + "\n"
    body = line * max(1, size // len(line))
    return header(generation) + body


def parse_generation(text: str) -> int:
    return int(text.split("\n", 1)[0].removeprefix("gen: "))


async def main(workspace: str, specs: list[str]) -> None:
    guards = PauseBeforePublish() if os.environ.get(PAUSE_ENV) else LocalGuards()
    fs = LocalFileSystem(workspace, guards=guards)
    files = [(name, int(size)) for name, size in (spec.split(":") for spec in specs)]
    state: dict[str, tuple[int, FsVersion | None]] = {}
    for name, _size in files:
        target = await fs.resolve(name)
        info = await fs.stat(target)
        if info is not None:
            state[name] = (parse_generation(await fs.read_text(target)), info.version)
    while True:
        for name, size in files:
            target = await fs.resolve(name)
            generation, version = state.get(name, (-1, None))
            nxt = generation + 1
            print(f"begin {name} {nxt}", flush=True)
            if nxt % 2 == 1:
                edit = FsEditRequest(old_string=header(generation), new_string=header(nxt))
                new_version = (await fs.edit_text(target, edit, version)).version
            else:
                guard = CreateIfAbsent() if version is None else ReplaceIfVersion(version)
                written = await fs.write_text(target, expected_content(name, size, nxt), guard)
                new_version = written.version
            state[name] = (nxt, new_version)
            print(f"done {name} {nxt}", flush=True)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2:])
