"""The local provider's native search: the ``rg`` binary of the ``ripgrep`` wheel.

ripgrep runs as a plain argv (no shell), with ``--no-config`` (no configuration file can
add a ``--pre`` command), without following links, in the searched directory. Its output
is parsed in bounded memory: ``--max-columns`` keeps every printed line short, and a file
ripgrep finds to be binary after printing some of its lines is dropped whole. ripgrep holds
a whole line in memory, however long; where the kernel lets a process bound another's
memory (Linux), a grep's ``rg`` gets `RG_GREP_MEMORY` of data, and one that reaches it
(a line of a hundred megabytes) is abandoned for the pure engine, whose memory is bounded
(`NativeSearchAbandoned`). Every file it
reports can be re-checked by the provider's guards (the sandbox fence). The binary is looked
for only where the wheel installs it, next to the running interpreter; without it the
provider has no native search and the tools use their pure engine.

Files in declared encodings (SPEC §12) are searched by ripgrep's own ``--encoding``: one run
per declared codec ripgrep decodes exactly as Python does (`RG_ENCODINGS`), beside the
usual run, and each file's hits are kept only from the run of its own codec (`Encoded`).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import resource
import select
import signal
import stat as st_mode
import subprocess
import sys
import sysconfig
import tempfile
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from contextlib import aclosing, asynccontextmanager
from dataclasses import dataclass
from itertools import compress, islice
from operator import eq
from typing import Literal, TypeVar

import anyio
from anyio import to_thread
from anyio.abc import ByteReceiveStream

from dsh_fs._platform import widen_pipe
from dsh_fs.errors import FsError
from dsh_fs.fs import (
    VCS_DIRECTORIES,
    FsGlobQuery,
    FsGrepHit,
    FsGrepQuery,
    NativeSearchAbandoned,
    bom_encoding,
    messages,
)

from .._oserrors import map_os_errors
from .._text import round_trip
from ._guards import LocalGuards
from ._open import fd_path, open_regular
from ._ripgrep_ignore import IgnoreListings, IgnorePlan, ignore_plan, read_ignore_file, rebased

__all__ = [
    "RG_ENCODINGS",
    "RG_GREP_MEMORY",
    "Encoded",
    "closing",
    "find_rg",
    "rg_glob",
    "rg_grep",
]

_T = TypeVar("_T")

_READ = 256 * 1024
_STDERR_KEPT = 16 * 1024
_BINARY = re.compile(
    rb"(.*): WARNING: stopped searching binary file after match "
    rb'\(found "\\0" byte around offset \d+\)',
    re.DOTALL,
)
_OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
_PATTERN_ERRORS = (b"regex parse error", b"error parsing glob", b"not allowed in a regex")

RG_GREP_MEMORY = 256 << 20
"""The data (heap and private mappings) a grep's ``rg`` may hold: a line buffer for lines of
up to about a hundred megabytes, beside ripgrep's at most 12 threads' stacks."""


RG_ENCODINGS: Mapping[str, str] = {
    "cp1252": "windows-1252",
    "cp1250": "windows-1250",
    "cp1251": "windows-1251",
    "cp1253": "windows-1253",
    "cp1254": "windows-1254",
    "cp1255": "windows-1255",
    "cp1256": "windows-1256",
    "cp1257": "windows-1257",
    "cp1258": "windows-1258",
    "cp874": "windows-874",
    "cp866": "ibm866",
    "iso8859-2": "iso-8859-2",
    "iso8859-5": "iso-8859-5",
    "iso8859-7": "iso-8859-7",
    "iso8859-15": "iso-8859-15",
    "koi8-r": "koi8-r",
    "mac-roman": "macintosh",
    "gbk": "gbk",
    "euc_kr": "euc-kr",
    "cp949": "euc-kr",
}
"""Python's codecs (canonical names) that ripgrep's ``--encoding`` (WHATWG's, by these
labels) decodes to the same text for every file that passes the round-trip proof; checked
character by character against the ``rg`` installed (tests/providers/test_ripgrep_encodings).
Not here, so searched by the pure engine: ``latin-1`` (WHATWG reads it as windows-1252),
``shift_jis``, ``euc_jp``, ``big5``, ``cp932``, ``gb18030`` and ``koi8-u`` (WHATWG maps a few
characters elsewhere: ``〜``, ``‖``, ``−``…), UTF-16 without a BOM, and every other codec."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Encoded:
    """A grep over a tree with declared encodings (SPEC §12): the codecs of `RG_ENCODINGS`
    the rules name get a ripgrep run each, and a file's hits are kept only from the run
    of its own codec (its UTF-16 BOM's, else `codec_of`'s; the usual run: UTF-8 and BOMs)."""

    codecs: tuple[str, ...]
    """The declared codecs, each a key of `RG_ENCODINGS`."""
    codec_of: Callable[[str], str | None]
    """The codec declared for a path relative to the searched directory (None: none, or
    UTF-8); blocking. One outside `codecs` (an ``.editorconfig``'s) abandons the search."""
    editorconfig_above: Callable[[], bool] | None = None
    """Whether an ``.editorconfig`` lies between the root and the searched directory, when
    they count (None: they don't); blocking. One there or below abandons the search: its
    ``charset`` may name a codec not in `RG_ENCODINGS` for files with no hit in any run."""


