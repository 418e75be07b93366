"""Records count toward `max_bytes` as written (SPEC §9.1): a record keeps its change's
forward delta (up to 128 KiB of text, more once escaped in JSON), and a running workspace
counted each record by a fixed estimate, so creates of 100 KiB files grew a store bound to
1 MiB to 6 MiB after 60 (93 MB after 1,000) before it pruned."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_fs import Workspace
from dsh_fs.journal import JournalConfig

from .store_size import held_bytes


@pytest.mark.anyio
@pytest.mark.parametrize("text", ["ascii line\n", "non-ascii é \u2028 line\n"])
async def test_records_with_large_deltas_keep_a_running_store_within_the_bound(
    tmp_path: Path, text: str
) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    root.mkdir()
    bound = 1 << 20
    config = JournalConfig(location=str(store), max_bytes=bound)
    body = text * (100 * 1024 // len(text.encode()))
    async with Workspace.sandbox(root, journal=config) as ws:
        assert ws.journal is not None
        s = ws.session(label="agent")
        for n in range(24):
            made = await s.call("write", {"file_path": f"f{n}.txt", "content": f"{n}\n{body}"})
            assert not made.is_error, made.text
            # At most one change beyond the bound (its record, ~1 MiB at worst escaped).
            assert held_bytes(store) <= 2 * bound, n
        assert held_bytes(store) <= bound
        entries = await ws.journal.entries()
    assert entries
    assert entries[0].rel == "f23.txt"  # the newest kept
