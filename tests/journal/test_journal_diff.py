"""The diff outlives the file (SPEC §9.1): `diff ID` shows a text change from its pre-image
and the forward delta kept with the entry, whatever happened to the file since; line counts
are known for every kept text change, at a cost linear in its size."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_fs import Workspace
from dsh_fs.fs import _journal_contract, apply_delta, forward_delta, line_counts

_LINES = "".join(f"line {n}\n" for n in range(1, 21))


@pytest.mark.anyio
async def test_a_diff_still_shows_the_change_after_the_user_reformatted_the_file(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text(_LINES)
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        await s.call("read", {"file_path": "a.txt"})
        edited = await s.call(
            "edit", {"file_path": "a.txt", "old_string": "line 10\n", "new_string": "ten\n"}
        )
        assert not edited.is_error
        shown = await ws.journal.diff((await ws.journal.entries())[0].id)
        # Format-on-save: every other line touched, then the file removed outright.
        (root / "a.txt").write_text(_LINES.replace("line 10\n", "ten\n").upper())
        (entry,) = await ws.journal.entries()
        assert await ws.journal.diff(entry.id) == shown
        (root / "a.txt").unlink()
        assert await ws.journal.diff(entry.id) == shown
    assert "-line 10\n+ten\n" in shown
    assert shown.startswith("--- a/a.txt\n+++ b/a.txt\n@@ -7,7 +7,7 @@\n")


@pytest.mark.anyio
async def test_a_created_files_diff_survives_its_deletion_outside_the_journal(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        await s.call("write", {"file_path": "new.txt", "content": "made\nby the agent\n"})
        (root / "new.txt").unlink()
        (entry,) = await ws.journal.entries()
        assert await ws.journal.diff(entry.id) == (
            "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+made\n+by the agent\n"
        )


def test_a_forward_delta_turns_the_pre_image_into_the_after_image() -> None:
    cases = [
        (b"a\nb\nc\n", b"a\nB\nc\n"),
        (b"", b"new\n"),
        (b"no final newline", b"no final newline either"),
        (b"one\r\ntwo\r\n", b"one\r\n2\r\ntwo\r\n"),
        (b"same\n", b"same\n"),
        ("héllo\nwörld\n".encode(), "héllo\nwêrld\n".encode()),
    ]
    for before, after in cases:
        delta = forward_delta(before, after)
        assert delta is not None
        assert apply_delta(before, delta) == after
    assert forward_delta(b"a\n", b"\0binary") is None
    # A record stays small: a middle over 128 KiB is not kept.
    assert forward_delta(b"", b"x\n" * (64 * 1024)) is not None
    assert forward_delta(b"", b"x\n" * (64 * 1024 + 1)) is None


def test_line_counts_of_a_repetitive_rewrite_take_linear_time() -> None:
    # 19 KiB of short repeated lines took a quadratic matcher seconds.
    old = b"x\ny\n" * 5000
    new = b"y\nx\n" * 4000 + b"z\n" * 2000
    start = time.perf_counter()
    assert line_counts(old, new) == (2000, 2000)
    assert time.perf_counter() - start < 2  # generous (a loaded machine); was minutes


@pytest.mark.anyio
async def test_a_ten_megabyte_changes_line_counts_are_recorded(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    before = b"".join(b"row %d\n" % n for n in range(1_200_000))
    assert len(before) > 10_000_000
    (root / "big.txt").write_bytes(before)
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        await s.call("read", {"file_path": "big.txt", "limit": 1})
        edited = await s.call(
            "edit", {"file_path": "big.txt", "old_string": "row 7\n", "new_string": "seven\n"}
        )
        assert not edited.is_error, edited.text
        (entry,) = await ws.journal.entries()
    assert (entry.added, entry.removed) == (1, 1)
    head = len(b"".join(b"row %d\n" % n for n in range(7)))
    assert entry.delta == (head, len(before) - head - len(b"row 7\n"), "seven\n")


def test_line_counts_of_a_small_change_are_what_git_counts() -> None:
    assert line_counts(b"a\nb\nc\n", b"a\nc\nb\n") == (1, 1)  # a moved line
    assert line_counts(None, b"a\nb\n") == (2, 0)
    assert line_counts(b"a\nb\n", None) == (0, 2)
    assert line_counts(b"a\n", b"a\nb") == (1, 0)
    assert line_counts(b"\xff", b"a\n") == (None, None)


def test_a_lone_carriage_return_ends_no_line_as_git_counts() -> None:
    # git splits on b"\n" only: "a\rb" is one line (`git diff --numstat` says 1 and 1).
    assert line_counts(b"a\rb\nkeep\n", b"c\rd\nkeep\n") == (1, 1)
    assert line_counts(b"a\rb\n", b"a\rb") == (1, 1)  # the last line lost its b"\n"


def _multiset_counts(before: bytes, after: bytes) -> tuple[int, int]:
    """What a large middle's counts are defined as: the lines each side has that the other
    lacks, as multisets (a line without its b"\\n" is another line)."""
    old, new = Counter(before.splitlines(keepends=True)), Counter(after.splitlines(keepends=True))
    kept = sum((old & new).values())
    return sum(new.values()) - kept, sum(old.values()) - kept


_LINE = st.sampled_from([b"a\n", b"b\n", b"cc\n", b"\n", b"a\r\n"])


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(_LINE, min_size=101, max_size=180),
    changes=st.lists(st.tuples(st.integers(0, 179), _LINE), max_size=60),
    inserted=st.lists(st.tuples(st.integers(0, 179), _LINE), max_size=3),
    last=st.sampled_from([b"", b"d", b"a"]),
    chunk=st.sampled_from([128 * 1024, 1, 5, 64]),
)
def test_a_large_changes_counts_are_its_lines_counted_as_multisets(
    lines: list[bytes],
    changes: list[tuple[int, bytes]],
    inserted: list[tuple[int, bytes]],
    last: bytes,
    chunk: int,
) -> None:
    # Past 100 lines a side the lines still in place are paired off before the rest are
    # counted as multisets: the count is the multisets' own, whatever moved or repeated,
    # and an insertion that shifts every line after it changes nothing of that. A large
    # middle is split a chunk at a time (128 KiB; here a few bytes, so the chunks' cuts,
    # a side that splits more lines than the other, and one that ends first are all met).
    new = list(lines)
    for at, line in changes:
        new[at % len(new)] = line
    for at, line in inserted:
        new.insert(at % len(new), line)
    before = b"old first\n" + b"".join(lines) + b"old last\n" + last
    after = b"new first\n" + b"".join(new) + b"new last\n"
    with mock.patch.object(_journal_contract, "_CHUNK", chunk):
        assert line_counts(before, after) == _multiset_counts(before, after)


def test_a_ten_megabyte_rewrite_of_every_tenth_line_counts_each_rewritten_line() -> None:
    before = b"".join(b"    value_%d = compute(alpha, %d)\n" % (n, n) for n in range(300_000))
    after = before.replace(b"0 = compute", b"0 = recompute")
    assert line_counts(before, after) == (30_000, 30_000)
    # Shifted by a line inserted near the start: nothing is in place any more, and the
    # multisets still count what changed.
    shifted = after.replace(b"value_5 ", b"inserted\n    value_5 ", 1)
    assert line_counts(before, shifted) == (30_001, 30_000)
