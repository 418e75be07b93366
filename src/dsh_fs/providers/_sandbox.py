"""`SandboxFileSystem`: a fence around `LocalFileSystem` that confines it to root directories.

A wrapper, not a copy: every primitive checks its path against the roots, then delegates to
the inner local provider, which re-checks the parent directory right before publication.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import (
    AbstractAsyncContextManager,
    AsyncExitStack,
    asynccontextmanager,
    contextmanager,
)
from typing import Literal, TypeAlias, get_args

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import (
    FileSystem,
    FsCapabilities,
    FsDirEntry,
    FsEditOutcome,
    FsEditRequest,
    FsInfo,
    FsPathInfo,
    FsTarget,
    FsVersion,
    FsWriteOutcome,
    WriteGuard,
)

from ._local import LocalFileSystem, publish_guard
from ._oserrors import invalid_path
from ._posix import Verb, open_guard
from ._sandbox_paths import canonical, canonical_root, within_any

__all__ = ["SandboxFileSystem", "SandboxMode"]

SandboxMode: TypeAlias = Literal["read-only", "workspace-write", "full-access"]
"""What the fence allows to be mutated: nothing, the roots only, or anything."""

_MODES: tuple[str, ...] = get_args(SandboxMode)

_Verb: TypeAlias = Literal["read", "write", "edit", "access"]


class SandboxFileSystem(FileSystem):
    """The local filesystem, fenced in to one or more root directories.

    Modes (what may be mutated): ``read-only`` refuses every write and edit;
    ``workspace-write`` allows them inside the roots only; ``full-access`` puts no fence
    around mutations. Reads (``stat``, ``read_*``, ``list_dir``, ``lstat``, …) are confined to
    the roots too unless ``confine_reads=False``. An edit both reads and writes, so it needs
    both permissions; a write outside the readable area (``full-access`` with confined reads)
    withholds the prior content from its outcome (``before`` is None).

    A refusal is `FS_SANDBOX_DENIED`, naming the path and the mode, e.g.
    ``cannot write "/etc/x": outside the sandbox [sandbox: file access denied under
    workspace-write mode]``. `resolve` itself refuses only unusable paths (empty, NUL): the
    refusal names the operation, so it comes from the primitive that would touch the disk.

    How containment is decided:

    - on the path the local provider operates on (the spelled path made absolute, ``..``
      removed lexically) made canonical (every symlink followed, dangling ones included),
      compared component by component, never by string prefix: ``/srv/root-evil`` is not
      inside ``/srv/root``;
    - a symlink inside a root that points outside is outside; one outside that points inside
      is inside;
    - ``~`` and ``~user`` expand to the home directory, exactly as in `LocalFileSystem`, so a
      path means the same thing with and without the fence; the result is then confined
      like any other path (``~/.ssh/id_rsa`` is refused, naming the expanded path, unless a
      root contains it);
    - an empty or NUL-bearing path is `FS_NOT_FOUND` (the local provider's message), never
      an exception of another kind;
    - each primitive re-checks its target when called (a target resolved earlier may have
      been swapped for a link since), and the inner provider re-checks the real path of the
      parent directory inside its critical section, after taking its locks and right before
      the rename or link that publishes a write, so a parent swapped for a symlink to the
      outside between resolve and publication is refused and nothing is published.

    Residual risks (see SECURITY.md), against other local processes racing the provider; a
    model choosing hostile paths through the tools has none of these powers:

    - a window remains between the publication re-check and the rename itself (the rename
      is by path): a process that swaps the parent directory for a symlink in exactly that
      window can redirect one write outside;
    - reads have the same window between the check and the ``open``, and a write's
      outcome may then carry the swapped-in file's prior content;
    - a write creates missing parent directories and its staging directory before the
      publication re-check: a racing swap can make those appear outside (empty; the staging
      directory is removed when the write is refused);
    - a hard link inside a root to an outside inode is inside by path: reading it shows the
      outside file's content. Writing through it does not modify the outside file: the
      atomic replace publishes a new inode under the inside name and breaks the link;
    - roots are canonicalized once, at construction: moving a root away afterwards moves
      the fence's meaning with the path, not with the directory;
    - the fence covers this provider only, not other tools (a shell) an agent may have.
    """

    capabilities: FsCapabilities = LocalFileSystem.capabilities

    def __init__(
        self,
        roots: Sequence[str | os.PathLike[str]],
        *,
        mode: SandboxMode = "workspace-write",
        confine_reads: bool = True,
        inner: LocalFileSystem | None = None,
    ) -> None:
        """Fence `inner` (a new `LocalFileSystem` by default) in to `roots`.

        Args:
            roots: Existing directories; the first is the base of relative paths.
            mode: ``read-only``, ``workspace-write`` (default) or ``full-access``.
            confine_reads: Refuse reads outside the roots (default True).
            inner: The local provider to delegate to.

        Raises:
            ValueError: No roots, a root that does not exist or is not a directory, or an
                unknown mode.
        """
        if isinstance(roots, (str, os.PathLike)):
            roots = [roots]
        if not roots:
            raise ValueError("a sandbox needs at least one root directory")
        if mode not in _MODES:
            raise ValueError(f"unknown sandbox mode {mode!r}; expected one of {_MODES}")
        self._roots: tuple[str, ...] = tuple(canonical_root(root) for root in roots)
        self._mode: SandboxMode = mode
        self._confine_reads = confine_reads
        self._inner = inner if inner is not None else LocalFileSystem(self._roots[0])

    @property
    def roots(self) -> tuple[str, ...]:
        """The canonical root directories; the first is the base of relative paths."""
        return self._roots

    @property
    def mode(self) -> SandboxMode:
        """What the fence allows to be mutated."""
        return self._mode

    @property
    def confine_reads(self) -> bool:
        """Whether reads are confined to the roots."""
        return self._confine_reads

    @property
    def inner(self) -> LocalFileSystem:
        """The fenced provider."""
        return self._inner

    # -- the fence ------------------------------------------------------------------------

    def _inside(self, real: str) -> bool:
        return within_any(real, self._roots)

    def _deny(self, verb: _Verb, path: str, reason: str) -> FsError:
        return FsError(
            FsErrorCode.SANDBOX_DENIED,
            f'cannot {verb} "{path}": {reason} '
            f"[sandbox: file access denied under {self._mode} mode]",
            path=path,
        )

    def _readable(self, real: str) -> bool:
        return not self._confine_reads or self._inside(real)

    def _writable(self, real: str) -> bool:
        if self._mode == "read-only":
            return False
        return self._mode == "full-access" or self._inside(real)

    def _check_read(self, target: FsTarget, verb: _Verb = "read") -> None:
        if not self._readable(canonical(target.target_key)):
            raise self._deny(verb, target.display_path, "outside the sandbox")

    def _check_write(self, target: FsTarget, verb: Literal["write", "edit"]) -> str:
        if self._mode == "read-only":
            raise self._deny(verb, target.display_path, "the sandbox is read-only")
        real = canonical(target.target_key)
        if not self._writable(real):
            raise self._deny(verb, target.display_path, "outside the sandbox")
        return real

    def _check_any(self, target: FsTarget) -> None:
        real = canonical(target.target_key)
        if not (self._readable(real) or self._writable(real)):
            raise self._deny("access", target.display_path, "outside the sandbox")

    @contextmanager
    def _fenced_open(self) -> Iterator[None]:
        """Make the inner provider check what it actually opened before reading a byte."""
        if not self._confine_reads:
            yield
            return
        outer = open_guard.get()

        def guard(display: str, verb: Verb, opened: str) -> None:
            if outer is not None:
                outer(display, verb, opened)
            # The kernel's path of the open file: a path swapped for a link to the outside
            # between `_check_read` and the `open` shows here.
            if not self._readable(opened):
                raise self._deny(verb, display, "outside the sandbox")

        token = open_guard.set(guard)
        try:
            yield
        finally:
            open_guard.reset(token)

    @contextmanager
    def _fenced_publication(self, verb: Literal["write", "edit"]) -> Iterator[None]:
        """Make the inner provider re-check the parent inside its critical section."""
        if self._mode == "full-access":
            yield
            return
        outer = publish_guard.get()

        def guard(key: str, display: str, directory: str) -> None:
            if outer is not None:
                outer(key, display, directory)
            # Runs in the inner provider's worker thread, locks held, right before the
            # rename or link. `directory` is the kernel's path of the locked directory the
            # publication lands in (not resolved again: a path is what can be swapped).
            if self._mode == "read-only":
                raise self._deny(verb, display, "the sandbox is read-only")
            if not self._inside(directory):
                raise self._deny(verb, display, "outside the sandbox")

        token = publish_guard.set(guard)
        try:
            yield
        finally:
            publish_guard.reset(token)

    def _base(self, cwd: str | None) -> str:
        if not cwd:
            return self._roots[0]
        return os.path.join(self._roots[0], os.path.expanduser(cwd))

    # -- FileSystem -------------------------------------------------------------------------

    async def resolve(self, path: str, cwd: str | None = None) -> FsTarget:
        """Resolve like the local provider, against `cwd` or else the first root.

        Raises:
            FsError: `FS_NOT_FOUND` for an empty or NUL-bearing path, and the local
                provider's errors. Containment is checked by each primitive, not here.
        """
        _check_usable(path, cwd)
        return await self._inner.resolve(path, self._base(cwd))

    async def process_path(self, target: FsTarget) -> str:
        """The canonical path of `target`; refused if no operation may touch it."""
        self._check_any(target)
        return await self._inner.process_path(target)

    async def file_url(self, target: FsTarget) -> str:
        """The ``file:`` URL of `target`; refused if no operation may touch it."""
        self._check_any(target)
        return await self._inner.file_url(target)

    async def contains(self, parent: FsTarget, child: FsTarget) -> bool:
        """Whether `child` is or lies inside `parent`; refused if either is untouchable."""
        self._check_any(parent)
        self._check_any(child)
        return await self._inner.contains(parent, child)

    async def stat(self, target: FsTarget) -> FsInfo | None:
        """The local `stat`, confined like a read."""
        self._check_read(target)
        return await self._inner.stat(target)

    async def lstat(self, path: str, cwd: str | None = None) -> FsPathInfo | None:
        """The local `lstat`, confined like a read of the link itself (not its target)."""
        _check_usable(path, cwd)
        base = self._base(cwd)
        # The local provider lstats the display path (absolute, lexically normalized): the
        # final component is the link itself, so only its parent is followed.
        display = (await self._inner.resolve(path, base)).display_path
        head, name = os.path.split(display)
        real = os.path.join(canonical(head), name) if name else canonical(display)
        if not self._readable(real):
            raise self._deny("read", display, "outside the sandbox")
        return await self._inner.lstat(path, base)

    async def read_text(self, target: FsTarget) -> str:
        """The local `read_text`, confined."""
        self._check_read(target)
        with self._fenced_open():
            return await self._inner.read_text(target)

    def stream_text(self, target: FsTarget) -> AbstractAsyncContextManager[AsyncIterator[str]]:
        """The local `stream_text`, confined (checked when the block is entered)."""
        return self._stream_text(target)

    @asynccontextmanager
    async def _stream_text(self, target: FsTarget) -> AsyncIterator[AsyncIterator[str]]:
        self._check_read(target)
        async with AsyncExitStack() as stack:
            with self._fenced_open():  # the file is opened when the inner block is entered
                chunks = await stack.enter_async_context(self._inner.stream_text(target))
            yield chunks

    async def read_bytes(self, target: FsTarget, max_bytes: int) -> bytes:
        """The local `read_bytes`, confined."""
        self._check_read(target)
        with self._fenced_open():
            return await self._inner.read_bytes(target, max_bytes)

    async def list_dir(self, target: FsTarget) -> list[FsDirEntry]:
        """The local `list_dir`, confined (entries are metadata of names inside it)."""
        self._check_read(target)
        return await self._inner.list_dir(target)

    async def write_text(
        self, target: FsTarget, content: str, expected: WriteGuard | None = None
    ) -> FsWriteOutcome:
        """The local `write_text`, fenced by the mode, re-checked before publication."""
        real = self._check_write(target, "write")
        with self._fenced_publication("write"):
            outcome = await self._inner.write_text(target, content, expected)
        if outcome.before is not None and not self._readable(real):
            # full-access with confined reads: never reveal what an outside file held.
            return FsWriteOutcome(
                operation=outcome.operation,
                version=outcome.version,
                before=None,
                after=outcome.after,
            )
        return outcome

    async def edit_text(
        self, target: FsTarget, edit: FsEditRequest, expected: FsVersion | None = None
    ) -> FsEditOutcome:
        """The local `edit_text`, fenced by the mode and confined like a read."""
        self._check_write(target, "edit")
        self._check_read(target, "edit")
        with self._fenced_publication("edit"), self._fenced_open():
            return await self._inner.edit_text(target, edit, expected)

    async def aclose(self) -> None:
        """Close the inner provider."""
        await self._inner.aclose()


def _check_usable(path: str, cwd: str | None) -> None:
    # The local provider refuses these too; the fence must not depend on it.
    if not isinstance(path, str) or not path or "\0" in path:
        raise invalid_path(path if isinstance(path, str) else "")
    if cwd is not None and (not isinstance(cwd, str) or "\0" in cwd):
        raise invalid_path(cwd if isinstance(cwd, str) else "")
