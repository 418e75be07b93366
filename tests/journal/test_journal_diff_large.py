"""A large change's diff (issue 38): a 1 MB change with edits all through the file is matched
in near-linear time (difflib alone took most of a minute), its hunks numbered as a revert by
hunk numbers them; a small change's diff is difflib's, exactly as before."""

from __future__ import annotations

import difflib
import random
import time
from pathlib import Path

import pytest

from dsh_fs import Workspace
from dsh_fs.journal import _diff, _hunks

pytestmark = pytest.mark.anyio


def _big(count: int) -> list[str]:
    return [f"line {n} of a large file, long enough to matter\n" for n in range(count)]


def _scattered(lines: list[str], every: int) -> list[str]:
    changed = list(lines)
    for n in range(0, len(changed), every):
        changed[n] = f"edited {n}\n"
    return changed


def _rebuilt(before: list[str], after: list[str]) -> list[str]:
    """`after` as the matcher's opcodes make it from `before` (its equal spans checked)."""
    out: list[str] = []
    for tag, i1, i2, j1, j2 in _diff.matcher(before, after).get_opcodes():
        if tag == "equal":
            assert before[i1:i2] == after[j1:j2]
        out += after[j1:j2]
    return out


def test_a_small_change_is_diffed_exactly_as_difflib_diffs_it() -> None:
    rng = random.Random(38)
    for _ in range(200):
        before = [f"{rng.randint(0, 30)}\n" for _ in range(rng.randint(0, 400))]
        after = list(before)
        for _ in range(rng.randint(0, 20)):
            at = rng.randint(0, len(after))
            after.insert(at, f"new {rng.random()}\n")
            if after and rng.random() < 0.5:
                del after[rng.randrange(len(after))]
        ours = list(_diff.unified_diff(before, after, "a/f", "b/f"))
        assert ours == list(difflib.unified_diff(before, after, "a/f", "b/f"))


def test_a_large_change_with_repeated_lines_and_moves_is_matched_correctly() -> None:
    rng = random.Random(11)
    for repeated in (5, 50, 100_000):
        before = [f"{rng.randint(0, repeated)}\n" for _ in range(6_000)]
        after = list(before)
        for _ in range(300):
            at = rng.randrange(len(after))
            if rng.random() < 0.3:
                after.insert(rng.randrange(len(after)), after.pop(at))  # a moved line
            elif rng.random() < 0.5:
                after[at] = "changed\n"
            else:
                del after[at]
        assert _rebuilt(before, after) == after
        assert _rebuilt(after, before) == before


def test_a_1_mb_change_with_edits_all_through_it_is_diffed_in_well_under_a_second_of_cpu() -> None:
    before = _big(23_000)  # about 1 MB
    after = _scattered(before, 23)
    start = time.process_time()
    text = "".join(_diff.unified_diff(before, after, "a/big", "b/big"))
    spent = time.process_time() - start
    assert text.count("\n@@ ") == 1000  # one hunk per edit (each 23 lines apart)
    assert spent < 5  # difflib alone: about 45 s
    found = _hunks.hunks(before, after)
    assert len(found) == 1000
    assert [h.after_start for h in found[:2]] == [0, 20]


async def test_the_cli_and_the_revert_agree_on_a_large_changes_hunk_numbers(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    before = _big(6_000)
    after = _scattered(before, 50)
    (root / "big.txt").write_text("".join(before))
    async with Workspace.sandbox(root, journal=tmp_path / "store") as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        await s.call("read", {"file_path": "big.txt"})
        assert not (
            await s.call("write", {"file_path": "big.txt", "content": "".join(after)})
        ).is_error
        (entry,) = await ws.journal.entries()
        diff = await ws.journal.diff(entry.id)
        headers = [line for line in diff.splitlines() if line.startswith("@@ ")]
        assert len(headers) == 120
        assert headers[70] == "@@ -3498,7 +3498,7 @@"  # the edit at line 3501 (index 3500)
        (result,) = await ws.journal.undo(ids=[entry.id], hunks=[71])
        assert result.result == "undone"
        now = (root / "big.txt").read_text().splitlines(keepends=True)
        expected = list(after)
        expected[3500] = before[3500]
        assert now == expected


def _lcs(a: list[int], b: list[int]) -> int:
    """The longest common subsequence's length (dynamic programming: small inputs)."""
    row = [0] * (len(b) + 1)
    for x in a:
        previous, row = row, [0]
        for j, y in enumerate(b):
            row.append(previous[j] + 1 if x == y else max(previous[j + 1], row[j]))
    return row[-1]


def test_a_shortest_edit_script_matches_as_many_lines_as_can_be_matched() -> None:
    rng = random.Random(36)
    for _ in range(400):
        a = [rng.randint(0, rng.choice((1, 2, 5))) for _ in range(rng.randint(0, 40))]
        b = list(a)
        for _ in range(rng.randint(0, 8)):
            if b and rng.random() < 0.5:
                del b[rng.randrange(len(b))]
            else:
                b.insert(rng.randint(0, len(b)), rng.randint(0, 5))
        blocks = _diff._few_edits(a, b, 0, len(a), 0, len(b))
        assert blocks is not None
        i = j = 0
        for start_a, start_b, size in blocks:
            assert size > 0
            assert start_a >= i
            assert start_b >= j
            assert a[start_a : start_a + size] == b[start_b : start_b + size]
            i, j = start_a + size, start_b + size
        assert sum(size for _, _, size in blocks) == _lcs(a, b)


def test_a_script_with_more_edits_than_it_looks_for_is_not_made() -> None:
    a = [0] * 300 + [1] * 300
    b = [1] * 300 + [0] * 300  # 600 edits at least
    assert _diff._few_edits(a, b, 0, len(a), 0, len(b)) is None


def test_a_few_edits_in_a_large_file_of_repeated_lines_are_their_own_small_hunks() -> None:
    # No line is unique on both sides and the span is too large for difflib: it was shown
    # as one hunk replacing everything from the first edit to the last.
    before = ["the same line\n"] * 8_000
    after = list(before)
    after[2_000] = "edited\n"
    after.insert(6_000, "inserted\n")
    del after[7_500]
    start = time.process_time()
    text = "".join(_diff.unified_diff(before, after, "a/f", "b/f"))
    assert time.process_time() - start < 5
    # The repeated lines are interchangeable: any shortest script is right, and each of
    # them changes 4 lines in hunks of a few lines.
    shown = text.splitlines()[2:]
    assert sum(line.startswith(("-", "+")) for line in shown) == 4
    assert 2 <= text.count("\n@@ ") <= 3
    assert len(shown) < 40
    assert _rebuilt(before, after) == after
    assert len(_hunks.hunks(before, after)) == text.count("\n@@ ")