@functools.cache
def find_rg() -> str | None:
    """The ``rg`` binary the ``ripgrep`` wheel installed for this interpreter, if any."""
    name = "rg.exe" if sys.platform == "win32" else "rg"
    places = [sysconfig.get_path("scripts"), os.path.dirname(sys.executable)]
    for place in places:
        candidate = os.path.join(place, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def _environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("RIPGREP_")}


def _grep_argv(
    binary: str,
    query: FsGrepQuery,
    ignore_file: str | None,
    where: str,
    codec: str | None = None,
) -> list[str]:
    argv = [
        binary,
        "--no-config",
        "--color=never",
        "--no-heading",
        "--with-filename",
        "--line-number",
        "--null",
        "--case-sensitive",
        # ripgrep reads no ignore file itself: only the vetted copy (`_ripgrep_ignore`).
        "--no-ignore",
        f"--max-columns={query.line_bytes + 64}",
        "--max-columns-preview",
        # A file of the include type would be searched even when hidden (types whitelist):
        # hidden names stay out, as in the pure engine.
        "--glob=!.*",
        f"--regexp={query.pattern}",
    ]
    if codec is not None:
        argv.append(f"--encoding={RG_ENCODINGS[codec]}")
    if ignore_file is not None:
        argv.append(f"--ignore-file={ignore_file}")
    # Denied paths (path rules) are never opened: overrides, stronger than any ignore rule.
    lead = where if where != "." else ""
    argv += [f"--glob=!{line}" for line in _excluded(query.excluded, lead)]
    if query.include is not None:
        argv += [f"--type-add=dshinclude:{query.include}", "--type=dshinclude"]
    return [*argv, "--", where]


@asynccontextmanager
async def _vetted_rules(
    root: str, display: str, guards: LocalGuards, listings: IgnoreListings
) -> AsyncIterator[tuple[IgnorePlan, str | None]]:
    """The ignore plan of a grep below `root`, and its rules in a private file (removed
    when the block is left), or None when there are none."""

    # The ignore files are found by a walk of names in this process, or proven unchanged
    # since the last one (`IgnoreListings`), not by a ripgrep run of their own: ripgrep
    # walks the tree once, to search.
    def plan_below() -> IgnorePlan:
        found = listings.found(root, lambda path: read_ignore_file(path, display, guards))
        return ignore_plan(root, display, guards, found)

    plan = await to_thread.run_sync(plan_below)
    if not plan.rules:
        yield plan, None
        return
    fd, name = tempfile.mkstemp(prefix="dsh-fs-ignore-")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(plan.rules)
        yield plan, name
    finally:
        os.unlink(name)


def _glob_argv(binary: str, query: FsGlobQuery) -> list[str]:
    # No --sort=modified: it makes ripgrep walk on one thread and stat every file there;
    # the parallel listing is ordered here, from stats taken while ripgrep still walks.
    argv = [binary, "--no-config", "--files", "--null", "--no-ignore", "--hidden"]
    argv.append(f"--glob={query.pattern}")
    for name in VCS_DIRECTORIES:
        argv += [f"--glob=!**/{name}", f"--glob=!**/{name}/**"]
    # Denied paths (path rules) are never listed: after the pattern, so they win over it.
    argv += [f"--glob=!{line}" for line in _excluded(query.excluded, "")]
    return [*argv, "--", "."]


def _excluded(lines: tuple[str, ...], lead: str) -> list[str]:
    """A query's exclusions (relative to the searched directory) as globs of the directory
    ripgrep runs in (`lead`: the searched directory from there); none can name it when
    `lead` has a line break."""
    if not lead:
        return list(lines)
    if "\n" in lead or "\r" in lead:
        return []
    return [rebased(line, lead) for line in lines]


