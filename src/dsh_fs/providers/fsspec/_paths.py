"""Path components under an fsspec root: ``.`` and ``..`` applied, never climbing out."""

from __future__ import annotations

from collections.abc import Callable

from dsh_fs.errors import FsError

__all__ = ["normalize"]


def normalize(
    parts: list[str], path: str, outside: Callable[[str], FsError] | None = None
) -> list[str]:
    """Apply ``.`` and ``..`` to path components; climbing above the first one is refused."""
    out: list[str] = []
    for part in parts:
        if part in ("", "."):
            continue
        if part == "..":
            if not out:
                if outside is None:
                    raise ValueError(f"{path!r} climbs above the storage root")
                raise outside(path)
            out.pop()
        else:
            out.append(part)
    return out
