"""The local provider's native search: the ``rg`` binary of the ``ripgrep`` wheel.

ripgrep runs as a plain argv (no shell), with ``--no-config`` (no configuration file can
add a ``--pre`` command), without following links, in the searched directory. Its output
is parsed in bounded memory: ``--max-columns`` keeps every printed line short, and a file
ripgrep finds to be binary after printing some of its lines is dropped whole. Every file it
reports can be re-checked by the provider's guards (the sandbox fence). The binary is looked
for only where the wheel installs it, next to the running interpreter; without it the
provider has no native search and the tools use their pure engine.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
import sysconfig
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import asynccontextmanager
from typing import Literal, TypeVar

import anyio
from anyio.abc import ByteReceiveStream

from dsh_fs.fs import VCS_DIRECTORIES, FsGlobQuery, FsGrepHit, FsGrepQuery, messages

from .._oserrors import map_os_errors
from ._guards import LocalGuards

__all__ = ["closing", "find_rg", "rg_glob", "rg_grep"]

_T = TypeVar("_T")

_READ = 256 * 1024
_STDERR_KEPT = 16 * 1024
_BINARY = re.compile(
    rb"(.*): WARNING: stopped searching binary file after match "
    rb'\(found "\\0" byte around offset \d+\)',
    re.DOTALL,
)
_PATTERN_ERRORS = (b"regex parse error", b"error parsing glob", b"not allowed in a regex")


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


def _grep_argv(binary: str, query: FsGrepQuery) -> list[str]:
    argv = [
        binary,
        "--no-config",
        "--color=never",
        "--no-heading",
        "--with-filename",
        "--line-number",
        "--null",
        "--case-sensitive",
        "--no-ignore-global",
        "--no-ignore-exclude",
        f"--max-columns={query.line_bytes + 64}",
        "--max-columns-preview",
        # A file of the include type would be searched even when hidden (types whitelist):
        # hidden names stay out, as in the pure engine.
        "--glob=!.*",
        f"--regexp={query.pattern}",
    ]
    if query.include is not None:
        argv += [f"--type-add=dshinclude:{query.include}", "--type=dshinclude"]
    return [*argv, "--", "."]


def _glob_argv(binary: str, query: FsGlobQuery) -> list[str]:
    # --sort=modified: ripgrep stats every file itself, faster than one lstat per path
    # here, and lists them oldest first, as glob shows them.
    argv = [binary, "--no-config", "--files", "--null", "--no-ignore", "--hidden"]
    argv.append("--sort=modified")
    argv.append(f"--glob={query.pattern}")
    for name in VCS_DIRECTORIES:
        argv += [f"--glob=!**/{name}", f"--glob=!**/{name}/**"]
    return [*argv, "--", "."]


def rg_grep(
    binary: str, root: str, display: str, query: FsGrepQuery, guards: LocalGuards
) -> AsyncGenerator[list[FsGrepHit], None] | None:
    """Hits of `query` below the real directory `root`, one batch per file; None when the
    query can't be given to ripgrep as is (an include with ``:`` would be read as part of
    ripgrep's type definition syntax)."""
    if query.include is not None and ":" in query.include:
        return None
    return _grep(binary, root, display, query, guards)


async def _grep(
    binary: str, root: str, display: str, query: FsGrepQuery, guards: LocalGuards
) -> AsyncGenerator[list[FsGrepHit], None]:
    pending: tuple[bytes, list[FsGrepHit]] | None = None
    async with _running(_grep_argv(binary, query), root, display, query.pattern) as stdout:
        async for record in _records(stdout, query.line_bytes):
            if isinstance(record, bytes):  # a binary file found after some of its lines
                if pending is not None and pending[0] == record:
                    pending = None
                continue
            path, hit = record
            if pending is not None and pending[0] != path:
                batch = _checked(root, pending, guards)
                if batch:
                    yield batch
                pending = None
            if pending is None:
                pending = (path, [])
            pending[1].append(hit)
        if pending is not None:
            batch = _checked(root, pending, guards)
            if batch:
                yield batch


def _checked(
    root: str, pending: tuple[bytes, list[FsGrepHit]], guards: LocalGuards
) -> list[FsGrepHit]:
    raw, hits = pending
    if guards.confined and not guards.may_see(
        os.path.realpath(os.path.join(root, os.fsdecode(raw)))
    ):
        return []
    return hits


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
    """Paths of the files matching `query` below the real directory `root`, oldest first
    (ties in ripgrep's order)."""
    return _glob(binary, root, display, query, guards)


async def _glob(
    binary: str, root: str, display: str, query: FsGlobQuery, guards: LocalGuards
) -> AsyncGenerator[list[str], None]:
    allowed: dict[str, bool] = {}
    async with _running(_glob_argv(binary, query), root, display, query.pattern) as stdout:
        buffer = bytearray()
        async for chunk in stdout:
            buffer += chunk
            end = buffer.rfind(b"\0")
            if end < 0:
                continue
            batch = _relative_paths(os.fsdecode(bytes(buffer[:end])))
            del buffer[: end + 1]
            if guards.confined:
                batch = [rel for rel in batch if _seen(root, rel, guards, allowed)]
            if batch:
                yield batch


def _relative_paths(text: str) -> list[str]:
    """The NUL-separated paths ripgrep printed below ``.``, without their ``./``: one split
    at C speed when every path has it (it does: ripgrep joins them to ``.``)."""
    paths = text[2:].split("\0./") if text.startswith("./") else []
    if len(paths) != text.count("\0") + 1:
        paths = [name[2:] if name.startswith("./") else name for name in text.split("\0")]
    return paths


def _seen(root: str, rel: str, guards: LocalGuards, allowed: dict[str, bool]) -> bool:
    """Whether the fence lets a file ripgrep listed be reported: the real path of its
    directory must be one the guards may see (computed once per directory)."""
    parent = os.path.dirname(os.path.join(root, rel))
    verdict = allowed.get(parent)
    if verdict is None:
        verdict = allowed[parent] = guards.may_see(os.path.realpath(parent))
    return verdict


@asynccontextmanager
async def _running(
    argv: list[str], root: str, display: str, pattern: str
) -> AsyncIterator[ByteReceiveStream]:
    """Run ripgrep in `root`; yields its stdout. Leaving the block (or being cancelled)
    kills it; an error it reports about the pattern is `SEARCH_INVALID_PATTERN`."""
    with map_os_errors("search", display):
        process = await anyio.open_process(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=root,
            env=_environment(),
        )
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
    if finished and process.returncode not in (0, 1):
        if any(marker in errors for marker in _PATTERN_ERRORS):
            kind: Literal["regex", "glob"] = "glob" if b"error parsing glob" in errors else "regex"
            raise messages.invalid_pattern(kind, pattern, _reason(bytes(errors)))
        if process.returncode != 2:  # 2: some files could not be read; the rest was searched
            raise messages.io_error("search", display, f"ripgrep failed: {_reason(bytes(errors))}")


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
