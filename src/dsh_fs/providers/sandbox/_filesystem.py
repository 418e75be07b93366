"""`SandboxFileSystem`: a fence around `LocalFileSystem` that confines it to root directories.

A wrapper, not a copy: every primitive checks its path against the roots, then delegates to
the inner local provider, which re-checks the parent directory right before publication.
"""

from __future__ import annotations

import dataclasses
import os
import weakref
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Literal, TypeAlias, TypeVar, get_args

from dsh_fs.errors import FsError
from dsh_fs.fs import (
    EncodingRules,
    FileSystem,
    FsCapabilities,
    FsCapture,
    FsDecoded,
    FsDeleteOutcome,
    FsDirEntry,
    FsDirListing,
    FsEdit,
    FsEditOutcome,
    FsGlobQuery,
    FsGrepHit,
    FsGrepQuery,
    FsInfo,
    FsMkdirOutcome,
    FsMoveOutcome,
    FsPathInfo,
    FsPreImage,
    FsTarget,
    FsTargetKey,
    FsTextStream,
    FsVersion,
    FsWalkEntry,
    FsWriteOutcome,
    WriteGuard,
    messages,
)

from .._oserrors import map_os_errors
from .._text import check_usable_path
from ..local import LocalFileSystem, LocalGuards
from ._paths import canonical, canonical_root, within_any

__all__ = ["SandboxFileSystem", "SandboxMode"]

SandboxMode: TypeAlias = Literal["read-only", "workspace-write", "full-access"]
"""What the fence allows to be mutated: nothing, the roots only, or anything."""

_MODES: tuple[str, ...] = get_args(SandboxMode)

_T = TypeVar("_T")


class _Fence(LocalGuards):
    """The sandbox's rules, as path checks before a call and as the guards the inner local
    provider applies to what it really opens and where it really publishes."""

    def __init__(self, roots: tuple[str, ...], mode: SandboxMode, confine_reads: bool) -> None:
        self.roots = roots
        self.given = roots
        """The roots the sandbox was built with (the client's roots narrow or replace them)."""
        self.mode: SandboxMode = mode
        self.confine_reads = confine_reads
        self.confined = confine_reads
        self.excluded: tuple[str, ...] = ()

    def deny(self, verb: messages.Verb, path: str, reason: str) -> FsError:
        if not self.roots and reason == "outside the sandbox":
            reason = "the MCP client named no roots"
        return messages.sandbox_denied(verb, path, reason, self.mode)

    def readable(self, real: str) -> bool:
        if self.excluded and within_any(real, self.excluded):
            return False
        return not self.confine_reads or within_any(real, self.roots)

    def writable(self, real: str) -> bool:
        if self.mode == "read-only" or (self.excluded and within_any(real, self.excluded)):
            return False
        return self.mode == "full-access" or within_any(real, self.roots)

    # LocalGuards: what the kernel says was opened or locked (a path swapped between a
    # check and the system call shows here).

    def check_open(self, verb: messages.Verb, display: str, opened: str) -> None:
        if not self.readable(opened):
            raise self.deny(verb, display, "outside the sandbox")

    def may_reveal(self, opened: str) -> bool:
        return self.readable(opened)

    def may_see(self, real: str) -> bool:
        return self.readable(real)

    def check_directory(self, verb: messages.Verb, display: str, directory: str) -> None:
        if self.mode == "read-only":
            raise self.deny(verb, display, "the sandbox is read-only")
        if not self.writable(directory):
            raise self.deny(verb, display, "outside the sandbox")

    def check_publish(self, verb: messages.Verb, display: str, directory: str) -> None:
        self.check_directory(verb, display, directory)

    def check_delete(self, display: str, directory: str) -> None:
        if self.mode == "read-only":
            raise self.deny("delete", display, "the sandbox is read-only")
        if not self.writable(directory):
            raise self.deny("delete", display, "outside the sandbox")