def rg_grep(
    binary: str,
    root: str,
    display: str,
    query: FsGrepQuery,
    guards: LocalGuards,
    encoded: Encoded | None = None,
    listings: IgnoreListings | None = None,
) -> AsyncGenerator[list[FsGrepHit], None] | None:
    """Hits of `query` below the real directory `root`, one batch per file (per codec run
    when `encoded`); None when the query can't be given to ripgrep as is (an include with
    ``:`` would be read as part of ripgrep's type definition syntax). The ignore files
    are found again unless `listings` (the provider's) proves its last walk still holds."""
    if query.include is not None and ":" in query.include:
        return None
    kept = listings if listings is not None else IgnoreListings()
    return _grep(binary, root, display, query, guards, encoded, kept)


async def _grep(
    binary: str,
    root: str,
    display: str,
    query: FsGrepQuery,
    guards: LocalGuards,
    encoded: Encoded | None,
    listings: IgnoreListings,
) -> AsyncGenerator[list[FsGrepHit], None]:
    async with _vetted_rules(root, display, guards, listings) as (plan, ignore_file):
        if encoded is not None and encoded.editorconfig_above is not None:
            await _no_editorconfig(binary, plan, display, encoded.editorconfig_above)
        if encoded is not None and encoded.codecs:
            await _no_utf8_bom_in_a_codec(binary, plan, root, display, guards, encoded)
        runs: tuple[str | None, ...] = (None, *encoded.codecs) if encoded is not None else (None,)
        for codec in runs:
            argv = _grep_argv(binary, query, ignore_file, plan.lead or ".", codec)
            run = _run(argv, plan, root, display, query, guards, encoded, codec)
            # Closed here when the consumer stops early: its ripgrep is killed in this task.
            async with aclosing(run):
                async for batch in run:
                    yield batch


async def _no_editorconfig(
    binary: str, plan: IgnorePlan, display: str, above: Callable[[], bool]
) -> None:
    """Returns when no ``.editorconfig`` can declare a codec for a file of the search.

    Raises:
        NativeSearchAbandoned: one is above the searched directory (below its root) or
            below it.
    """
    found = await to_thread.run_sync(above)
    if not found:
        argv = [binary, "--no-config", "--files", "--no-ignore", "--null"]
        argv += ["--glob=.editorconfig", "--", plan.lead or "."]
        async with _running(argv, plan.cwd, display, "") as stdout:
            async for chunk in stdout:
                found = found or bool(chunk)
    if found:
        raise NativeSearchAbandoned("an .editorconfig may declare a codec ripgrep can't decode")


async def _no_utf8_bom_in_a_codec(
    binary: str,
    plan: IgnorePlan,
    root: str,
    display: str,
    guards: LocalGuards,
    encoded: Encoded,
) -> None:
    """Returns when no file below the search has a UTF-8 BOM and a rule naming another
    codec: the rule wins (the BOM's bytes are text, ``ï»¿`` in cp1252, SPEC §12), but
    ripgrep strips a BOM it sniffs, so its first line would not be the one a read shows,
    with or without a hit there. Only the first three bytes of each file a rule declares
    are read (the names from ``rg --files``).

    Raises:
        NativeSearchAbandoned: such a file is there (the pure engine searches instead).
    """
    argv = [binary, "--no-config", "--files", "--no-ignore", "--null", "--glob=!.*"]
    argv += ["--", plan.lead or "."]
    names = bytearray()
    async with _running(argv, plan.cwd, display, "") as stdout:
        async for chunk in stdout:
            names += chunk
    lead = os.fsencode(plan.lead + "/") if plan.lead else b""
    rels = [os.fsdecode(raw.removeprefix(lead)) for raw in bytes(names).split(b"\0") if raw]

    def any_bom() -> bool:
        for rel in rels:
            declared = encoded.codec_of(rel)
            if declared is None or declared in ("utf-8", "utf-8-sig"):
                continue
            try:
                opened = open_regular(os.path.join(root, rel), "search", display, guards)
            except (FsError, OSError, ValueError):
                continue  # gone, or not a regular file: not searched either
            try:
                head = os.pread(opened.fd, 3, 0)
            except OSError:
                continue
            finally:
                os.close(opened.fd)
            bom = bom_encoding(head)
            if bom is not None and bom.utf8:
                return True
        return False

    if await to_thread.run_sync(any_bom):
        raise NativeSearchAbandoned("a UTF-8 BOM on a file a rule reads in another codec")


