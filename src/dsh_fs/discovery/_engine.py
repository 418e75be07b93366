"""The pure-Python search engine: grep and glob over any provider, through `walk` and reads.

It is what runs wherever the provider has no searcher of its own (fsspec stores, a local
disk without the ``rg`` binary), and it decides exactly what ripgrep decides by default
(`FsGrepQuery`, `FsGlobQuery`), so both engines give the same results. Files are read by a
few concurrent workers, a parcel of small files at a time through `FileSystem.read_many`
(an object store answers one request per file: its provider keeps several in flight); a
larger file is read whole up to `WHOLE_READ` bytes, streamed beyond. Small files are
searched several at a time, joined (`_scan_joined`): one regex call for many files that
match nothing.
"""

from __future__ import annotations

import bisect
import re
from typing import Any

import anyio
from anyio.lowlevel import checkpoint
from anyio.streams.memory import MemoryObjectReceiveStream

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import (
    VCS_DIRECTORIES,
    FileSystem,
    FsFileType,
    FsGrepQuery,
    FsTarget,
    FsWalkEntry,
)

from ._collect import MatchCollector, PathCollector
from ._globs import NameGlob, PathGlob
from ._ignore import IGNORE_FILES, IgnoreRules, is_hidden
from ._lines import LineScanner

__all__ = ["WHOLE_READ", "WORKERS", "glob_tree", "grep_file", "grep_tree"]

WORKERS = 8
"""Files read at once."""

WHOLE_READ = 1 << 20
"""Files up to this size are read with one `read_bytes`; larger ones are streamed."""

PARCEL = 16
"""Files handed to a worker at once (a hand-over costs more than a small local read)."""

JOIN_FILE_BYTES = 64 << 10
"""Files up to this size are searched joined with others (see `_scan_joined`)."""

JOIN_BYTES = 256 << 10
"""Bytes of small files a worker joins before searching them."""

MATCHES_PER_CHECKPOINT = 1024
"""Entries glob matches on the event loop between two checkpoints."""

IGNORE_FILE_BYTES = 1 << 20
"""An ignore file larger than this is not read."""


async def glob_tree(fs: FileSystem, root: FsTarget, glob: PathGlob, found: PathCollector) -> None:
    """Every regular file below `root` whose relative path `glob` matches, into `found`.

    Hidden and ignored files count; version-control directories and links do not.
    """

    def descend(path: str) -> bool:
        return path.rpartition("/")[2] not in VCS_DIRECTORIES

    async with fs.walk(root, descend=descend) as batches:
        async for batch in batches:
            for index, entry in enumerate(batch):
                if index % MATCHES_PER_CHECKPOINT == MATCHES_PER_CHECKPOINT - 1:
                    await checkpoint()  # a large directory: let the budget and others in
                if (
                    entry.type is FsFileType.FILE
                    and entry.name not in VCS_DIRECTORIES
                    and glob.matches_file(entry.path)
                ):
                    found.add(entry.path, entry.mtime_ns or 0)


async def grep_file(
    fs: FileSystem, target: FsTarget, size: int, regex: Any, line_bytes: int, keep: int
) -> LineScanner | None:
    """The matching lines of one file; None when it is binary (a NUL byte), or not text
    that can be streamed (invalid UTF-8 in a file over `WHOLE_READ` bytes).

    Raises:
        FsError: the read's errors (`FS_NOT_FOUND`, `FS_PERMISSION_DENIED`, …).
    """
    scanner = LineScanner(regex, line_bytes, keep)
    if size <= WHOLE_READ:
        try:
            data = await fs.read_bytes(target, WHOLE_READ)
        except FsError as error:
            if error.code is not FsErrorCode.TOO_LARGE:
                raise
        else:
            if b"\0" in data and not _foreign(data):
                return None
            if _foreign(data):
                # SPEC §12: a file with a UTF-16 BOM, or one that is no UTF-8 (a rule or a
                # fallback may name its codec), is searched as its read decodes it.
                try:
                    decoded = await fs.read_decoded(target)
                except FsError as error:
                    if error.code is not FsErrorCode.NOT_TEXT:
                        raise
                    return None
                data = decoded.text.removeprefix("\ufeff").encode("utf-8", "surrogatepass")
            scanner.feed(data)
            scanner.finish()
            return scanner
    try:
        async with fs.stream_text(target) as chunks:
            async for chunk in chunks:
                scanner.feed(chunk.encode("utf-8", "surrogatepass"))
    except FsError as error:
        if error.code is FsErrorCode.NOT_TEXT:
            return None
        raise
    scanner.finish()
    return scanner


