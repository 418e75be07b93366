"""Patch application is near-linear in the file and the patch (issue 22, item 10).

A patch of thousands of hunks used to scan the file once per hunk inside the critical
section (4,000 hunks on 100,000 lines: 35 s of CPU). The work is counted here in profiler
events (Python calls and generator resumptions, builtin calls), which do not depend on the
machine's speed or load.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_fs.fs import FsPatchHunk, FsPatchRequest, apply_change

P = "/w/big.py"


def _file(lines: int, hunks: int) -> tuple[str, FsPatchRequest]:
    """Functions indented in a class; each hunk names one by an unindented anchor."""
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
    return "\n".join(texts) + "\n", request


def _events(work: Callable[[], Any]) -> int:
    count = 0

    def profile(frame: FrameType, event: str, arg: object) -> None:
        nonlocal count
        count += 1

    sys.setprofile(profile)
    try:
        work()
    finally:
        sys.setprofile(None)
    return count


def test_a_patch_of_many_anchored_hunks_costs_work_linear_in_file_and_patch() -> None:
    lines, hunks = 20_000, 400
    text, request = _file(lines, hunks)
    result: list[str] = []
    events = _events(lambda: result.append(apply_change(text, request, P)[0]))
    assert result[0].count("        y = ") == hunks
    # The old per-hunk scans took about 8 million events here; linear work is some 35 per
    # line of the file and of the patch.
    assert events < 50 * (lines + 3 * hunks), events


def test_repeated_lines_do_not_make_the_search_quadratic() -> None:
    lines = 20_000
    text = "x\n" * lines + "y\n"
    request = FsPatchRequest(
        hunks=(FsPatchHunk(lines=(*((" ", "x") for _ in range(500)), ("-", "y"), ("+", "z"))),)
    )
    events = _events(lambda: apply_change(text, request, P))
    assert apply_change(text, request, P)[0].endswith("x\nz\n")
    assert events < 50 * lines, events


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b", " a", "c"]), max_size=30),
    st.lists(st.sampled_from(["a", "b", " a", "c"]), min_size=1, max_size=4),
    st.integers(min_value=0, max_value=30),
)
def test_the_indexed_search_finds_what_a_scan_finds(
    texts: list[str], block: list[str], start: int
) -> None:
    """Where the block is found (or that it is not) is what a line-by-line scan says."""
    expected = next(
        (
            i
            for i in range(start, len(texts) - len(block) + 1)
            if texts[i : i + len(block)] == block
        ),
        None,
    )
    text = "".join(f"{t}\n" for t in texts)
    hunks = [FsPatchHunk(lines=tuple((" ", t) for t in texts[:start]))] if start else []
    if start > len(texts):
        return
    hunks.append(FsPatchHunk(lines=(*((" ", t) for t in block), ("+", "NEW"))))
    try:
        out = apply_change(text, FsPatchRequest(hunks=tuple(hunks)), P)[0]
    except Exception:
        assert expected is None
        return
    assert expected is not None
    at = expected + len(block)
    assert out.split("\n")[at] == "NEW"
