"""The change journal's cost (issue 23): a journaled edit and write of 1 MB and 100 MB against
the same call without the journal (target <= 1.1x), an undo of a 100 MB edit against the
edit (<= 1.5x), and the peak memory journaling adds to a 100 MB edit (<= 16 MiB). Run:

    .venv/bin/python bench/journal.py [--sizes 1,100] [--repeat 5]

Each call goes through a sandbox workspace's tools on a real disk, the store on the same
filesystem (so the pre-image is a hard link). Prints ratio, target, met / not met.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import tracemalloc
from pathlib import Path

import anyio

from dsh_fs import Workspace

LINE = "    result = compute(alpha, beta)  # a line of code\n"


def _text(size: int) -> str:
    return "MARKER 0\n" + (LINE * (size // len(LINE) + 1))[: size - 9]


async def _edits(
    root: Path, store: Path | None, size: int, repeat: int
) -> tuple[list[float], list[float], Workspace]:
    (root / "f.txt").write_text(_text(size))
    ws = Workspace.sandbox(root, journal=store if store is not None else None)
    s = ws.session(label="bench")
    await s.call("read", {"file_path": "f.txt", "limit": 1})
    edits, writes = [], []
    for n in range(repeat):
        # The replaced file is on disk before each call, as a file an agent edits usually
        # is: else the call without the journal drops the previous call's dirty pages
        # unwritten, while the journal must make them durable (the pre-image) first.
        os.sync()
        start = time.perf_counter()
        result = await s.call(
            "edit",
            {"file_path": "f.txt", "old_string": f"MARKER {n}", "new_string": f"MARKER {n + 1}"},
        )
        edits.append(time.perf_counter() - start)
        assert not result.is_error, result.text
    content = _text(size)
    for _ in range(repeat):
        os.sync()
        start = time.perf_counter()
        result = await s.call("write", {"file_path": "f.txt", "content": content})
        writes.append(time.perf_counter() - start)
        assert not result.is_error, result.text
    return edits, writes, ws


def _row(name: str, ratio: float, target: float) -> str:
    met = "met" if ratio <= target else "not met"
    return f"| {name} | {ratio:.2f}x | <= {target}x | {met} |"


async def journal_rows(sizes: list[int], repeat: int) -> list[str]:
    """The table's rows (a header, then one per measure, with its target and met / not
    met); `make bench` prints them in its run."""
    rows = ["| measure | ratio | target | |", "|---|---|---|---|"]
    for mb in sizes:
        size = mb * 1_000_000
        with tempfile.TemporaryDirectory(dir=".") as tmp:
            base = Path(tmp)
            (base / "plain").mkdir()
            (base / "journaled").mkdir()
            plain_e, plain_w, ws = await _edits(base / "plain", None, size, repeat)
            await ws.aclose()
            jour_e, jour_w, ws = await _edits(base / "journaled", base / "store", size, repeat)
            edit_ratio = statistics.median(jour_e) / statistics.median(plain_e)
            write_ratio = statistics.median(jour_w) / statistics.median(plain_w)
            rows.append(_row(f"journaled edit, {mb} MB", edit_ratio, 1.1))
            rows.append(_row(f"journaled write, {mb} MB", write_ratio, 1.1))
            if mb >= 100:
                assert ws.journal is not None
                edit = next(e for e in await ws.journal.entries() if e.tool == "write")
                # Undo the newest write (its pre-image is the file before it).
                start = time.perf_counter()
                (result,) = await ws.journal.undo(ids=[edit.id])
                undo = time.perf_counter() - start
                assert result.result == "undone", result.reason
                rows.append(
                    _row(
                        f"undo of a {mb} MB change vs the edit",
                        undo / statistics.median(jour_e),
                        1.5,
                    )
                )
            await ws.aclose()
            if mb >= 100:
                for journaled in (False, True):
                    root = base / ("m-j" if journaled else "m-p")
                    root.mkdir()
                    (root / "f.txt").write_text(_text(size))
                    mws = Workspace.sandbox(root, journal=(base / "mstore") if journaled else None)
                    s = mws.session()
                    await s.call("read", {"file_path": "f.txt", "limit": 1})
                    tracemalloc.start()
                    await s.call(
                        "edit",
                        {"file_path": "f.txt", "old_string": "MARKER 0", "new_string": "MARKER 1"},
                    )
                    peak = tracemalloc.get_traced_memory()[1]
                    tracemalloc.stop()
                    await mws.aclose()
                    if not journaled:
                        plain_peak = peak
                extra = (peak - plain_peak) / (1 << 20)
                met = "met" if extra <= 16 else "not met"
                rows.append(
                    f"| peak memory journaling a {mb} MB edit | +{extra:.1f} MiB "
                    f"| <= 16 MiB | {met} |"
                )
    return rows


async def main(sizes: list[int], repeat: int) -> None:
    print("\n".join(await journal_rows(sizes, repeat)))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1,100")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    anyio.run(main, [int(s) for s in args.sizes.split(",")], args.repeat)
