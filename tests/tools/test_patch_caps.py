"""A patch is bounded: too many hunks or lines is `INVALID_ARGS` before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_fs import Workspace
from dsh_fs.adapters import run_apply_patch

pytestmark = pytest.mark.anyio


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "f.txt").write_text("".join(f"{n}\n" for n in range(12_000)), encoding="utf-8")
    return tmp_path.resolve()


async def test_a_patch_of_more_than_ten_thousand_hunks_is_refused_and_changes_nothing(
    root: Path,
) -> None:
    diff = "".join(f"@@\n-{n}\n+x{n}\n" for n in range(10_001))
    async with Workspace.sandbox(root) as workspace:
        session = workspace.session()
        await session.call("read", {"file_path": "f.txt"})
        outcome = await run_apply_patch(
            session, {"type": "update_file", "path": "f.txt", "diff": diff}
        )
        result = await session.call(
            "patch",
            {"file_path": "f.txt", "hunks": [{"lines": ["-1", "+y"] * 100_001}]},
            internal=True,
        )
    assert outcome == {
        "status": "failed",
        "output": "Error: a patch may have at most 10000 hunks, this one has 10001; split it "
        "into several patches",
    }
    assert result.code == "INVALID_ARGS"
    assert result.text == (
        "Error: a patch may have at most 200000 lines in its hunks, this one has 200002; "
        "split it into several patches"
    )
    assert (root / "f.txt").read_text(encoding="utf-8").startswith("0\n1\n")


async def test_four_thousand_hunks_on_a_large_file_apply(root: Path) -> None:
    diff = "".join(f"@@\n {3 * n}\n-{3 * n + 1}\n+x\n" for n in range(4000))
    async with Workspace.sandbox(root) as workspace:
        session = workspace.session()
        await session.call("read", {"file_path": "f.txt"})
        outcome = await run_apply_patch(
            session, {"type": "update_file", "path": "f.txt", "diff": diff}
        )
    assert outcome["status"] == "completed", outcome
    assert (root / "f.txt").read_text(encoding="utf-8").count("x\n") == 4000
