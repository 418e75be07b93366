"""The bytes a journal store holds on disk, read while a workspace may still be writing it."""

from __future__ import annotations

import stat
from pathlib import Path

_WALKS = 100


def held_bytes(store: Path) -> int:
    """The bytes of every regular file under `store` (its sub-stores), from one walk that
    saw no file vanish: a record still pending when the call returned is renamed, and the
    pruner removes files, while the walk runs; a walk that met either is taken again rather
    than counted short."""
    for _ in range(_WALKS):
        try:
            return sum(
                info.st_size
                for info in (path.lstat() for path in store.rglob("*"))
                if stat.S_ISREG(info.st_mode)
            )
        except FileNotFoundError:
            continue
    raise AssertionError(f"{store} changed during each of {_WALKS} walks")