def _foreign(data: bytes) -> bool:
    """Whether `data` may be text in another encoding than UTF-8: a UTF-16 BOM, or bytes
    without a NUL that are not UTF-8. (A NUL without a BOM stays binary, unread again.)"""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return True
    if b"\0" in data:
        return False
    if data.isascii():
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


async def grep_tree(
    fs: FileSystem,
    root: FsTarget,
    query: FsGrepQuery,
    regex: Any,
    include: NameGlob | None,
    found: MatchCollector,
) -> None:
    """Search every file below `root` that ripgrep would search (see `FsGrepQuery`)."""
    rules = IgnoreRules()
    rules.set_ancestors(await _ancestor_rules(fs, root))

    def descend(path: str) -> bool:
        return not is_hidden(path.rpartition("/")[2]) and not rules.ignored(path, True)

    send, receive = anyio.create_memory_object_stream[list[tuple[str, int]]](WORKERS)

    joinable = _JOIN_UNSAFE.search(query.pattern) is None

    async def worker(parcels: MemoryObjectReceiveStream[list[tuple[str, int]]]) -> None:
        async with parcels:
            async for parcel in parcels:
                await _search_parcel(parcel)

    async def _search_one(rel: str, size: int) -> None:
        try:
            target = await fs.walk_target(root, rel)
            scanner = await grep_file(fs, target, size, regex, query.line_bytes, found.limit)
        except FsError as error:
            if error.code is FsErrorCode.ABORTED:
                raise
            return  # vanished, refused or unnamable since the walk saw it: skipped
        if scanner is not None and scanner.count:
            found.add(rel, scanner.hits, scanner.count)

    async def _search_parcel(parcel: list[tuple[str, int]]) -> None:
        """The parcel's small files read together (`FileSystem.read_many`: concurrent
        requests on an object store), then searched joined (see `_scan_joined`) or one by
        one; larger files are searched alone, streamed beyond `WHOLE_READ`."""
        small: list[tuple[str, int]] = []
        targets: list[FsTarget] = []
        for rel, size in parcel:
            if size > JOIN_FILE_BYTES:
                await _search_one(rel, size)
                continue
            try:
                targets.append(await fs.walk_target(root, rel))
            except FsError as error:
                if error.code is FsErrorCode.ABORTED:
                    raise
                continue  # unnamable since the walk saw it: skipped, as `_search_one` does
            small.append((rel, size))
        texts: list[tuple[str, bytes]] = []
        held = 0
        answers = await fs.read_many(targets, JOIN_FILE_BYTES)
        for (rel, size), answer in zip(small, answers, strict=True):
            if isinstance(answer, FsError):
                if answer.code is FsErrorCode.ABORTED:
                    raise answer
                if answer.code is FsErrorCode.TOO_LARGE:  # grew since the walk saw it
                    await _search_one(rel, size)
                continue  # vanished or refused since the walk saw it: skipped
            if _foreign(answer):
                await _search_one(rel, size)  # decoded as a read decodes it (SPEC §12)
                continue
            if b"\0" in answer:
                continue  # binary
            if not joinable:
                scanner = LineScanner(regex, query.line_bytes, found.limit)
                scanner.feed(answer)
                scanner.finish()
                if scanner.count:
                    found.add(rel, scanner.hits, scanner.count)
                continue
            texts.append((rel, answer))
            held += len(answer)
            if held >= JOIN_BYTES:
                _scan_joined(texts, regex, query.line_bytes, found)
                texts, held = [], 0
        if texts:
            _scan_joined(texts, regex, query.line_bytes, found)

    async with anyio.create_task_group() as workers:
        with receive:
            for _ in range(WORKERS):
                workers.start_soon(worker, receive.clone())
        async with send, fs.walk(root, descend=descend) as batches:
            async for batch in batches:
                files = await _searchable(fs, root, batch, rules, include)
                for start in range(0, len(files), PARCEL):
                    await send.send(files[start : start + PARCEL])


