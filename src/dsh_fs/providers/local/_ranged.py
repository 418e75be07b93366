"""`stream_text_from` of the local provider: a stream from a byte offset, with the version of
the opened descriptor when a stat tuple can vouch for the content."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from dsh_fs.fs import FsEncoding, FsTextChunk, FsTextStream, FsVersion

from .._oserrors import map_os_errors
from ._guards import LocalGuards
from ._open import open_regular
from ._stream import Declared, TextChunks
from ._versions import VersionBook

__all__ = ["RESUMED_CHUNK_SIZE", "RangedText", "stream_text_from"]

RESUMED_CHUNK_SIZE = 64 * 1024
"""Bytes per read of a stream that starts past 0: such a stream is usually a short ranged
read (a window from a line index), so less is decoded past what its reader needs."""


@asynccontextmanager
async def stream_text_from(
    key: str,
    display: str,
    start: int,
    chunk_size: int,
    versions: VersionBook,
    guards: LocalGuards,
    closed: Callable[[], bool],
    declared: Declared | None = None,
) -> AsyncIterator[FsTextStream]:
    """Open `key` and stream its text from byte `start`; leaving the block closes the file.

    The version comes from the `fstat` of the opened descriptor, not from a path that may
    name another file by now. It is vouched for only once it is settled (`VersionBook.
    is_racy` is false): any later write then lands in a later timestamp tick and changes
    the stat tuple, while a racy version could hide a same-size rewrite in its tick.
    """
    if start < 0:
        raise ValueError("start must be at least 0")
    # A few metadata calls, cheaper on the loop than a thread hop (as `read_text` opens).
    opened = open_regular(key, "read", display, guards)
    head = None
    if start > 0:
        # Past the file's first bytes, its BOM (SPEC §12) is read on its own; a fallback
        # codec a scan at this version settled on is taken as a rule.
        try:
            with map_os_errors("read", display):
                head = os.pread(opened.fd, 3, 0)
        except BaseException:
            os.close(opened.fd)
            raise
        if declared is not None and declared.book is not None:
            settled = declared.book.known(versions.version(opened.info))
            if settled is not None:
                declared = Declared(settled, ())
    chunks = TextChunks(
        opened.fd,
        display,
        chunk_size,
        opened.info,
        versions,
        closed,
        start,
        declared=declared,
        head=head,
    )
    vouched = None if versions.is_racy(opened.info) else versions.version(opened.info)
    try:
        yield RangedText(chunks, vouched)
    finally:
        chunks.close()


class RangedText(FsTextStream):
    """`TextChunks` as an `FsTextStream`: offsets from the reader, the version it opened."""

    def __init__(self, chunks: TextChunks, vouched: FsVersion | None) -> None:
        self._chunks = chunks
        self._vouched = vouched

    @property
    def version(self) -> FsVersion | None:
        if self._chunks.unchanged_at_end is False:
            return None  # written while it was read: the chunks may mix two contents
        return self._vouched

    @property
    def encoding(self) -> FsEncoding:
        return self._chunks.encoding

    async def __anext__(self) -> FsTextChunk:
        text = await self._chunks.__anext__()
        return FsTextChunk(offset=self._chunks.text_offset, text=text)
