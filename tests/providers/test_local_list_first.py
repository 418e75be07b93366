"""`list_dir_first` of the local provider: every name read in passes, only the first kept."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from dsh_fs.providers.local import _dirs as _local_dirs
from dsh_fs.providers.local._dirs import list_dir_first


def test_the_first_names_survive_many_passes_in_any_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_local_dirs, "NAMES_PER_PASS", 3)
    names = [f"n{index:03}" for index in range(60)]
    for name in random.Random(7).sample(names, len(names)):
        (tmp_path / name).write_bytes(name.encode())
    listing = list_dir_first(str(tmp_path), str(tmp_path), 7)
    assert [entry.name for entry in listing.entries] == names[:7]
    assert [entry.size for entry in listing.entries] == [4] * 7
    assert listing.total == 60


def test_a_limit_of_zero_still_counts_every_child(tmp_path: Path) -> None:
    for index in range(5):
        (tmp_path / f"f{index}").mkdir()
    listing = list_dir_first(str(tmp_path), str(tmp_path), 0)
    assert (listing.entries, listing.total) == ((), 5)
