"""The read of a large file: a full scan that leaves a line index, or a resumed read that
uses one.

Exactness is the point: a window read through an index has the same lines, caps, footer
and total as a full scan. The index is used only at the version it was built for, and only
when the provider vouched for that version twice: for the stream that built it (the file
did not change while it was scanned) and for the stream that resumes (the descriptor it
opened is still at that version). Providers without `content_versions` are scanned whole
every time, as before.
"""

from __future__ import annotations

from dsh_fs.fs import UTF8, FileSystem, FsEncoding, FsInfo, FsTarget
from dsh_fs.runtime import ProgressReporter

from ._line_index import IndexBuilder, LineIndexes
from ._window import LineWindow, Window

__all__ = ["scan_window"]


async def scan_window(
    fs: FileSystem,
    target: FsTarget,
    info: FsInfo,
    offset: int,
    limit: int,
    indexes: LineIndexes | None,
    progress: ProgressReporter | None = None,
) -> tuple[Window, FsEncoding]:
    """The window `offset`/`limit` of the large file `target`, which `stat` found at
    `info.version`, and the file's encoding (SPEC §12). A full scan reports its progress
    to `progress` (the UTF-8 bytes consumed of `info.size`); a resumed read is short and
    reports nothing.

    Raises:
        FsError: the provider's read errors (`FS_NOT_TEXT` from wherever the scan finds it).
    """
    consumed = _Consumed(progress, info.size)
    if indexes is None or not fs.capabilities.content_versions:
        window = LineWindow(offset, limit)
        encoding = UTF8
        async with fs.stream_text(target) as chunks:
            async for chunk in chunks:
                if window.line == 1 and window.at_line_start and chunk.startswith("\ufeff"):
                    encoding = FsEncoding(bom=True)
                window.feed(chunk)
                await consumed.advance(chunk)
        return window.finish(), encoding
    resumed = await _resume(fs, target, info, offset, limit, indexes)
    if resumed is not None:
        return resumed
    return await _scan(fs, target, offset, limit, indexes, consumed)


class _Consumed:
    """Reports the UTF-8 bytes a scan has consumed of `size`, after each chunk (an estimate
    the file's `stat` bounds: a file may change while it is read); nothing without a
    reporter, and no measuring either."""

    __slots__ = ("_done", "_progress", "_size")

    def __init__(self, progress: ProgressReporter | None, size: int) -> None:
        self._progress = progress
        self._size = size
        self._done = 0

    async def advance(self, text: str) -> None:
        if self._progress is None:
            return
        self._done += len(text) if text.isascii() else len(text.encode())
        await self._progress(min(self._done, self._size), self._size)


async def _resume(
    fs: FileSystem,
    target: FsTarget,
    info: FsInfo,
    offset: int,
    limit: int,
    indexes: LineIndexes,
) -> tuple[Window, FsEncoding] | None:
    """The window read from the indexed chunk that holds line `offset`; None without a
    usable index (none at this version, or the file changed since the `stat`)."""
    index = indexes.get(target.target_key, info.version)
    if index is None:
        return None
    total = index.total_lines
    if offset > total and not (offset == 1 and total == 0):
        empty = Window(offset=offset, lines=(), total_lines=total, output_capped=False)
        return empty, index.encoding
    checkpoint = index.checkpoint(offset)
    if checkpoint.offset == 0:
        window = LineWindow(offset, limit)
    else:
        window = LineWindow.resumed(offset, limit, checkpoint.line)
    async with fs.stream_text_from(target, checkpoint.offset) as stream:
        if stream.version != index.version:
            indexes.drop(target.target_key)
            return None
        async for chunk in stream:
            window.feed(chunk.text)
            if window.done:
                return window.finish(total), stream.encoding
        return window.finish(), stream.encoding


async def _scan(
    fs: FileSystem,
    target: FsTarget,
    offset: int,
    limit: int,
    indexes: LineIndexes,
    consumed: _Consumed,
) -> tuple[Window, FsEncoding]:
    """The window from a scan of the whole file, keeping its index when the provider
    vouched for the version of everything it streamed."""
    window = LineWindow(offset, limit)
    builder = IndexBuilder()
    async with fs.stream_text_from(target) as stream:
        async for chunk in stream:
            builder.add(chunk.offset, window.line, window.at_line_start)
            window.feed(chunk.text)
            await consumed.advance(chunk.text)
        version = stream.version
        encoding = stream.encoding
    result = window.finish()
    if version is not None:
        indexes.put(target.target_key, builder.build(version, result.total_lines, encoding))
    return result, encoding
