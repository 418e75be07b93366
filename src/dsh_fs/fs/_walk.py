"""The default `FileSystem.walk`: depth first over `list_dir`, for providers without their own.

A third-party provider gets a working walk for free; the built-in ones override it with one
efficient pass (``os.scandir``, one paginated listing of a bucket).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from dsh_fs.errors import FsError

from . import messages
from ._types import FsFileType, FsTarget, FsWalkEntry

if TYPE_CHECKING:
    from ._contract import FileSystem

__all__ = ["walk_by_listing"]


@asynccontextmanager
async def walk_by_listing(
    fs: FileSystem, root: FsTarget, descend: Callable[[str], bool] | None
) -> AsyncIterator[AsyncIterator[list[FsWalkEntry]]]:
    """`FileSystem.walk` from `stat`, `resolve` and `list_dir` (see there)."""
    info = await fs.stat(root)
    if info is None:
        raise messages.not_found("search", root.display_path)
    if info.type is not FsFileType.DIRECTORY:
        raise messages.not_a_directory("search", root.display_path)
    batches = _batches(fs, root, descend)
    try:
        yield batches
    finally:
        await batches.aclose()


async def _batches(
    fs: FileSystem, root: FsTarget, descend: Callable[[str], bool] | None
) -> AsyncGenerator[list[FsWalkEntry], None]:
    pending: list[tuple[str, FsTarget]] = [("", root)]
    while pending:
        rel, target = pending.pop()
        if rel and descend is not None and not descend(rel):
            continue
        try:
            children = await fs.list_dir(target)
        except FsError:
            if not rel:
                raise
            continue  # vanished or refused since its parent was listed: skipped
        batch: list[FsWalkEntry] = []
        subdirectories: list[tuple[str, FsTarget]] = []
        for child in children:
            path = f"{rel}/{child.name}" if rel else child.name
            size, mtime = child.size, child.mtime_ns
            if child.type in (FsFileType.DIRECTORY, FsFileType.SYMLINK):
                size, mtime = 0, None
            if child.type is FsFileType.DIRECTORY:
                subdirectories.append((path, await fs.resolve(child.name, target.display_path)))
            elif mtime is None and child.type is FsFileType.FILE:
                found = await fs.stat(await fs.resolve(child.name, target.display_path))
                mtime = None if found is None else found.mtime_ns
            batch.append(FsWalkEntry(path=path, type=child.type, size=size, mtime_ns=mtime))
        pending.extend(reversed(subdirectories))
        if batch:
            yield batch
