"""Torture child: journaled changes and their undos through a sandbox workspace, forever,
logging each step (``begin KIND`` / ``done KIND``, flushed), to be killed at random moments.

Run as ``python undo_agent.py ROOT STORE SEED``. Each round, at random, either:

- writes ``h.txt`` at its next generation (its lines 1 and 30 change: two hunks), then
  reverts hunk 1 of that change (``undo --hunk 1``);
- renames ``tokenN`` to ``tokenN+1`` in ``g1.txt``, ``g2.txt`` and ``g3.txt`` with one
  ``edit_files`` call (a change set), then (every other time) undoes the whole set
  (``undo GROUP``).

What a file may hold at any moment is known (`hunk_text`, `group_text`): anything else is
a torn file.
"""

from __future__ import annotations

import random
import re
import sys

import anyio

from dsh_fs import Workspace

GROUP = ("g1.txt", "g2.txt", "g3.txt")


def hunk_text(first: int, second: int) -> str:
    """``h.txt`` with its line 1 from generation `first` and its line 30 from `second`
    (two hunks apart: 28 lines between, and 2000 shared lines after)."""
    lines = [f"line {k}\n" for k in range(2040)]
    lines[1] = f"first of generation {first}\n"
    lines[30] = f"second of generation {second}\n"
    return "".join(lines)


def group_text(name: str, token: int) -> str:
    """A file of the set at `token`."""
    return f"{name} keeps token{token} here\n" * 200


async def main(root: str, store: str, seed: int) -> None:
    rng = random.Random(seed)
    async with Workspace.sandbox(root, journal=store) as ws:
        journal = ws.journal
        assert journal is not None
        session = ws.session(label="torture")
        while True:
            if rng.random() < 0.5:
                text = (await session.call("read", {"file_path": "h.txt"})).text
                found = re.search(r"second of generation ([0-9]+)", text)
                assert found is not None, text[:200]
                generation = int(found.group(1)) + 1
                print(f"begin write {generation}", flush=True)
                wrote = await session.call(
                    "write", {"file_path": "h.txt", "content": hunk_text(generation, generation)}
                )
                assert not wrote.is_error, wrote.text
                print(f"done write {generation}", flush=True)
                change = (await journal.entries())[0]
                print(f"begin hunk {generation}", flush=True)
                (result,) = await journal.undo(ids=[change.id], hunks=[1], label="torture")
                assert result.result == "undone", result
                print(f"done hunk {generation}", flush=True)
                continue
            tokens = []
            for name in GROUP:
                text = (await session.call("read", {"file_path": name})).text
                found = re.search(r"token([0-9]+)", text)
                assert found is not None, text[:200]
                tokens.append(int(found.group(1)))
            assert len(set(tokens)) == 1, f"a set mixed: {tokens}"
            token = tokens[0]
            edits = [
                {
                    "file_path": name,
                    "old_string": f"token{token} ",
                    "new_string": f"token{token + 1} ",
                    "replace_all": True,
                }
                for name in GROUP
            ]
            print(f"begin set {token + 1}", flush=True)
            made = await session.call("edit_files", {"edits": edits})
            assert not made.is_error, made.text
            print(f"done set {token + 1}", flush=True)
            assert made.value is not None
            group = made.value["group"]
            assert isinstance(group, str)
            if rng.random() < 0.5:
                continue  # the set stays: the tokens move on
            print(f"begin group {token + 1}", flush=True)
            results = await journal.undo(ids=[group], label="torture")
            assert [r.result for r in results] == ["undone"] * len(GROUP), results
            print(f"done group {token + 1}", flush=True)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2], int(sys.argv[3]))