async def _run(
    argv: list[str],
    plan: IgnorePlan,
    root: str,
    display: str,
    query: FsGrepQuery,
    guards: LocalGuards,
    encoded: Encoded | None,
    codec: str | None,
) -> AsyncGenerator[list[FsGrepHit], None]:
    """The batches of one ripgrep run (in `codec`; None: the usual run)."""
    pending: tuple[bytes, list[FsGrepHit]] | None = None
    lead = os.fsencode(plan.lead + "/") if plan.lead else b""
    line_bytes = query.line_bytes
    running = _running(argv, plan.cwd, display, query.pattern, memory=RG_GREP_MEMORY)
    async with running as stdout:
        async for record in _records(stdout, line_bytes):
            if isinstance(record, bytes):  # a binary file found after some of its lines
                if pending is not None and pending[0] == record.removeprefix(lead):
                    pending = None
                continue
            path, hit = record
            if lead:  # ripgrep ran in a parent: its paths start with the root's
                path = path.removeprefix(lead)
                hit = dataclasses.replace(hit, path=os.fsdecode(path))
            if pending is not None and pending[0] != path:
                batch = await _checked(root, display, pending, guards, line_bytes, encoded, codec)
                if batch:
                    yield batch
                pending = None
            if pending is None:
                pending = (path, [])
            pending[1].append(hit)
        if pending is not None:
            batch = await _checked(root, display, pending, guards, line_bytes, encoded, codec)
            if batch:
                yield batch


async def _checked(
    root: str,
    display: str,
    pending: tuple[bytes, list[FsGrepHit]],
    guards: LocalGuards,
    line_bytes: int,
    encoded: Encoded | None = None,
    codec: str | None = None,
) -> list[FsGrepHit]:
    """The hits ripgrep reported for one file, when the guards confine reads: the file is
    opened through them (its kernel path proven inside the fence before a byte is read),
    and each reported line is read again through that descriptor; only the lines ripgrep's
    match equals are reported, as read here. A file swapped meanwhile (for a link to
    elsewhere, or with a directory above it) is refused or shows other lines: its hits are
    dropped, never shown, and never an error.

    With declared encodings (`encoded`), a file's hits count only from the run of its own
    `codec`; in a codec's run they are always read again, as its text in Python's codec
    (a file that fails the round-trip proof is not text, as the pure engine finds it)."""
    raw, hits = pending
    if encoded is None and not guards.confined:
        return hits
    return await to_thread.run_sync(
        _reread, root, display, raw, hits, guards, line_bytes, encoded, codec
    )


def _reread(
    root: str,
    display: str,
    raw: bytes,
    hits: list[FsGrepHit],
    guards: LocalGuards,
    line_bytes: int,
    encoded: Encoded | None = None,
    codec: str | None = None,
) -> list[FsGrepHit]:
    key = os.path.join(os.fsencode(root), raw)
    try:
        opened = open_regular(os.fsdecode(key), "search", display, guards)
    except (FsError, OSError, ValueError):
        return []  # gone, not a regular file, or outside the fence: nothing of it is shown
    try:
        if guards.confined and not guards.may_see(opened.path):
            return []
        if encoded is not None:
            if _owner(opened.fd, os.fsdecode(raw), encoded) != codec:
                return []  # another run's file: its own codec's run reports it
            if codec is None and not guards.confined:
                return hits
        read = _reader(opened.fd, codec)
        lines = _lines_at(read, [hit.line_number for hit in hits], line_bytes)
    except OSError:
        return []
    finally:
        os.close(opened.fd)
    kept = []
    for hit in hits:
        line = lines.get(hit.line_number)
        if line is not None and line == (hit.line, hit.truncated):
            kept.append(hit)
    return kept


def _owner(fd: int, rel: str, encoded: Encoded) -> str | None:
    """The run whose hits of the open file count (SPEC §12, as a read decodes it): None
    (the usual run) for a UTF-16 BOM or no declared codec, else its declared codec.

    Raises:
        NativeSearchAbandoned: a codec ripgrep is not trusted with (`RG_ENCODINGS`): the
            pure engine searches instead.
    """
    bom = bom_encoding(os.pread(fd, 3, 0))
    if bom is not None and not bom.utf8:
        return None
    declared = encoded.codec_of(rel)
    if declared is None or declared in ("utf-8", "utf-8-sig"):
        return None
    if declared not in RG_ENCODINGS:
        raise NativeSearchAbandoned(f"{declared} is not a codec ripgrep decodes as Python")
    if bom is not None:
        # A UTF-8 BOM on a file its rule reads in another codec: the rule wins (its three
        # bytes are text, "ï»¿" in cp1252), but ripgrep strips a BOM it sniffs, so its
        # first line is not the one a read shows (nor are matches against it).
        raise NativeSearchAbandoned(f"a UTF-8 BOM on a file declared {declared}")
    return declared


