"""Change sets (SPEC §13): one `edit_files` of 10 one-line edits in 10 files of 100 KB
against ten separate `edit` calls, in the same run (target: ≤ 1.3×).

Run: ``.venv/bin/python -m bench.change_sets [repeats] [--journal]``. Each repeat rewrites
the files, reads each (one line: the observation), then times only the edits; the two ways
alternate, so load hits both alike. Prints the medians and their ratio.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from dsh_fs import Workspace

__all__ = ["set_row"]

FILES = 10
LINE = "value = 1  # " + "p" * 86 + "\n"
"""100 bytes; 1000 of them make a file of 100 KB."""


def _files(root: Path) -> None:
    for index in range(FILES):
        (root / f"f{index}.py").write_text(f"marker_{index} = 0\n" + LINE * 1000, "utf-8")


def _edits() -> list[dict[str, Any]]:
    return [
        {
            "file_path": f"f{index}.py",
            "old_string": f"marker_{index} = 0",
            "new_string": f"marker_{index} = 1",
        }
        for index in range(FILES)
    ]


async def _once(root: Path, store: Path | None, as_set: bool) -> float:
    _files(root)
    async with Workspace.local(root, journal=store) as workspace:
        session = workspace.session()
        for index in range(FILES):
            await session.call("read", {"file_path": f"f{index}.py", "limit": 1})
        start = time.perf_counter()
        if as_set:
            result = await session.call("edit_files", {"edits": _edits()})
            assert not result.is_error, result.text
        else:
            for edit in _edits():
                result = await session.call("edit", edit)
                assert not result.is_error, result.text
        return time.perf_counter() - start


async def set_row(repeats: int, journal: bool) -> str:
    """The row of one run: `repeats` alternations of ten `edit` calls and one `edit_files`."""
    saved = os.environ.get("XDG_STATE_HOME")
    try:
        with tempfile.TemporaryDirectory() as scratch:
            # Without a journal a set's intent record goes under $XDG_STATE_HOME/dsh-fs/sets, as
            # a user's would: a state folder of the run's own, never the user's.
            os.environ["XDG_STATE_HOME"] = str(Path(scratch) / "state")
            root = Path(scratch) / "root"
            root.mkdir()
            store = Path(scratch) / "store" if journal else None
            separate: list[float] = []
            together: list[float] = []
            for _ in range(repeats):
                separate.append(await _once(root, store, as_set=False))
                together.append(await _once(root, store, as_set=True))
    finally:
        if saved is None:
            os.environ.pop("XDG_STATE_HOME", None)
        else:
            os.environ["XDG_STATE_HOME"] = saved
    edit, edit_files = statistics.median(separate), statistics.median(together)
    label = ", journaled" if journal else ""
    ratio = edit_files / edit
    return (
        f"| 10 one-line edits in 10 files of 100 KB{label}: one edit_files vs ten edit calls "
        f"| {edit_files * 1e3:.1f} ms | {edit * 1e3:.1f} ms | {ratio:.2f}× | ≤ 1.3× "
        f"| {'met' if ratio <= 1.3 else 'not met'} |"
    )


def main() -> None:
    """Parse ``[repeats] [--journal]`` and print the row."""
    args = [arg for arg in sys.argv[1:] if arg != "--journal"]
    print(anyio.run(set_row, int(args[0]) if args else 21, "--journal" in sys.argv[1:]))


if __name__ == "__main__":
    main()