class SandboxFileSystem(FileSystem):
    """The local filesystem, fenced in to one or more root directories.

    Modes (what may be mutated): ``read-only`` refuses every write, edit and delete;
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
    - ``~`` is an ordinary name (as in `LocalFileSystem`): ``~/x`` is inside the first root;
    - a path that needs more symbolic links than the kernel follows in one lookup (40: a
      loop, a long chain) lands nowhere: `FS_NOT_FOUND`, too many levels of symbolic links;
    - an empty or NUL-bearing path is `FS_NOT_FOUND` (the local provider's message), never
      an exception of another kind;
    - each primitive re-checks its target when called (a target resolved earlier may have
      been swapped for a link since);
    - then the inner provider applies this fence as its `LocalGuards` to what the kernel
      says it opened (before reading a byte) and to every directory a mutation changes
      (before a missing parent is created in it, before residue is swept or a copy staged
      in it, and again right before the rename or link), so a path swapped for a link to the
      outside between the check and the system call is refused with nothing changed
      anywhere, and a write's outcome never carries the prior text of a file outside the
      readable area.

    Residual risks (see SECURITY.md), against other local processes racing the provider; a
    model choosing hostile paths through the tools has none of these powers:

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
        timestamp_granularity_ns: int = 1,
        encodings: EncodingRules | None = None,
    ) -> None:
        """Fence a new `LocalFileSystem` in to `roots`.

        Args:
            roots: Existing directories; the first is the base of relative paths.
            mode: ``read-only``, ``workspace-write`` (default) or ``full-access``.
            confine_reads: Refuse reads outside the roots (default True).
            timestamp_granularity_ns: Passed to the inner `LocalFileSystem`.
            encodings: The declared encodings (SPEC §12), passed to it too.

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
        self._fence = _Fence(tuple(canonical_root(root) for root in roots), mode, confine_reads)
        self._granularity = timestamp_granularity_ns
        self._encodings = encodings
        self._views: weakref.WeakSet[SandboxFileSystem] = weakref.WeakSet()
        if mode == "read-only":
            self.capabilities = dataclasses.replace(self.capabilities, read_only=True)
        self._inner = self._fenced_provider(
            self._fence.roots[0], self._fence, timestamp_granularity_ns
        )

    def _fenced_provider(
        self, base: str, guards: LocalGuards, timestamp_granularity_ns: int
    ) -> LocalFileSystem:
        """The local provider this sandbox wraps, built with the fence as its guards."""
        return LocalFileSystem(
            base,
            guards=guards,
            timestamp_granularity_ns=timestamp_granularity_ns,
            encodings=self._encodings,
        )

    @property
    def roots(self) -> tuple[str, ...]:
        """The canonical root directories; the first is the base of relative paths."""
        return self._fence.roots

    def _client_fence(self, roots: Sequence[str], replace: bool) -> tuple[str, ...]:
        found = []
        for root in roots:
            try:
                real = canonical(os.path.abspath(root))
            except (OSError, ValueError):
                continue  # a link loop, a NUL or a name too long: it names no place
            if os.path.isdir(real):
                found.append(real)  # a file or a missing path is no root
        client = tuple(dict.fromkeys(found))
        if replace:
            return client
        given = self._fence.given
        return tuple(
            dict.fromkeys(
                [c for c in client if within_any(c, given)]
                + [g for g in given if within_any(g, client)]
            )
        )

    def set_client_roots(self, roots: Sequence[str] | None, *, replace: bool) -> tuple[str, ...]:
        """Fence the sandbox in to an MCP client's roots (existing directories; any other
        path is left out); returns the canonical roots now in force.

        `replace`: the client's roots are the fence (the server was given no root of its
        own); else they can only narrow it: the fence becomes their intersection with the
        roots the sandbox was built with (a client root inside a given one, or a given root
        inside a client one). None restores the given roots; an empty sequence (or no
        intersection) leaves no root at all, and every path is refused saying the client
        named no roots. This changes the fence of every user of the sandbox; `narrowed`
        makes a new one instead (one MCP session's).
        """
        if roots is None:
            self._fence.roots = self._fence.given
            return self.roots
        kept = self._client_fence(roots, replace)
        self._fence.roots = kept
        return kept

    def narrowed(self, roots: Sequence[str], *, replace: bool) -> SandboxFileSystem:
        """A new sandbox like this one (mode, read confinement, exclusions) fenced in to an
        MCP client's roots as `set_client_roots` would fence this one, which stays as it is:
        one client's fence, beside the others'. Its roots given stay this sandbox's (so a
        later `narrowed` of it still only narrows them); with no root left every path is
        refused saying the client named no roots. It has its own local provider (guarded by
        its own fence; mutations of one file through both are serialized by the directory
        lock, as between processes)."""
        view = type(self).__new__(type(self))
        view.__dict__.update(self.__dict__)  # a subclass's own state too
        fence = _Fence(self._client_fence(roots, replace), self.mode, self.confine_reads)
        fence.given = self._fence.given
        fence.excluded = self._fence.excluded
        fence.confined = self._fence.confined
        view._fence = fence
        view._granularity = self._granularity
        view._views = weakref.WeakSet()
        self._views.add(view)
        view.capabilities = self.capabilities
        base = fence.roots[0] if fence.roots else fence.given[0]
        view._inner = view._fenced_provider(base, fence, self._granularity)
        return view

    def holds(self, key: FsTargetKey) -> bool:
        """Whether a target key of this provider names a place inside its roots (the keys
        are canonical paths: a key it made, interpreted by it)."""
        return within_any(str(key), self._fence.roots)

    @property
    def mode(self) -> SandboxMode:
        """What the fence allows to be mutated."""
        return self._fence.mode

    @property
    def confine_reads(self) -> bool:
        """Whether reads are confined to the roots."""
        return self._fence.confine_reads

    @property
    def inner(self) -> LocalFileSystem:
        """The fenced local provider (its own opens and publications are fenced too)."""
        return self._inner

    def _check_read(self, target: FsTarget, verb: messages.Verb = "read") -> None:
        if not self._fence.readable(_canonical(target.target_key, verb, target.display_path)):
            raise self._fence.deny(verb, target.display_path, "outside the sandbox")

    def _check_write(self, target: FsTarget, verb: messages.Verb) -> None:
        if self._fence.mode == "read-only":
            raise self._fence.deny(verb, target.display_path, "the sandbox is read-only")
        if not self._fence.writable(_canonical(target.target_key, verb, target.display_path)):
            raise self._fence.deny(verb, target.display_path, "outside the sandbox")

    def _check_entry(self, target: FsTarget, verb: messages.Verb, *, read: bool) -> None:
        """A mutation of the entry the display path names (a link itself, not what it
        points to): its directory's canonical path plus its name must be writable (and
        readable when `read`: a file's version check reads it); a root is never removed."""
        display = target.display_path
        if self._fence.mode == "read-only":
            raise self._fence.deny(verb, display, "the sandbox is read-only")
        head, name = os.path.split(display)
        real = os.path.join(_canonical(head, verb, display), name) if name else head
        if real in self.roots:
            raise self._fence.deny(verb, display, "it is a sandbox root")
        if not self._fence.writable(real) or (read and not self._fence.readable(real)):
            raise self._fence.deny(verb, display, "outside the sandbox")

    def _check_any(self, target: FsTarget) -> None:
        real = _canonical(target.target_key, "access", target.display_path)
        if not (self._fence.readable(real) or self._fence.writable(real)):
            raise self._fence.deny("access", target.display_path, "outside the sandbox")

    def _base(self, cwd: str | None) -> str:
        first = self.roots[0] if self.roots else self._fence.given[0]
        return first if not cwd else os.path.join(first, cwd)

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
        real = (
            os.path.join(_canonical(head, "read", display), name)
            if name
            else _canonical(display, "read", display)
        )
        if not self._fence.readable(real):
            raise self._fence.deny("read", display, "outside the sandbox")
        return await self._inner.lstat(path, base)

    async def read_text(self, target: FsTarget) -> str:
        """The local `read_text`, confined."""
        self._check_read(target)
        return await self._inner.read_text(target)

    async def read_decoded(self, target: FsTarget) -> FsDecoded:
        """The local `read_decoded`, confined."""
        self._check_read(target)
        return await self._inner.read_decoded(target)

    def stream_text(self, target: FsTarget) -> AbstractAsyncContextManager[AsyncIterator[str]]:
        """The local `stream_text`, confined (checked when the block is entered)."""
        return self._stream_text(target)

    @asynccontextmanager
    async def _stream_text(self, target: FsTarget) -> AsyncIterator[AsyncIterator[str]]:
        self._check_read(target)
        async with self._inner.stream_text(target) as chunks:
            yield chunks

    async def read_bytes(self, target: FsTarget, max_bytes: int) -> bytes:
        """The local `read_bytes`, confined."""
        self._check_read(target)
        return await self._inner.read_bytes(target, max_bytes)

    async def read_head(self, target: FsTarget, size: int) -> bytes:
        """The local `read_head`, confined."""
        self._check_read(target)
        return await self._inner.read_head(target, size)

    async def list_dir(self, target: FsTarget) -> list[FsDirEntry]:
        """The local `list_dir`, confined (entries are metadata of names inside it)."""
        self._check_read(target)
        return await self._inner.list_dir(target)

    async def write_text(
        self,
        target: FsTarget,
        content: str,
        expected: WriteGuard | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsWriteOutcome:
        """The local `write_text`, fenced by the mode; the inner provider re-checks the
        directory it publishes into and withholds a prior text the fence may not reveal."""
        self._check_write(target, "write")
        return await self._inner.write_text(target, content, expected, capture=capture)

    async def edit_text(
        self,
        target: FsTarget,
        edit: FsEdit,
        expected: FsVersion | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsEditOutcome:
        """The local `edit_text`, fenced by the mode and confined like a read."""
        self._check_write(target, "edit")
        self._check_read(target, "edit")
        return await self._inner.edit_text(target, edit, expected, capture=capture)

    async def aclose(self) -> None:
        """Close the inner provider, and those of the sandboxes `narrowed` from this one."""
        for view in list(self._views):
            await view.aclose()
        await self._inner.aclose()

    def stream_text_from(
        self, target: FsTarget, start: int = 0
    ) -> AbstractAsyncContextManager[FsTextStream]:
        """The local `stream_text_from`, confined (checked when the block is entered)."""
        return self._stream_text_from(target, start)

    @asynccontextmanager
    async def _stream_text_from(self, target: FsTarget, start: int) -> AsyncIterator[FsTextStream]:
        self._check_read(target)
        async with self._inner.stream_text_from(target, start) as stream:
            yield stream

    async def delete(
        self,
        target: FsTarget,
        expected: FsVersion | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsDeleteOutcome:
        """The local `delete`, fenced by the mode and confined like a read (its version check
        reads the file); the inner provider re-checks the directory it removes from."""
        self._check_write(target, "delete")
        self._check_read(target, "delete")
        return await self._inner.delete(target, expected, capture=capture)

    async def restore(
        self,
        target: FsTarget,
        pre_image: FsPreImage | None,
        expected: FsVersion | None,
        *,
        mode: int | None = None,
        capture: FsCapture | None = None,
    ) -> FsVersion | None:
        """The local `restore`, fenced like a write (and a delete): an undo lands only where
        a tool could write, whatever its journal entry says."""
        self._check_write(target, "write")
        self._check_read(target, "write")
        return await self._inner.restore(target, pre_image, expected, mode=mode, capture=capture)

    def exclude(self, path: str) -> None:
        """Fence out the directory `path` (the journal's store when it falls inside a root):
        nothing below it can be read, found, listed or changed through this provider."""
        self._fence.excluded = (*self._fence.excluded, canonical(os.path.abspath(path)))
        self._fence.confined = True

    async def delete_link(self, target: FsTarget) -> None:
        """The local `delete_link`, fenced on the link's own place (it may point anywhere:
        only the link is removed)."""
        self._check_entry(target, "delete", read=False)
        await self._inner.delete_link(target)

    async def delete_dir(self, target: FsTarget) -> None:
        """The local `delete_dir`, fenced on the directory's place; a root is refused."""
        self._check_entry(target, "delete", read=False)
        await self._inner.delete_dir(target)

    async def mkdir(self, target: FsTarget, *, capture: FsCapture | None = None) -> FsMkdirOutcome:
        """The local `mkdir`, fenced by the mode; the inner provider asks the fence about
        every directory it creates a child in."""
        self._check_write(target, "mkdir")
        if capture is None:
            return await self._inner.mkdir(target)
        return await self._inner.mkdir(target, capture=capture)

    async def move(
        self,
        source: FsTarget,
        destination: FsTarget,
        expected: FsVersion | None = None,
        replace: WriteGuard | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsMoveOutcome:
        """The local `move`, both places fenced (the source readable too: its version check
        reads it; a root never moves); the inner provider asks the fence about both locked
        directories right before the rename."""
        self._check_entry(source, "move", read=True)
        self._check_entry(destination, "move", read=False)
        if capture is None:
            return await self._inner.move(source, destination, expected, replace)
        return await self._inner.move(source, destination, expected, replace, capture=capture)

    def walk(
        self, root: FsTarget, *, descend: Callable[[str], bool] | None = None
    ) -> AbstractAsyncContextManager[AsyncIterator[list[FsWalkEntry]]]:
        """The local walk, its root confined once (checked when the block is entered): the
        walk never follows a link and lists only directories whose kernel path lies below
        that root, so nothing outside it is ever listed."""
        return self._fenced(root, self._inner.walk(root, descend=descend))

    async def walk_target(self, root: FsTarget, path: str) -> FsTarget:
        """The local answer; every primitive given the target checks it against the fence
        as usual."""
        return await self._inner.walk_target(root, path)

    def native_grep(
        self, root: FsTarget, query: FsGrepQuery
    ) -> AbstractAsyncContextManager[AsyncIterator[list[FsGrepHit]]] | None:
        """The local ripgrep search, its root confined; every file it reports is re-checked
        against the fence."""
        inner = self._inner.native_grep(root, query)
        return None if inner is None else self._fenced(root, inner)

    def native_glob(
        self, root: FsTarget, query: FsGlobQuery
    ) -> AbstractAsyncContextManager[AsyncIterator[list[str]]] | None:
        """The local ripgrep file finder, its root confined; every file it reports is
        re-checked against the fence."""
        inner = self._inner.native_glob(root, query)
        return None if inner is None else self._fenced(root, inner)

    async def list_dir_first(self, target: FsTarget, limit: int) -> FsDirListing:
        """The local `list_dir_first`, confined like `list_dir`."""
        self._check_read(target)
        return await self._inner.list_dir_first(target, limit)

    @asynccontextmanager
    async def _fenced(
        self, root: FsTarget, inner: AbstractAsyncContextManager[_T]
    ) -> AsyncIterator[_T]:
        self._check_read(root)
        async with inner as batches:
            yield batches


def _canonical(path: str, verb: messages.Verb, display: str) -> str:
    """`canonical`, a path no operation could land on refused as the kernel refuses it: too
    many links (`FS_NOT_FOUND`, too many levels of symbolic links) or too long
    (`FS_IO_ERROR`, file name too long)."""
    with map_os_errors(verb, display):
        return canonical(path)


def _check_usable(path: str, cwd: str | None) -> None:
    # The local provider refuses these too; the fence must not depend on it.
    check_usable_path(path if isinstance(path, str) else "")
    if cwd:
        check_usable_path(cwd if isinstance(cwd, str) else "")