def _reader(fd: int, codec: str | None = None) -> Callable[[], bytes]:
    """Reads of the open file's text as ripgrep searched it: its bytes, or for a file with a
    UTF-16 BOM (which ripgrep transcodes, SPEC §12) its text as UTF-8 without the BOM, or
    in a declared `codec`'s run its text as UTF-8 (nothing when it fails the proof)."""
    bom = bom_encoding(os.pread(fd, 2, 0))
    if codec is None and (bom is None or bom.utf8):
        return lambda: os.read(fd, _READ)
    data = bytearray()
    while chunk := os.read(fd, _READ):
        data += chunk
    if codec is not None:
        text = round_trip(data, codec)
        chunks = [b""] if text is None else [text.encode("utf-8", "surrogatepass"), b""]
        return lambda: chunks.pop(0) if chunks else b""
    assert bom is not None
    text = round_trip(data, bom.codec)
    chunks = [b""] if text is None else [text[1:].encode("utf-8", "surrogatepass"), b""]
    return lambda: chunks.pop(0) if chunks else b""


def _lines_at(
    read: Callable[[], bytes], numbers: list[int], line_bytes: int
) -> dict[int, tuple[bytes, bool]]:
    """Lines `numbers` (1-based, ascending) of the open file, as `FsGrepHit` keeps them (cut
    to `line_bytes` bytes, without the terminator and a ``\\r`` before it), read in bounded
    memory (`read` gives its next chunk; empty at its end)."""
    wanted = set(numbers)
    last = max(numbers)
    found: dict[int, tuple[bytes, bool]] = {}
    number = 1
    current = bytearray()
    length = 0  # of the current line, beyond what is kept
    while number <= last:
        chunk = read()
        if not chunk:
            break
        start = 0
        while start <= len(chunk) and number <= last:
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            if number in wanted and len(current) <= line_bytes + 1:
                current += piece[: line_bytes + 2 - len(current)]
            length += len(piece)
            if end < 0:
                break
            if number in wanted:
                found[number] = _kept_line(bytes(current), length, line_bytes)
            current.clear()
            length = 0
            number += 1
            start = end + 1
    if number in wanted and number <= last and length:  # the last line has no terminator
        found[number] = _kept_line(bytes(current), length, line_bytes)
    return found


def _kept_line(head: bytes, length: int, line_bytes: int) -> tuple[bytes, bool]:
    """A line as `_parse` keeps ripgrep's: `head` its first bytes, `length` its length."""
    if length <= line_bytes + 1 and head.endswith(b"\r"):
        head, length = head[:-1], length - 1
    return head[:line_bytes], length > line_bytes


async def _records(
    stdout: ByteReceiveStream, line_bytes: int
) -> AsyncGenerator[bytes | tuple[bytes, FsGrepHit], None]:
    """``path NUL number : line LF`` records, or the path of a binary-file warning."""
    buffer = bytearray()
    async for chunk in stdout:
        buffer += chunk
        start = 0
        while True:
            parsed = _parse(buffer, start, line_bytes)
            if parsed is None:
                break
            record, start = parsed
            yield record
        del buffer[:start]
    if buffer:
        raise messages.io_error("search", "rg", "truncated ripgrep output")


_Record = bytes | tuple[bytes, FsGrepHit]


def _parse(buffer: bytearray, start: int, line_bytes: int) -> tuple[_Record, int] | None:
    """The record at `start` and the index after it; None until it is complete."""
    nul = buffer.find(b"\0", start)
    newline = buffer.find(b"\n", start)
    if newline < 0:
        return None
    if nul < 0 or newline < nul:
        warning = _BINARY.fullmatch(bytes(buffer[start:newline]))
        if warning is not None:
            return _relative(warning.group(1)), newline + 1
        if nul < 0:
            return None  # a path with a newline in it: wait for its NUL
    colon = buffer.find(b":", nul + 1)
    if colon < 0:
        return None
    end = buffer.find(b"\n", colon + 1)
    if end < 0:
        return None
    path = _relative(bytes(buffer[start:nul]))
    line = bytes(buffer[colon + 1 : end])
    if line.endswith(b"\r"):
        line = line[:-1]
    hit = FsGrepHit(
        path=os.fsdecode(path),
        line_number=int(buffer[nul + 1 : colon]),
        line=line[:line_bytes],
        truncated=len(line) > line_bytes,
    )
    return (path, hit), end + 1


def _relative(path: bytes) -> bytes:
    return path[2:] if path.startswith(b"./") else path