_JOIN_UNSAFE = re.compile(r"\\[Az]|\(\?[a-zA-Z]*-[a-zA-Z]*m")
"""Patterns whose meaning depends on where the searched text starts or ends (``\\A``,
``\\z``, multi-line mode turned off): their files are searched one by one."""


def _scan_joined(
    texts: list[tuple[str, bytes]], regex: Any, line_bytes: int, found: MatchCollector
) -> None:
    """Search several files' texts with one regex call over them joined by newlines, and
    scan alone only the files a match falls in.

    Lines never join across the newline between two files, and ``^``, ``$`` and ``\\b``
    see a newline there as they see a text's start or end, so the leftmost match of the
    joined text is in the first file that has one (`_JOIN_UNSAFE` patterns excepted). Most
    files match nothing: one regex call per few hundred KiB instead of one per file.
    """
    joined = b"\n".join(data for _, data in texts)
    starts: list[int] = []
    offset = 0
    for _, data in texts:
        starts.append(offset)
        offset += len(data) + 1
    pos = 0
    while pos <= len(joined):
        match = regex.search(joined, pos)
        if match is None:
            return
        index = bisect.bisect_right(starts, match.start()) - 1
        rel, data = texts[index]
        scanner = LineScanner(regex, line_bytes, found.limit)
        scanner.feed(data)
        scanner.finish()
        if scanner.count:
            found.add(rel, scanner.hits, scanner.count)
        if index + 1 >= len(texts):
            return
        pos = starts[index + 1]


async def _searchable(
    fs: FileSystem,
    root: FsTarget,
    batch: list[FsWalkEntry],
    rules: IgnoreRules,
    include: NameGlob | None,
) -> list[tuple[str, int]]:
    """The files of one directory's batch to search, once its ignore files are read."""
    directory = batch[0].path.rpartition("/")[0]
    names = {entry.name for entry in batch}
    # An ignore file counts only as a regular file: a link is never followed (a FIFO, a
    # device or a file elsewhere must not decide what grep shows).
    files = {entry.name for entry in batch if entry.type is FsFileType.FILE}
    texts = {}
    for name in rules.wanted(directory, names):
        if name not in files:
            continue
        data = await _read_small(fs, f"{directory}/{name}" if directory else name, root)
        if data is not None:
            texts[name] = data
    rules.add_directory(directory, names, texts)
    return [
        (entry.path, entry.size)
        for entry in batch
        if entry.type is FsFileType.FILE
        and not is_hidden(entry.name)
        and (include is None or include.matches(entry.name))
        and not rules.ignored(entry.path, False)
    ]


async def _read_small(fs: FileSystem, rel: str, root: FsTarget) -> bytes | None:
    try:
        return await fs.read_bytes(await fs.walk_target(root, rel), IGNORE_FILE_BYTES)
    except FsError as error:
        if error.code is FsErrorCode.ABORTED:
            raise
        return None


async def _ancestor_rules(
    fs: FileSystem, root: FsTarget
) -> list[tuple[str, dict[str, bytes], bool]]:
    """The ignore files and ``.git`` of `root`'s parents, nearest first, as far up as the
    provider lets them be read (a sandbox stops at its fence, a bucket at its root)."""
    found: list[tuple[str, dict[str, bytes], bool]] = []
    current, lead = root, ""
    while True:
        try:
            parent = await fs.resolve("..", current.display_path)
            if parent.display_path == current.display_path:
                break
            has_git = await fs.lstat(".git", parent.display_path) is not None
        except FsError as error:
            if error.code is FsErrorCode.ABORTED:
                raise
            break
        lead = current.display_path.rstrip("/").rpartition("/")[2] + "/" + lead
        texts = {}
        for name in IGNORE_FILES:
            info = await fs.lstat(name, parent.display_path)
            if info is None or info.type is not FsFileType.FILE:
                continue  # a link is never followed, a FIFO or a device never opened
            data = await _read_small(fs, name, parent)
            if data is not None:
                texts[name] = data
        found.append((lead, texts, has_git))
        current = parent
    return found
