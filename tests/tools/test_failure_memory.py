"""A failed call keeps nothing: a missed edit of a large file must not hold the file's text
until the cyclic garbage collector happens to run (one copy per failure, before the
providers dropped the frames of expected failures at their thread boundary)."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from dsh_fs import Workspace

pytestmark = pytest.mark.anyio

TEXT = ("x" * 79 + "\n") * 13_000  # 1 MiB


@pytest.fixture
def no_cyclic_gc() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@pytest.mark.parametrize("backend", ["local", "memory"])
@pytest.mark.usefixtures("no_cyclic_gc")
async def test_missed_edits_of_a_large_file_do_not_accumulate_its_text(
    tmp_path: Path, backend: str
) -> None:
    if backend == "local":
        (tmp_path / "a.txt").write_text(TEXT, encoding="utf-8")
        workspace = Workspace.local(tmp_path)
    else:
        workspace = Workspace.remote(f"memory://failure-memory-{id(tmp_path)}")
        await workspace.session().call("write", {"file_path": "a.txt", "content": TEXT})
    async with workspace:
        session = workspace.session()
        await session.call("read", {"file_path": "a.txt"})
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            for attempt in range(20):
                result = await session.call(
                    "edit",
                    {"file_path": "a.txt", "old_string": f"nope{attempt}", "new_string": "y"},
                )
                assert result.code == "FS_EDIT_NOT_FOUND"
            growth = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
    assert growth < 4 * 2**20, f"{growth / 2**20:.1f} MiB kept after 20 misses of a 1 MiB file"