def rg_glob(
    binary: str, root: str, display: str, query: FsGlobQuery, guards: LocalGuards
) -> AsyncGenerator[list[str], None]:
    """Paths of the files matching `query` below the real directory `root`, oldest first,
    files with the same modification time in path order (component by component, as the
    pure engine orders them)."""
    return _glob(binary, root, display, query, guards)


_GLOB_BATCH = 4096
"""Paths per batch of an ordered glob's answer."""


async def _glob(
    binary: str, root: str, display: str, query: FsGlobQuery, guards: LocalGuards
) -> AsyncGenerator[list[str], None]:
    argv = _glob_argv(binary, query)
    # ripgrep walks on one thread: the stats cost about as much as its walk, so it takes
    # one core and the stat thread the other. In parallel it would fight that thread for
    # them and spend more CPU on the same listing (bench tree: 46.5 ms against 58.5 ms).
    argv.insert(1, "--threads=1")
    stamper = _Stamper(root, guards)
    try:
        with map_os_errors("search", display):
            await to_thread.run_sync(stamper.run, argv, abandon_on_cancel=True)
    except BaseException:
        # Cancelled (the time budget, the client): ripgrep is killed and a thread under way
        # is waited for, so that nothing is stat-ed or left running once the glob has ended.
        if stamper.abandon() and not stamper.ended.is_set():
            with anyio.CancelScope(shield=True):
                await to_thread.run_sync(stamper.ended.wait)
        raise
    assert stamper.returncode is not None
    _check_exit(stamper.returncode, bytes(stamper.errors), display, query.pattern)
    ordered = stamper.ordered
    for start in range(0, len(ordered), _GLOB_BATCH):
        yield ordered[start : start + _GLOB_BATCH]


_LISTING_PIPE = 1 << 20
"""The pipe buffer asked for a glob's ripgrep: it seldom waits for the stat thread to read
(the bench tree's listing is 736 KB)."""


class _Stamper:
    """One worker thread's glob listing: it runs ripgrep, reads its output as it comes and
    stats each path printed whole (`_stamped`).

    The thread reads the pipe itself, so the event loop waits for the thread and for
    nothing else: no piece of output is handed between threads, and the loop never takes
    the GIL from the stats while ripgrep prints. One stat thread, not several: each stat
    releases the GIL and takes it back, and another thread wanting it meanwhile turns that
    into a hand-over (four stat threads cost 100-200 ms of CPU a glob of the bench tree, one
    76-94 ms, at load 12). ripgrep is started by `subprocess` itself: no child-watcher
    thread and no transport, as an event loop's process has."""

    __slots__ = (
        "_abandoned",
        "_began",
        "_guards",
        "_lock",
        "_process",
        "_rest",
        "_root",
        "ended",
        "errors",
        "ordered",
        "paths",
        "returncode",
        "times",
    )

    def __init__(self, root: str, guards: LocalGuards) -> None:
        self._root = root
        self._guards = guards
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._began = False
        self._abandoned = False
        self._rest = b""
        self.ended = threading.Event()
        """Set when `run` returns (its ripgrep reaped)."""
        self.errors = bytearray()
        """The start of what ripgrep wrote to its standard error."""
        self.returncode: int | None = None
        """ripgrep's exit status once its output was read whole (None when abandoned)."""
        self.times: list[int] = []
        """The modification times of the regular files listed, as `paths` lists them."""
        self.paths: list[str] = []
        """The regular files listed, relative to the root (see `_stamped`)."""
        self.ordered: list[str] = []
        """`paths` oldest first once ripgrep's output was read whole (`_oldest_first`)."""

    def feed(self, piece: bytes) -> None:
        """Stat the paths ripgrep's output completes with `piece`; one cut at its end waits
        for the next piece."""
        printed = self._rest + piece
        end = printed.rfind(b"\0")
        if end >= 0:
            times, paths = _stamped(self._root, printed[:end], self._guards)
            self.times += times
            self.paths += paths
        self._rest = printed[end + 1 :]

    def abandon(self) -> bool:
        """The listing is not wanted: ripgrep is killed, and `run` returns without another
        stat (after the piece of output it is stat-ing), or at once if it has not begun.
        True when `run` has begun: `ended` will be set."""
        with self._lock:
            self._abandoned = True
            # Killed only while `run` has not taken it back to reap it: a pid that could be
            # reused is never signalled.
            if self._process is not None:
                self._process.kill()
            return self._began

    def run(self, argv: list[str]) -> None:
        """Run ripgrep (`argv`, in the root) and stat what it prints (in a worker thread)."""
        try:
            with self._lock:
                if self._abandoned:
                    return
                self._began = True
            process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self._root,
                env=_environment(),
            )
            with self._lock:
                self._process = process
            finished = False
            with process:  # its pipes closed and it reaped on the way out
                try:
                    self._read(process)  # at once when abandoned while it started
                    finished = not self._abandoned
                finally:
                    with self._lock:
                        self._process = None
                    if not finished:
                        process.kill()
            if finished:
                self.returncode = process.returncode
                # Ordered here, not on the event loop: a large listing would hold up every
                # other call it serves.
                self.ordered = _oldest_first(self.times, self.paths)
        finally:
            self.ended.set()

    def _read(self, process: subprocess.Popen[bytes]) -> None:
        """Feed ripgrep's output until it and its standard error end (or the listing is
        abandoned)."""
        assert process.stdout is not None
        assert process.stderr is not None
        out, err = process.stdout.fileno(), process.stderr.fileno()
        widen_pipe(out, _LISTING_PIPE)
        # Both pipes at once: ripgrep blocked on a full standard error would never end its
        # output.
        poller = select.poll()
        poller.register(out, select.POLLIN)
        poller.register(err, select.POLLIN)
        open_ends = 2
        while open_ends and not self._abandoned:
            for fd, _ in poller.poll():
                data = os.read(fd, _READ)
                if not data:
                    poller.unregister(fd)
                    open_ends -= 1
                elif fd == err:
                    self.errors += data[: max(0, _STDERR_KEPT - len(self.errors))]
                else:
                    self.feed(data)


