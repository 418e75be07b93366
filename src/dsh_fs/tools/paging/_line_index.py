"""Line indexes: where each chunk of a streamed file starts, in bytes and in lines.

A read of a large file streams it whole to count its lines exactly. While it does, it notes
for every chunk the byte offset and the line its first character belongs to: a few KiB for
a gigabyte. Kept per target and version (a version the provider vouches names exactly those
bytes), the index lets a later read of any window seek to the chunk holding the window's
first line, decode only from there, and take the total line count from the index. The
bytes before that chunk were checked as UTF-8 by the scan that built the index, at the same
version.
"""

from __future__ import annotations

import bisect
import threading
from array import array
from collections import OrderedDict
from dataclasses import dataclass

from dsh_fs.fs import UTF8, FsEncoding, FsTargetKey, FsVersion

__all__ = [
    "MAX_FILE_CHECKPOINTS",
    "MAX_INDEXED_CHUNKS",
    "MAX_INDEXED_FILES",
    "IndexBuilder",
    "LineIndex",
    "LineIndexes",
]

MAX_INDEXED_CHUNKS = 1 << 18
"""Chunk starts a workspace keeps at most, over all files (16 bytes each: 4 MiB)."""

MAX_FILE_CHECKPOINTS = 1 << 14
"""Chunk starts one index keeps at most (256 KiB): every chunk start of a file of up to
1 GiB in the local provider's 64 KiB chunks, every second one up to 2 GiB, and so on, so a
file of any size is indexed in bounded memory."""

MAX_INDEXED_FILES = 256
"""Files a workspace keeps an index for at most."""


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """Where a resumed read starts."""

    offset: int
    """Byte offset of a chunk start (a character boundary)."""
    line: int
    """The line the character at `offset` belongs to."""


class LineIndex:
    """The chunk starts of one file at one version, and its exact line count.

    A start is kept as one number per chunk, ``2 * line + (0 if the chunk starts its line
    else 1)``: non-decreasing along the file, so the chunk to resume from is a bisection.
    """

    __slots__ = ("_keys", "_offsets", "encoding", "total_lines", "version")

    def __init__(
        self,
        version: FsVersion,
        total_lines: int,
        offsets: array[int],
        keys: array[int],
        encoding: FsEncoding = UTF8,
    ) -> None:
        self.version = version
        """The version the indexed bytes have."""
        self.encoding = encoding
        """The encoding the scan decoded them in (SPEC §12)."""
        self.total_lines = total_lines
        """How many lines the file has."""
        self._offsets = offsets
        self._keys = keys

    @property
    def chunks(self) -> int:
        """How many chunk starts the index holds."""
        return len(self._offsets)

    def checkpoint(self, line: int) -> Checkpoint:
        """The last chunk start from which line `line` can be read from its first character
        (the file's start when none is closer)."""
        i = bisect.bisect_right(self._keys, 2 * line) - 1
        if i < 0:
            return Checkpoint(0, 1)
        return Checkpoint(self._offsets[i], self._keys[i] >> 1)


class IndexBuilder:
    """Collects chunk starts while a scan streams a file from its first byte, at most
    `max_checkpoints` of them: when they would be more, every second one is dropped and
    from then on only every second chunk start is kept (any subset of chunk starts is a
    valid index; a sparser one only makes a resumed read decode more)."""

    __slots__ = ("_keys", "_max", "_offered", "_offsets", "_stride")

    def __init__(self, max_checkpoints: int = MAX_FILE_CHECKPOINTS) -> None:
        if max_checkpoints < 2:
            raise ValueError(f"max_checkpoints must be at least 2, got {max_checkpoints}")
        self._offsets: array[int] = array("q")
        self._keys: array[int] = array("q")
        self._max = max_checkpoints
        self._offered = 0  # chunk starts seen so far
        self._stride = 1  # keep the chunk starts whose number is a multiple of this

    def add(self, offset: int, line: int, at_line_start: bool) -> None:
        """A chunk starts at byte `offset`, inside line `line` (at its start or not)."""
        number, self._offered = self._offered, self._offered + 1
        if number % self._stride:
            return
        if len(self._offsets) == self._max:
            # The kept starts are numbers 0, s, 2s, …: keeping every second is 0, 2s, 4s, …
            self._offsets = self._offsets[::2]
            self._keys = self._keys[::2]
            self._stride *= 2
            if number % self._stride:
                return
        self._offsets.append(offset)
        self._keys.append(2 * line + (0 if at_line_start else 1))

    def build(self, version: FsVersion, total_lines: int, encoding: FsEncoding = UTF8) -> LineIndex:
        """The index of the completed scan, for the bytes at `version` in `encoding`."""
        return LineIndex(version, total_lines, self._offsets, self._keys, encoding)


class LineIndexes:
    """The line indexes of one workspace: one version per target, least recently used
    dropped first, bounded in files and in chunk starts.

    Args:
        max_chunks: Chunk starts kept at most over all files.
        max_files: Files kept at most.
    """

    def __init__(
        self, max_chunks: int = MAX_INDEXED_CHUNKS, max_files: int = MAX_INDEXED_FILES
    ) -> None:
        self._max_chunks = max_chunks
        self._max_files = max_files
        self._entries: OrderedDict[FsTargetKey, LineIndex] = OrderedDict()
        self._chunks = 0
        self._lock = threading.Lock()  # a workspace may be shared by threads (sync adapters)

    def get(self, key: FsTargetKey, version: FsVersion) -> LineIndex | None:
        """The index of `key` at `version`; an index of another version is dropped."""
        with self._lock:
            index = self._entries.get(key)
            if index is None:
                return None
            if index.version != version:
                self._drop(key)
                return None
            self._entries.move_to_end(key)
            return index

    def put(self, key: FsTargetKey, index: LineIndex) -> None:
        """Keep `index` for `key` (replacing any other version's); one too big to fit is
        not kept."""
        with self._lock:
            self._drop(key)
            if index.chunks > self._max_chunks:
                return
            self._entries[key] = index
            self._chunks += index.chunks
            while self._chunks > self._max_chunks or len(self._entries) > self._max_files:
                self._drop(next(iter(self._entries)))

    def drop(self, key: FsTargetKey) -> None:
        """Forget the index of `key`, if any."""
        with self._lock:
            self._drop(key)

    def __len__(self) -> int:
        return len(self._entries)

    def _drop(self, key: FsTargetKey) -> None:
        index = self._entries.pop(key, None)
        if index is not None:
            self._chunks -= index.chunks
