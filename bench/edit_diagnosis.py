"""What an edit miss costs to diagnose (SPEC §8.2): the diagnosis alone, per kind of miss.

Run: ``.venv/bin/python -m bench.edit_diagnosis [--sizes 1MB,100MB] [--repeats N]``. Each
kind of miss is built from the benchmark's generated source file (thousands of near-copy
handler blocks, the hard case for finding "the" closest text) and diagnosed directly with
`diagnose_not_found`, the pure function `apply_edit` calls inside a provider's critical
section. `make bench` reports the slowest kind per size (``workload: diagnosis``).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from bench._data import MARKER, SIZES, ensure_file
from dsh_fs.fs._lf_search import has_crlf
from dsh_fs.fs.diagnosis import diagnose_not_found

__all__ = ["MISSES", "diagnose_each", "edit_near_miss"]


def _middle_block(text: str, lines: int) -> str:
    """`lines` whole lines starting at the ``def`` nearest the middle of `text`."""
    start = text.rfind("\ndef ", 0, len(text) // 2) + 1
    end = start
    for _ in range(lines):
        end = text.index("\n", end) + 1
    return text[start:end]


def _dedent(text: str) -> tuple[str, str]:
    block = _middle_block(text, 4)
    return block.replace("\n    ", "\n  "), "x"


def _token(text: str) -> tuple[str, str]:
    line = _middle_block(text, 4).splitlines()[3]
    return line.replace("attempt)", "attempts)"), "x"


def _absent(text: str) -> tuple[str, str]:
    return "def frobnicate(widget):\n    return widget.spin(42)\n", "x"


def _long(text: str) -> tuple[str, str]:
    block = _middle_block(text, 200)
    return block.replace("retries=3", "retries=4", 1), "x"


def _applied(text: str) -> tuple[str, str]:
    return MARKER.replace("middle", "centre"), MARKER


def _anchored(text: str) -> tuple[str, str]:
    """The block's first line verbatim, an invented body (issue 25, pattern 1)."""
    first = _middle_block(text, 1)
    return first + "    raise NotImplementedError('an invented body')\n", "x"


def _short(text: str) -> tuple[str, str]:
    """A short needle indented with a tab where the file has spaces (pattern 4)."""
    return "\treturn x", "x"


def _stitched(text: str) -> tuple[str, str]:
    """Two handlers' first lines, 200 handlers apart (issue 41, pattern 1): each line of
    old_string is in the file, not adjacent."""
    start = text.rfind("\ndef ", 0, len(text) // 3) + 1
    far = text.rfind("\ndef ", 0, 2 * len(text) // 3) + 1
    first = text[start : text.index("\n", start) + 1]
    second = text[far : text.index("\n", far) + 1]
    return first + second, "x"


def _loosely(text: str) -> tuple[str, str]:
    """A handler recalled with another signature and an invented body (pattern 3)."""
    name = _middle_block(text, 1).split("(", 1)[0].removeprefix("def ")
    return f"def {name}(req, timeout):\n    return cache.lookup(req.key) or fallback(req)\n", "x"


def _applied_reindented(text: str) -> tuple[str, str]:
    """new_string is the middle block dedented (pattern 2: applied apart from indentation)."""
    block = _middle_block(text, 4)
    return block.replace("retries=3", "tries=3"), block.replace("\n    ", "\n")


MISSES: dict[str, Callable[[str], tuple[str, str]]] = {
    "indentation (4 lines)": _dedent,
    "one token (1 line)": _token,
    "absent": _absent,
    "one token (200 lines)": _long,
    "already applied": _applied,
    "first line verbatim": _anchored,
    "short needle (tab)": _short,
    "stitched pieces": _stitched,
    "loosely similar (name)": _loosely,
    "applied, reindented": _applied_reindented,
}
"""Each kind of miss, built from the file's text as (old_string, new_string)."""


def edit_near_miss() -> tuple[str, str]:
    """The near-miss `make bench` sends through the edit tool: the marker line with one
    word misremembered."""
    return MARKER.replace("unique line", "unique lines"), "x"


def diagnose_each(text: str, repeats: int) -> dict[str, list[float]]:
    """Seconds per diagnosis, `repeats` times for every kind of miss."""
    crlf = has_crlf(text)
    times: dict[str, list[float]] = {}
    for kind, build in MISSES.items():
        old, new = build(text)
        assert old not in text, kind
        times[kind] = []
        for _ in range(repeats):
            start = time.perf_counter()
            diagnose_not_found(text, old, new, crlf=crlf)
            times[kind].append(time.perf_counter() - start)
    return times


def main(argv: list[str] | None = None) -> None:
    """Print the median diagnosis time of every kind of miss, per file size."""
    parser = argparse.ArgumentParser(prog="python -m bench.edit_diagnosis")
    parser.add_argument("--sizes", default="1MB,100MB")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    for label in args.sizes.split(","):
        text = ensure_file(label).read_text(encoding="utf-8")
        repeats = args.repeats if SIZES[label] <= SIZES["1MB"] else max(1, args.repeats // 3)
        for kind, times in diagnose_each(text, repeats).items():
            times.sort()
            median, fastest = times[len(times) // 2] * 1e3, times[0] * 1e3
            print(f"{label:>6}  {kind:<24} median {median:8.2f} ms  min {fastest:8.2f} ms")


if __name__ == "__main__":
    main()