def _oldest_first(times: list[int], paths: list[str]) -> list[str]:
    """`paths` (each modified at the time at its index in `times`) oldest first, and files
    with the same time in path order component by component (``a/b`` before ``a-b``, as
    `discovery`'s collector ranks them). Sorted at C speed by time (no tuple per path), and
    only the runs of equal times (found at C speed) sorted again by their paths'
    `_component_key`: no Python step per path unless its time is another's."""
    order = sorted(range(len(times)), key=times.__getitem__)
    ordered = list(map(paths.__getitem__, order))
    times = list(map(times.__getitem__, order))
    tied = list(compress(range(len(times) - 1), map(eq, times, islice(times, 1, None))))
    start = -1
    for position, index in enumerate(tied):
        if start < 0:
            start = index
        if position + 1 == len(tied) or tied[position + 1] != index + 1:
            # The run of one time, `start` to `index + 1`, ends here.
            ordered[start : index + 2] = sorted(ordered[start : index + 2], key=_component_key)
            start = -1
    return ordered


def _component_key(path: str) -> str:
    """`path` with NUL for ``/`` (which no path holds): its order is component by
    component."""
    return path.replace("/", "\0")


def _relative_paths(text: str) -> list[str]:
    """The NUL-separated paths ripgrep printed below ``.``, without their ``./``: one split
    at C speed when every path has it (it does: ripgrep joins them to ``.``)."""
    paths = text[2:].split("\0./") if text.startswith("./") else []
    if len(paths) != text.count("\0") + 1:
        paths = [name[2:] if name.startswith("./") else name for name in text.split("\0")]
    return paths


def _stamped(root: str, printed: bytes, guards: LocalGuards) -> tuple[list[int], list[str]]:
    """The modification times and paths of the regular files among those ripgrep
    `printed` (NUL-separated, relative to `root`).

    When the guards confine reads, only those proven to be inside the fence now: each
    directory is opened without following a final link, its kernel path must be exactly
    the expected one and one the guards may see, and the name must be a regular file in
    that very directory. A name ripgrep listed from a directory swapped for a link to
    elsewhere (or back), or one gone since, is dropped, never shown, and never an error."""
    batch = _relative_paths(os.fsdecode(printed))
    if not guards.confined:
        return _stamped_below(root, batch)
    directories: dict[str, int | None] = {}
    times: list[int] = []
    kept: list[str] = []
    try:
        for rel in batch:
            head, _, name = rel.rpartition("/")
            fd = directories.get(head, -1)
            if fd == -1:
                fd = directories[head] = _open_proven(root, head, guards)
            if fd is None:
                continue
            try:
                info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except (OSError, ValueError):
                continue
            if st_mode.S_ISREG(info.st_mode):
                times.append(info.st_mtime_ns)
                kept.append(rel)
    finally:
        for fd in directories.values():
            if fd is not None and fd >= 0:
                os.close(fd)
    return times, kept


