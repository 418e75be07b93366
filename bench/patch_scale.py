"""CPU of one V4A-style patch: `H` anchored hunks (default 4,000) on a 100,000-line file.

``python -m bench.patch_scale [H]``; the figures are kept in bench/results.md.
"""

from __future__ import annotations

import sys
import time

from dsh_fs.fs import FsPatchHunk, FsPatchRequest, apply_change


def main() -> None:
    lines, hunks = 100_000, int(sys.argv[1]) if len(sys.argv) > 1 else 4000
    step = lines // hunks
    texts = [f"    def f{i}():" if i % step == 0 else f"        x = {i}" for i in range(lines)]
    request = FsPatchRequest(
        hunks=tuple(
            FsPatchHunk(
                anchors=(f"def f{h * step}():",),
                lines=(
                    (" ", f"        x = {h * step + 1}"),
                    ("-", f"        x = {h * step + 2}"),
                    ("+", f"        y = {h * step + 2}"),
                ),
            )
            for h in range(hunks)
        )
    )
    text = "\n".join(texts) + "\n"
    started = time.process_time()
    _, applied = apply_change(text, request, "/bench/f.py")
    cpu = time.process_time() - started
    print(f"{hunks} hunks on {lines} lines: {cpu:.2f} s CPU, {applied} hunks applied")


if __name__ == "__main__":
    main()
