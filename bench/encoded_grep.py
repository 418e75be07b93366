"""grep over a tree with declared encodings (SPEC §12): ripgrep's own ``--encoding`` runs
against the pure engine, on the same tree, in the same run.

Run: ``.venv/bin/python -m bench.encoded_grep [files]``. The tree has `files` files each in
``legacy/`` (cp1252 by rule), ``zh/`` (GBK by rule) and ``src/`` (UTF-8), 600 lines each
and a last line ``needle N <word>``. Three patterns: a rare match, no match, a match in
every file. The two engines alternate, twice each; the rendered text must be the same.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import anyio

from dsh_fs import Workspace
from dsh_fs.discovery import DiscoveryConfig

ENCODINGS = {"zh/**": "gbk", "legacy/**": "cp1252"}
PATTERNS = ("needle 99\\d (中文文本|Größe)", "absent-word", "needle \\d+ (中文文本|Größe)")


def _tree(root: Path, files: int) -> int:
    """The tree; its size in bytes."""
    bodies = (
        (
            "zh",
            "gbk",
            "中文文本",
            "".join(f"第{n}行：中文文本，汉字简体 {n}\n" for n in range(600)),
        ),
        (
            "legacy",
            "cp1252",
            "Größe",
            "".join(f"Zeile {n}: Größe {n} € – Grüße\n" for n in range(600)),
        ),
        ("src", "utf-8", "Größe", "".join(f"line {n}: plain text 中文 {n}\n" for n in range(600))),
    )
    size = 0
    for index in range(files):
        for folder, codec, word, body in bodies:
            directory = root / folder / f"d{index % 20}"
            directory.mkdir(parents=True, exist_ok=True)
            data = (body + f"needle {index} {word}\n").encode(codec)
            (directory / f"f{index}.txt").write_bytes(data)
            size += len(data)
    return size


async def _grep(root: Path, native: bool, pattern: str) -> tuple[float, str]:
    discovery = DiscoveryConfig(native=native)
    async with Workspace.sandbox(root, discovery=discovery, encodings=ENCODINGS) as workspace:
        session = workspace.session()
        start = time.perf_counter()
        result = await session.call("grep", {"pattern": pattern})
        return time.perf_counter() - start, result.text


async def _main(files: int) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch).resolve()
        size = _tree(root, files)
        print(f"{3 * files} files, {size / 1e6:.1f} MB")
        for pattern in PATTERNS:
            shown: set[str] = set()
            times: dict[bool, list[float]] = {True: [], False: []}
            for native in (True, False, True, False):
                took, text = await _grep(root, native, pattern)
                times[native].append(took)
                shown.add(text)
            assert len(shown) == 1, "the engines disagree"
            ripgrep = ", ".join(f"{t:.2f}" for t in times[True])
            pure = ", ".join(f"{t:.2f}" for t in times[False])
            print(f"{pattern!r}: ripgrep {ripgrep} s; pure engine {pure} s")


if __name__ == "__main__":
    anyio.run(_main, int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
