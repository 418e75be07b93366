"""Torture child: journaled writes, edits and creates through a sandbox workspace's tools,
forever, logging each step (``begin NAME G`` / ``done NAME G``, flushed).

Run as ``python journal_agent.py ROOT STORE SEED NAME:SIZE ...``. Generation G of a file is
`content(name, size, G)`: an odd generation edits the header only, an even one rewrites the
whole file. Now and then it creates a new file ``new-SEED-N.txt`` (generation 0).
"""

from __future__ import annotations

import random
import re
import sys

import anyio

from dsh_fs import Workspace


def header(generation: int) -> str:
    return f"gen: {generation:08d}\n"


def content(name: str, size: int, generation: int) -> str:
    """The exact text of `name` at `generation` (about `size` bytes)."""
    seed = generation - generation % 2
    line = f"{name} body of generation {seed}\n"
    return header(generation) + line * max(1, size // len(line))


async def main(root: str, store: str, seed: int, files: dict[str, int]) -> None:
    rng = random.Random(seed)
    async with Workspace.sandbox(root, journal=store) as ws:
        session = ws.session(label="torture")
        created = 0
        while True:
            if rng.random() < 0.1:
                name = f"new-{seed}-{created}.txt"
                created += 1
                print(f"begin {name} 0", flush=True)
                result = await session.call(
                    "write", {"file_path": name, "content": content(name, 100, 0)}
                )
                assert not result.is_error, result.text
                print(f"done {name} 0", flush=True)
                continue
            name = rng.choice(sorted(files))
            read = await session.call("read", {"file_path": name, "limit": 1})
            assert not read.is_error, read.text
            found = re.search(r"gen: ([0-9]{8})", read.text)
            assert found is not None, read.text
            current = int(found.group(1))
            generation = current + 1
            print(f"begin {name} {generation}", flush=True)
            if generation % 2:
                args = {
                    "file_path": name,
                    "old_string": header(current),
                    "new_string": header(generation),
                }
                result = await session.call("edit", args)
            else:
                text = content(name, files[name], generation)
                result = await session.call("write", {"file_path": name, "content": text})
            assert not result.is_error, result.text
            print(f"done {name} {generation}", flush=True)


if __name__ == "__main__":
    sizes = {spec.split(":")[0]: int(spec.split(":")[1]) for spec in sys.argv[4:]}
    anyio.run(main, sys.argv[1], sys.argv[2], int(sys.argv[3]), sizes)
