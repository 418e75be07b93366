"""The read tool reports the bytes it has streamed when the call has a progress reporter."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_fs import Workspace

pytestmark = pytest.mark.anyio


class Reports:
    """A progress reporter that keeps what it is told."""

    def __init__(self) -> None:
        self.seen: list[tuple[float, float | None]] = []

    async def __call__(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        self.seen.append((progress, total))


async def test_a_streamed_read_reports_bytes_up_to_the_file_size(tmp_path: Path) -> None:
    text = "naïve café — ünïcode line\n" * 150_000  # multi-byte UTF-8, several chunks
    (tmp_path / "big.txt").write_text(text, encoding="utf-8")
    size = len(text.encode())
    reports = Reports()
    async with Workspace.local(tmp_path) as workspace:
        result = await workspace.session().call(
            "read", {"file_path": "big.txt", "limit": 1}, progress=reports
        )
    assert not result.is_error
    assert len(reports.seen) >= 3
    assert reports.seen[-1] == (float(size), float(size))
    done = [progress for progress, _ in reports.seen]
    assert done == sorted(set(done))


async def test_a_small_read_reports_nothing(tmp_path: Path) -> None:
    (tmp_path / "small.txt").write_text("one line\n", encoding="utf-8")
    reports = Reports()
    async with Workspace.local(tmp_path) as workspace:
        result = await workspace.session().call(
            "read", {"file_path": "small.txt"}, progress=reports
        )
    assert not result.is_error
    assert reports.seen == []