def _stamped_below(root: str, batch: list[str]) -> tuple[list[int], list[str]]:
    """`_stamped` without a fence: each file stat-ed by its path below `root`."""
    try:
        fd = os.open(root, _OPEN_DIR)
    except (OSError, ValueError):
        return [], []
    times: list[int] = []
    kept: list[str] = []
    stat, regular = os.stat, st_mode.S_ISREG
    try:
        # A plain loop: a call with keywords costs less here than through a `partial` (it
        # copies its keywords for every call), and each result is freed before the next
        # stat, so their memory stays in the CPU's caches (bench tree: 56 -> 50 ms of CPU).
        for rel in batch:
            try:
                info = stat(rel, dir_fd=fd, follow_symlinks=False)
            except (OSError, ValueError):
                continue
            if regular(info.st_mode):
                times.append(info.st_mtime_ns)
                kept.append(rel)
    finally:
        os.close(fd)
    return times, kept


def _open_proven(root: str, head: str, guards: LocalGuards) -> int | None:
    expected = os.path.join(root, head) if head else root
    try:
        fd = os.open(expected, _OPEN_DIR)
    except (OSError, ValueError):
        return None
    try:
        real = fd_path(fd, expected)
        if real == os.path.normpath(expected) and guards.may_see(real):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


@asynccontextmanager
async def _running(
    argv: list[str], root: str, display: str, pattern: str, *, memory: int | None = None
) -> AsyncIterator[ByteReceiveStream]:
    """Run ripgrep in `root`; yields its stdout. Leaving the block (or being cancelled)
    kills it; an error it reports about the pattern is `SEARCH_INVALID_PATTERN`; with a
    `memory` bound (bytes of data), reaching it is `NativeSearchAbandoned`."""
    with map_os_errors("search", display):
        process = await anyio.open_process(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=root,
            env=_environment(),
        )
    bounded = memory is not None and _bound_memory(process.pid, memory)
    errors = bytearray()
    finished = False
    # The block's exception (GeneratorExit when a consumer stops early, a cancellation) is
    # kept aside and raised after the task group, which would wrap it in a group.
    failure: BaseException | None = None
    try:
        assert process.stdout is not None
        assert process.stderr is not None
        async with anyio.create_task_group() as group:
            group.start_soon(_drain, process.stderr, errors)
            try:
                yield process.stdout
                await process.wait()
                finished = True
            except BaseException as exc:
                failure = exc
                group.cancel_scope.cancel()
        if failure is not None:
            raise failure
    finally:
        with anyio.CancelScope(shield=True):
            if process.returncode is None:
                process.kill()
            await process.aclose()
    if finished and process.returncode is not None:
        if bounded and process.returncode == -signal.SIGABRT:  # an allocation it was refused
            raise NativeSearchAbandoned(f"ripgrep stopped at its memory bound: {memory} bytes")
        _check_exit(process.returncode, bytes(errors), display, pattern)


def _check_exit(returncode: int, errors: bytes, display: str, pattern: str) -> None:
    """What ripgrep's exit status and standard error say: an error it reports about the
    pattern is `SEARCH_INVALID_PATTERN`, another failure `FS_IO_ERROR`."""
    if returncode in (0, 1):
        return
    if any(marker in errors for marker in _PATTERN_ERRORS):
        kind: Literal["regex", "glob"] = "glob" if b"error parsing glob" in errors else "regex"
        raise messages.invalid_pattern(kind, pattern, _reason(errors))
    if returncode != 2:  # 2: some files could not be read; the rest was searched
        raise messages.io_error("search", display, f"ripgrep failed: {_reason(errors)}")


def _bound_memory(pid: int, memory: int) -> bool:
    """Bound the data of the running process `pid` to `memory` bytes; False where this
    kernel can't (no ``prlimit``: not Linux). ripgrep allocates its line buffer as it reads,
    so a bound set just after it starts holds for every line it reads."""
    prlimit = getattr(resource, "prlimit", None)
    if prlimit is None:
        return False
    try:
        prlimit(pid, resource.RLIMIT_DATA, (memory, memory))
    except (OSError, ValueError):  # gone already, or a hard limit below the bound
        return False
    return True


@asynccontextmanager
async def closing(batches: AsyncGenerator[_T, None]) -> AsyncIterator[AsyncGenerator[_T, None]]:
    """`batches`, closed (its ripgrep killed) when the block is left."""
    try:
        yield batches
    finally:
        await batches.aclose()


def _reason(errors: bytes) -> str:
    lines = [line.strip() for line in errors.decode("utf-8", "replace").splitlines()]
    meaningful = [line for line in lines if line and not line.startswith("rg:")] or lines
    return meaningful[-1] if meaningful else "refused by ripgrep"


async def _drain(stream: ByteReceiveStream, kept: bytearray) -> None:
    async for chunk in stream:
        if len(kept) < _STDERR_KEPT:
            kept += chunk[: _STDERR_KEPT - len(kept)]
