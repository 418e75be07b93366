"""`SandboxFileSystem`: a fence around `LocalFileSystem` that confines it to root directories.

A wrapper, not a copy: a `WrapperFileSystem` whose `check` hook tests each target against
the roots as `PRIMITIVES` says the primitive touches it, before the base forwards the call to
the inner local provider, which re-checks what it opened and the parent directory right
before publication.
"""

from __future__ import annotations

import dataclasses
import os
import weakref
from collections.abc import Sequence
from typing import Literal, TypeAlias, get_args

from dsh_fs.errors import FsError
from dsh_fs.fs import (
    EncodingRules,
    FsAccess,
    FsCapabilities,
    FsTarget,
    FsTargetKey,
    FsTouch,
    WrapperFileSystem,
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
        self.client: tuple[str, ...] | None = None
        """The MCP client's roots (canonical directories) that shape `roots`; None when no
        client's roots do (the given roots are in force)."""
        self.replaced = False
        """`roots` are the client's alone: the server was given no ROOT of its own."""

    def deny(self, verb: messages.Verb, path: str, reason: str) -> FsError:
        return messages.sandbox_denied(verb, path, reason, self.mode)

    def outside(self, verb: messages.Verb, display: str, real: str) -> FsError:
        """`display` (canonically `real`) is outside the fence: refused naming whose roots it
        is outside. The client's, when they are what refuses it (SPEC §10.1: a path inside a
        given root, or any path when the client's roots are the whole fence), so that a user
        whose host sent other roots sees why; else the sandbox's."""
        client = self.client
        if client is not None and (self.replaced or within_any(real, self.given)):
            reason = messages.outside_client_roots(client, roots_given=not self.replaced)
        else:
            reason = "outside the sandbox"
        return self.deny(verb, display, reason)

    def readable(self, real: str) -> bool:
        # The excluded places (the journal's store) first: they are out of reach in every
        # mode, even where reads are not confined to the roots.
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
            raise self.outside(verb, display, opened)

    def may_reveal(self, opened: str) -> bool:
        return self.readable(opened)

    def may_see(self, real: str) -> bool:
        return self.readable(real)

    def check_directory(self, verb: messages.Verb, display: str, directory: str) -> None:
        if self.mode == "read-only":
            raise self.deny(verb, display, "the sandbox is read-only")
        if not self.writable(directory):
            raise self.outside(verb, display, directory)

    def check_publish(self, verb: messages.Verb, display: str, directory: str) -> None:
        self.check_directory(verb, display, directory)

    def check_delete(self, display: str, directory: str) -> None:
        if self.mode == "read-only":
            raise self.deny("delete", display, "the sandbox is read-only")
        if not self.writable(directory):
            raise self.outside("delete", display, directory)


class SandboxFileSystem(WrapperFileSystem):
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
        super().__init__(
            self._fenced_provider(self._fence.roots[0], self._fence, timestamp_granularity_ns)
        )
        if mode == "read-only":
            self.capabilities = dataclasses.replace(self.capabilities, read_only=True)

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

    @property
    def client_roots(self) -> tuple[str, ...] | None:
        """The MCP client's roots (canonical directories) that shape this fence
        (`narrowed`, `set_client_roots`); None when no client's roots do."""
        return self._fence.client

    def _client_fence(
        self, roots: Sequence[str], replace: bool
    ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The client's roots (canonical existing directories) and the fence they make."""
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
            return client, client
        given = self._fence.given
        return client, tuple(
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
        intersection) leaves no root at all, and every path is refused saying it is outside
        the client's roots (or, with `replace`, that the client named no roots). This
        changes the fence of every user of the sandbox; `narrowed` makes a new one instead
        (one MCP session's).
        """
        if roots is None:
            self._fence.roots = self._fence.given
            self._fence.client = None
            return self.roots
        client, kept = self._client_fence(roots, replace)
        self._fence.roots = kept
        self._fence.client = client
        self._fence.replaced = replace
        return kept

    def narrowed(
        self, roots: Sequence[str], *, replace: bool, strict: bool = True
    ) -> SandboxFileSystem:
        """A new sandbox like this one (mode, read confinement, exclusions) fenced in to an
        MCP client's roots as `set_client_roots` would fence this one, which stays as it is:
        one client's fence, beside the others'. Its roots given stay this sandbox's (so a
        later `narrowed` of it still only narrows them); with no root left every path is
        refused saying it is outside the client's roots (or that the client named no roots,
        when `replace` and it named none). It has its own local provider (guarded by its own
        fence; mutations of one file through both are serialized by the directory lock, as
        between processes).

        `strict` False (SPEC §10.1, with `replace` False): client roots none of which
        overlaps a given root, or none at all, leave the given roots in force (the view's
        `client_roots` is then None); roots that overlap narrow them as always.
        """
        view = type(self).__new__(type(self))
        # A subclass's own state too, and the declared encodings: the view's own local
        # provider (`_fenced_provider`) decodes files as this one's does.
        view.__dict__.update(self.__dict__)
        client: tuple[str, ...] | None
        client, kept = self._client_fence(roots, replace)
        if not (replace or strict or kept):
            client, kept = None, self._fence.given
        fence = _Fence(kept, self.mode, self.confine_reads)
        fence.client = client
        fence.replaced = replace
        fence.given = self._fence.given
        fence.excluded = self._fence.excluded
        fence.confined = self._fence.confined
        view._fence = fence
        view._granularity = self._granularity
        view._views = weakref.WeakSet()
        self._views.add(view)
        view.capabilities = self.capabilities
        if self._encodings is not None:
            # SPEC §12: encoding patterns are relative to each root, the client's too.
            places = [*fence.roots, *(os.path.realpath(root) for root in fence.roots)]
            view._encodings = self._encodings.with_roots(places)
        # With no root left every path is refused by the fence; the provider still needs a
        # base for relative paths: the first root the sandbox was given.
        base = fence.roots[0] if fence.roots else fence.given[0]
        view.wrapped = view._fenced_provider(base, fence, self._granularity)
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
        wrapped = self.wrapped
        assert isinstance(wrapped, LocalFileSystem)
        return wrapped

    def exclude(self, path: str) -> None:
        """Fence out the directory `path` (the journal's store): nothing below it can be
        read, found, listed or changed through this provider, nor through the local
        provider's own opens and publications (a link swapped in mid-call)."""
        self._fence.excluded = (*self._fence.excluded, canonical(os.path.abspath(path)))
        # Reads may now be refused even when not confined to the roots: the local provider
        # and its searcher must ask the fence about what they open (`LocalGuards.confined`).
        self._fence.confined = True

    # -- the fence, as the hooks of `WrapperFileSystem` -------------------------------------

    def where(self, path: str, cwd: str | None) -> str | None:
        """Relative paths resolve against `cwd` below the first root (the first root given
        while a client named none); an empty or NUL-bearing path is refused here, not left
        to the local provider: the fence must not depend on it."""
        _check_usable(path, cwd)
        first = self.roots[0] if self.roots else self._fence.given[0]
        return first if not cwd else os.path.join(first, cwd)

    def check(self, access: FsAccess, target: FsTarget) -> None:
        """Containment of each target as its primitive touches it (`PRIMITIVES`): a read of
        what it names, a change of it (and a read first where the change reads it: an edit,
        a version check), a change of the entry itself, or only naming it (refused when no
        operation may touch it). The local provider re-checks what the kernel opened and
        every directory it publishes into (`LocalGuards`): this check alone would leave the
        window between it and the system call to a swapped link."""
        touch = access.touch
        if touch is FsTouch.READS:
            # The sandbox words every refused read "read", whatever the tool (list, search).
            if access.link:
                self._check_link_read(target)
            else:
                self._check_read(target, "read")
        elif touch is FsTouch.CHANGES:
            self._check_write(target, access.verb)
            if access.reads:
                self._check_read(target, access.verb)
        elif touch is FsTouch.ENTRY:
            self._check_entry(target, access.verb, read=access.reads)
        else:
            self._check_any(target)

    def _check_read(self, target: FsTarget, verb: messages.Verb) -> None:
        real = _canonical(target.target_key, verb, target.display_path)
        if not self._fence.readable(real):
            raise self._fence.outside(verb, target.display_path, real)

    def _check_link_read(self, target: FsTarget) -> None:
        # The local provider lstats the display path (absolute, lexically normalized): the
        # final component is the link itself, so only its parent is followed.
        display = target.display_path
        head, name = os.path.split(display)
        real = (
            os.path.join(_canonical(head, "read", display), name)
            if name
            else _canonical(display, "read", display)
        )
        if not self._fence.readable(real):
            raise self._fence.outside("read", display, real)

    def _check_write(self, target: FsTarget, verb: messages.Verb) -> None:
        if self._fence.mode == "read-only":
            raise self._fence.deny(verb, target.display_path, "the sandbox is read-only")
        real = _canonical(target.target_key, verb, target.display_path)
        if not self._fence.writable(real):
            raise self._fence.outside(verb, target.display_path, real)

    def _check_entry(self, target: FsTarget, verb: messages.Verb, *, read: bool) -> None:
        """A mutation of the entry the display path names (a link itself, not what it
        points to): its directory's canonical path plus its name must be writable (and
        readable when `read`: a file's version check reads it); a root is never removed."""
        display = target.display_path
        if self._fence.mode == "read-only":
            raise self._fence.deny(verb, display, "the sandbox is read-only")
        head, name = os.path.split(display)
        real = os.path.join(_canonical(head, verb, display), name) if name else head
        # Moving or removing a root would take the fence's own place with it: later paths
        # would be checked against a directory that is gone or elsewhere.
        if real in self.roots:
            raise self._fence.deny(verb, display, "it is a sandbox root")
        if not self._fence.writable(real) or (read and not self._fence.readable(real)):
            raise self._fence.outside(verb, display, real)

    def _check_any(self, target: FsTarget) -> None:
        # Naming a place reads and changes nothing: allowed wherever a read or a change may
        # go, refused only where neither may.
        real = _canonical(target.target_key, "access", target.display_path)
        if not (self._fence.readable(real) or self._fence.writable(real)):
            raise self._fence.outside("access", target.display_path, real)

    async def aclose(self) -> None:
        """Close the inner provider, and those of the sandboxes `narrowed` from this one."""
        for view in list(self._views):
            await view.aclose()
        await self.wrapped.aclose()


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
