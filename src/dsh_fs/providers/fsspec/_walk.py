"""`FsspecFileSystem.walk`: one recursive listing of the store, then the directories in order.

An object store has no directories to open one by one: a prefix is listed whole (s3fs pages
through it a thousand keys per request), so the walk asks once and arranges the answer into
the per-directory batches the contract promises.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable

from dsh_fs.fs import FsFileType, FsWalkEntry

__all__ = ["batches_by_directory"]


async def batches_by_directory(
    entries: list[FsWalkEntry], descend: Callable[[str], bool] | None
) -> AsyncGenerator[list[FsWalkEntry], None]:
    """The entries of one flat listing grouped by directory: depth first, in name order, a
    directory's subtree skipped when `descend` says so (see `dsh_fs.fs.FileSystem.walk`)."""
    children: dict[str, list[FsWalkEntry]] = {}
    for entry in entries:
        children.setdefault(entry.path.rpartition("/")[0], []).append(entry)
    entries.clear()
    pending = [""]
    while pending:
        rel = pending.pop()
        if rel and descend is not None and not descend(rel):
            continue
        batch = children.pop(rel, [])
        batch.sort(key=lambda entry: entry.path)
        pending.extend(
            reversed([entry.path for entry in batch if entry.type is FsFileType.DIRECTORY])
        )
        if batch:
            yield batch
