"""`WrapperFileSystem`: one forwarding base for every provider that wraps another.

A wrapper (the sandbox's fence, the path rules, the journal store's fence) decides whether a
call may go on; it never does the work. The base forwards each `FileSystem` primitive to
`wrapped` exactly once, always passing `capture`, and consults its hooks on the way, as the
table `PRIMITIVES` says each primitive touches its targets. The table is declared where the
forwarding is: each forwarding method carries its row (`@_primitive(...)`), and the decorator
checks the targets before the method forwards. A new primitive is one contract method, one
forwarding method here with its row, and one implementation in the providers that do the
work; a wrapper subclass needs nothing new (its hooks see the new row).

`FenceOut` is the smallest wrapper: places no tool may reach (the change journal's store).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import inspect
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, cast

from dsh_fs.errors import FsError

from . import messages
from ._contract import FileSystem
from ._encodings import FsDecoded
from ._journal_contract import FsCapture, FsPreImage
from ._search import FsGlobQuery, FsGrepHit, FsGrepQuery
from ._text_stream import FsTextStream
from ._types import (
    FsDeleteOutcome,
    FsDirEntry,
    FsDirListing,
    FsEdit,
    FsEditOutcome,
    FsFileType,
    FsInfo,
    FsMkdirOutcome,
    FsMoveOutcome,
    FsPathInfo,
    FsSmallRead,
    FsTarget,
    FsTargetKey,
    FsVersion,
    FsWalkEntry,
    FsWriteOutcome,
    WriteGuard,
)

__all__ = ["PRIMITIVES", "FenceOut", "FsAccess", "FsPrimitive", "FsTouch", "WrapperFileSystem"]

_T = TypeVar("_T")
_F = TypeVar("_F", bound=Callable[..., Any])


class FsTouch(enum.Enum):
    """What a primitive does to one of its targets."""

    READS = "reads"
    """Reads what the target names (content, metadata, a listing), following links."""
    CHANGES = "changes"
    """Changes what the target names (its content), following a final link."""
    ENTRY = "entry"
    """Changes the entry the display path names itself (a link, a directory, a moved entry)."""
    NAMES = "names"
    """Only names it (its canonical path, its URL): nothing is read or changed."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FsAccess:
    """How a primitive touches one target argument."""

    touch: FsTouch
    """Reads, changes, changes the entry itself, or only names it."""
    verb: messages.Verb
    """The operation a refusal names (``cannot <verb> "<path>": …``)."""
    reads: bool = False
    """A change that reads the target first (a version check, an edit's matching): a fence
    that confines reads confines it too."""
    link: bool = False
    """The entry may be a symbolic link itself (`delete_link`, a moved entry, `lstat`): its
    target key names what the link points to, which the call neither reads nor changes."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FsPrimitive:
    """One `FileSystem` primitive as a wrapper sees it."""

    name: str
    """The method's name."""
    targets: tuple[FsAccess, ...]
    """How it touches each of its target arguments, in order (none for `aclose`)."""
    resolves: bool = False
    """It makes a target from a path (`resolve`, `walk_target`, `lstat`'s path): a fence
    checks the target where a primitive uses it, and only the path's usability here."""
    reveals: bool = False
    """Its answer names what lies below the target (a listing, a walk, a search): a wrapper
    that hides places filters it."""


def _row(
    name: str, *targets: FsAccess, resolves: bool = False, reveals: bool = False
) -> FsPrimitive:
    return FsPrimitive(name=name, targets=targets, resolves=resolves, reveals=reveals)


def _reads(verb: messages.Verb, *, link: bool = False) -> FsAccess:
    return FsAccess(touch=FsTouch.READS, verb=verb, link=link)


def _changes(verb: messages.Verb, *, reads: bool = False) -> FsAccess:
    return FsAccess(touch=FsTouch.CHANGES, verb=verb, reads=reads)


def _entry(verb: messages.Verb, *, reads: bool = False, link: bool = False) -> FsAccess:
    return FsAccess(touch=FsTouch.ENTRY, verb=verb, reads=reads, link=link)


_NAMES = FsAccess(touch=FsTouch.NAMES, verb="access")

_ROWS: dict[str, FsPrimitive] = {}
"""The rows, in the order the forwarding methods below declare them."""


def _primitive(
    *targets: FsAccess, resolves: bool = False, reveals: bool = False, admits: bool = True
) -> Callable[[_F], _F]:
    """Declare the decorated forwarding method a primitive with this row (its name is the
    method's). With `admits` the decorator shows the call's target arguments (the first
    ``len(targets)`` after ``self``) to the hooks before the method runs, so a plain
    forwarder is one line; a method that must check otherwise (hide before it checks,
    filter what it answers, check when a block is entered) says ``admits=False``."""

    def declare(method: _F) -> _F:
        row = FsPrimitive(name=method.__name__, targets=targets, resolves=resolves, reveals=reveals)
        if row.name in _ROWS:
            raise TypeError(f"primitive {row.name} is declared twice")
        _ROWS[row.name] = row
        if not admits or not targets:
            return method
        names = tuple(inspect.signature(method).parameters)[1 : 1 + len(targets)]
        call = cast("Callable[..., Awaitable[Any]]", method)
        if len(targets) == 1:
            # One target (every primitive but `contains` and `move`): no tuples built per
            # call, each wrapper of a read's chain passes it on a few times per call.
            access, name = targets[0], names[0]

            @functools.wraps(method)
            async def admitted_one(self: WrapperFileSystem, *args: Any, **kwargs: Any) -> Any:
                target = args[0] if args else kwargs[name]
                if access.touch is FsTouch.READS and self.hides(target):
                    raise messages.not_found(access.verb, target.display_path)
                self.check(access, target)
                return await call(self, *args, **kwargs)

            return cast("_F", admitted_one)

        @functools.wraps(method)
        async def admitted(self: WrapperFileSystem, *args: Any, **kwargs: Any) -> Any:
            # Checked before anything is forwarded: a refused call never reaches `wrapped`.
            given = args[: len(names)]
            self._admit(row, *given, *(kwargs[name] for name in names[len(given) :]))
            return await call(self, *args, **kwargs)

        return cast("_F", admitted)

    return declare


def _join(base: str, rel: str) -> str:
    return base + rel if base.endswith("/") else f"{base}/{rel}"


class WrapperFileSystem(FileSystem):
    """A provider around `wrapped`: every primitive forwarded once, checked by the hooks.

    Subclasses keep their state and override the hooks; the defaults let everything
    through. For each target argument of a call, in order: a `READS` target that `hides`
    answers as absent (`stat` None, reads `FS_NOT_FOUND` naming the row's verb), then
    `check` may refuse (raise `FsError`). Listings, walks and searches are filtered by
    `reveals`/`shows` when `filters` says the directory may hold something hidden.

    Args:
        wrapped: The provider that does the work; the wrapper owns it (closes it).
    """

    def __init__(self, wrapped: FileSystem) -> None:
        self.wrapped = wrapped
        """The provider every primitive is forwarded to."""
        self.capabilities = wrapped.capabilities

    @property
    def roots(self) -> tuple[str, ...]:
        """The wrapped provider's roots."""
        return self.wrapped.roots

    # -- hooks ---------------------------------------------------------------------------

    def hides(self, target: FsTarget) -> bool:
        """Whether `target` does not exist through this wrapper (asked of `READS` targets;
        default: never)."""
        del target
        return False

    def check(self, access: FsAccess, target: FsTarget) -> None:
        """Refuse `access` to `target` by raising `FsError` (default: allow)."""
        del access, target

    def where(self, path: str, cwd: str | None) -> str | None:
        """The `cwd` to forward for a path-based primitive (`resolve`, `lstat`); may refuse
        an unusable path (default: `cwd` as given)."""
        del path
        return cwd

    def filters(self, root: FsTarget) -> bool:
        """Whether a listing, walk or search of `root` may show something hidden (default:
        never; then answers are passed on untouched)."""
        del root
        return False

    def reveals(self, root: FsTarget, path: str) -> bool:
        """Whether the entry at `path` (relative, ``/``-joined) below `root` may be shown or
        entered; no I/O: asked of every walk's directory and every searcher's hit."""
        del root, path
        return True

    async def shows(self, parent: FsTarget, name: str, kind: FsFileType) -> bool:
        """Whether a child found by listing or walking may be shown (default: `reveals`; a
        wrapper may look where a link leads)."""
        del kind
        return self.reveals(parent, name)

    def excluded(self, root: FsTarget) -> tuple[str, ...]:
        """Gitignore lines relative to `root` a native searcher need not open (what it
        reports is filtered by `reveals` all the same)."""
        del root
        return ()

    # -- the checks, by row ----------------------------------------------------------------

    def _admit(self, row: FsPrimitive, *targets: FsTarget) -> None:
        for access, target in zip(row.targets, targets, strict=True):
            if access.touch is FsTouch.READS and self.hides(target):
                raise messages.not_found(access.verb, target.display_path)
            self.check(access, target)

    @asynccontextmanager
    async def _entered(
        self,
        row: FsPrimitive,
        target: FsTarget,
        open_: Callable[[], AbstractAsyncContextManager[_T]],
    ) -> AsyncIterator[_T]:
        # Checked when the block is entered, not when the context manager is made.
        self._admit(row, target)
        async with open_() as inner:
            yield inner

    # -- names ---------------------------------------------------------------------------

    @_primitive(resolves=True)
    async def resolve(self, path: str, cwd: str | None = None) -> FsTarget:
        return await self.wrapped.resolve(path, self.where(path, cwd))

    @_primitive(resolves=True)
    async def walk_target(self, root: FsTarget, path: str) -> FsTarget:
        return await self.wrapped.walk_target(root, path)

    @_primitive(_NAMES)
    async def process_path(self, target: FsTarget) -> str:
        return await self.wrapped.process_path(target)

    @_primitive(_NAMES)
    async def file_url(self, target: FsTarget) -> str:
        return await self.wrapped.file_url(target)

    @_primitive(_NAMES, _NAMES)
    async def contains(self, parent: FsTarget, child: FsTarget) -> bool:
        return await self.wrapped.contains(parent, child)

    # -- reads ---------------------------------------------------------------------------

    @_primitive(_reads("read"), admits=False)
    async def stat(self, target: FsTarget) -> FsInfo | None:
        # Hidden before checked: a hidden place answers as absent, not refused, so that a
        # refusal's wording cannot tell a caller that something is there.
        if self.hides(target):
            return None
        self._admit(_STAT, target)
        return await self.wrapped.stat(target)

    @_primitive(_reads("read", link=True), resolves=True, admits=False)
    async def lstat(self, path: str, cwd: str | None = None) -> FsPathInfo | None:
        cwd = self.where(path, cwd)
        target = await self.wrapped.resolve(path, cwd)
        if self.hides(target):
            return None
        self._admit(_LSTAT, target)
        info = await self.wrapped.lstat(path, cwd)
        # The target key follows a final link; the entry itself is the spelled path, which
        # may lie in a hidden place while what it points to does not.
        if info is not None:
            spelled = FsTarget(
                target_key=FsTargetKey(info.display_path), display_path=info.display_path
            )
            if self.hides(spelled):
                return None
        return info

    @_primitive(_reads("read"))
    async def read_text(self, target: FsTarget) -> str:
        return await self.wrapped.read_text(target)

    @_primitive(_reads("read"))
    async def read_decoded(self, target: FsTarget) -> FsDecoded:
        # Forwarded, not the contract's default over `read_text`: the wrapped provider
        # names the codec it decoded (SPEC §12), which the default would call UTF-8.
        return await self.wrapped.read_decoded(target)

    @_primitive(_reads("read"), admits=False)
    async def read_decoded_at(
        self,
        target: FsTarget,
        version: FsVersion,
        *,
        change: Literal["edit", "write", "delete", "move"] | None = None,
    ) -> FsDecoded | None:
        if change is not None:
            # Checked as the change's own primitive checks it (and first, as that one
            # words a refusal): a set is refused at staging where its publication would
            # be, before any other file of it is published.
            self.check(_CHANGE_ACCESS[change], target)
        self._admit(_READ_DECODED_AT, target)
        # Forwarded, not the contract's default: only the wrapped provider knows what its
        # version token cannot tell.
        return await self.wrapped.read_decoded_at(target, version, change=change)

    @_primitive(_reads("read"), admits=False)
    async def read_small(self, target: FsTarget, max_bytes: int) -> FsSmallRead | None:
        # Hidden before checked, as `stat` is: a hidden place answers as absent (so the
        # row's check is all `_admit` would add).
        if self.hides(target):
            return None
        self.check(_READ_SMALL_ACCESS, target)
        return await self.wrapped.read_small(target, max_bytes)

    @_primitive(_reads("read"), admits=False)
    def stream_text(self, target: FsTarget) -> AbstractAsyncContextManager[AsyncIterator[str]]:
        return self._entered(_STREAM_TEXT, target, lambda: self.wrapped.stream_text(target))

    @_primitive(_reads("read"), admits=False)
    def stream_text_from(
        self, target: FsTarget, start: int = 0
    ) -> AbstractAsyncContextManager[FsTextStream]:
        return self._entered(
            _STREAM_TEXT_FROM, target, lambda: self.wrapped.stream_text_from(target, start)
        )

    @_primitive(_reads("read"))
    async def read_bytes(self, target: FsTarget, max_bytes: int) -> bytes:
        return await self.wrapped.read_bytes(target, max_bytes)

    @_primitive(_reads("read"), admits=False)
    async def read_many(self, targets: Sequence[FsTarget], max_bytes: int) -> list[bytes | FsError]:
        # Each target is admitted as `read_bytes` admits it; a refused one is answered with
        # its refusal and never reaches `wrapped` (one refusal must not fail the others).
        answers: list[bytes | FsError | None] = []
        admitted: list[FsTarget] = []
        for target in targets:
            try:
                self._admit(_READ_MANY, target)
            except FsError as error:
                answers.append(error)
            else:
                answers.append(None)
                admitted.append(target)
        read = iter(await self.wrapped.read_many(admitted, max_bytes) if admitted else ())
        return [answer if answer is not None else next(read) for answer in answers]

    @_primitive(_reads("read"))
    async def read_head(self, target: FsTarget, size: int) -> bytes:
        return await self.wrapped.read_head(target, size)

    # -- listings and searches -------------------------------------------------------------

    @_primitive(_reads("list"), reveals=True, admits=False)
    async def list_dir(self, target: FsTarget) -> list[FsDirEntry]:
        self._admit(_LIST_DIR, target)
        entries = await self.wrapped.list_dir(target)
        if not self.filters(target):
            return entries
        return [e for e in entries if await self.shows(target, e.name, e.type)]

    @_primitive(_reads("list"), reveals=True, admits=False)
    async def list_dir_first(self, target: FsTarget, limit: int) -> FsDirListing:
        if limit < 0:
            raise ValueError(f"limit must not be negative, got {limit}")
        self._admit(_LIST_DIR_FIRST, target)
        if not self.filters(target):
            return await self.wrapped.list_dir_first(target, limit)
        # Counting needs every child's verdict: the whole listing, filtered.
        children = [
            e
            for e in await self.wrapped.list_dir(target)
            if await self.shows(target, e.name, e.type)
        ]
        return FsDirListing(entries=tuple(children[:limit]), total=len(children))

    @_primitive(_reads("search"), reveals=True, admits=False)
    def walk(
        self, root: FsTarget, *, descend: Callable[[str], bool] | None = None
    ) -> AbstractAsyncContextManager[AsyncIterator[list[FsWalkEntry]]]:
        return self._walk(root, descend)

    @asynccontextmanager
    async def _walk(
        self, root: FsTarget, descend: Callable[[str], bool] | None
    ) -> AsyncIterator[AsyncIterator[list[FsWalkEntry]]]:
        self._admit(_WALK, root)
        if not self.filters(root):
            async with self.wrapped.walk(root, descend=descend) as batches:
                yield batches
            return

        def enter(path: str) -> bool:
            # A hidden directory is never entered: nothing below it is even listed.
            if not self.reveals(root, path):
                return False
            return descend(path) if descend is not None else True

        async with self.wrapped.walk(root, descend=enter) as batches:
            yield self._filtered_walk(root, batches)

    async def _filtered_walk(
        self, root: FsTarget, batches: AsyncIterator[list[FsWalkEntry]]
    ) -> AsyncIterator[list[FsWalkEntry]]:
        async for batch in batches:
            shown = [e for e in batch if await self.shows(root, e.path, e.type)]
            if shown:  # a directory whose every child is hidden has no batch, like an empty one
                yield shown

    @_primitive(_reads("search"), reveals=True, admits=False)
    def native_grep(
        self, root: FsTarget, query: FsGrepQuery
    ) -> AbstractAsyncContextManager[AsyncIterator[list[FsGrepHit]]] | None:
        # The searcher is told to skip the hidden places (it need not open them); what it
        # reports is filtered all the same, the exclusion being only a saving.
        excluded = self.excluded(root)
        if excluded:
            query = dataclasses.replace(query, excluded=(*query.excluded, *excluded))
        inner = self.wrapped.native_grep(root, query)
        if inner is None:
            return None
        return self._native(_NATIVE_GREP, root, inner, lambda hit: hit.path)

    @_primitive(_reads("search"), reveals=True, admits=False)
    def native_glob(
        self, root: FsTarget, query: FsGlobQuery
    ) -> AbstractAsyncContextManager[AsyncIterator[list[str]]] | None:
        excluded = self.excluded(root)
        if excluded:
            query = dataclasses.replace(query, excluded=(*query.excluded, *excluded))
        inner = self.wrapped.native_glob(root, query)
        if inner is None:
            return None
        return self._native(_NATIVE_GLOB, root, inner, lambda path: path)

    @asynccontextmanager
    async def _native(
        self,
        row: FsPrimitive,
        root: FsTarget,
        inner: AbstractAsyncContextManager[AsyncIterator[list[_T]]],
        path_of: Callable[[_T], str],
    ) -> AsyncIterator[AsyncIterator[list[_T]]]:
        self._admit(row, root)
        async with inner as batches:
            if not self.filters(root):
                yield batches
            else:
                yield self._filtered_native(root, batches, path_of)

    async def _filtered_native(
        self, root: FsTarget, batches: AsyncIterator[list[_T]], path_of: Callable[[_T], str]
    ) -> AsyncIterator[list[_T]]:
        async for found in batches:
            # A searcher reports files reached without following links: their spelled and
            # real paths are the root's joined with the path it gives.
            batch = [item for item in found if self.reveals(root, path_of(item))]
            if batch:
                yield batch

    # -- changes -------------------------------------------------------------------------

    @_primitive(_changes("write"))
    async def write_text(
        self,
        target: FsTarget,
        content: str,
        expected: WriteGuard | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsWriteOutcome:
        return await self.wrapped.write_text(target, content, expected, capture=capture)

    @_primitive(_changes("edit", reads=True))
    async def edit_text(
        self,
        target: FsTarget,
        edit: FsEdit,
        expected: FsVersion | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsEditOutcome:
        return await self.wrapped.edit_text(target, edit, expected, capture=capture)

    @_primitive(_changes("delete", reads=True))
    async def delete(
        self,
        target: FsTarget,
        expected: FsVersion | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsDeleteOutcome:
        return await self.wrapped.delete(target, expected, capture=capture)

    # An undo's change lands only where a tool could write (and read: its guard reads).
    @_primitive(_changes("write", reads=True))
    async def restore(
        self,
        target: FsTarget,
        pre_image: FsPreImage | None,
        expected: FsVersion | None,
        *,
        mode: int | None = None,
        capture: FsCapture | None = None,
    ) -> FsVersion | None:
        return await self.wrapped.restore(target, pre_image, expected, mode=mode, capture=capture)

    @_primitive(_changes("mkdir"))
    async def mkdir(self, target: FsTarget, *, capture: FsCapture | None = None) -> FsMkdirOutcome:
        return await self.wrapped.mkdir(target, capture=capture)

    @_primitive(_entry("delete", link=True))
    async def delete_link(self, target: FsTarget) -> None:
        await self.wrapped.delete_link(target)

    @_primitive(_entry("delete"))
    async def delete_dir(self, target: FsTarget) -> None:
        await self.wrapped.delete_dir(target)

    @_primitive(_entry("move", reads=True, link=True), _entry("move"))
    async def move(
        self,
        source: FsTarget,
        destination: FsTarget,
        expected: FsVersion | None = None,
        replace: WriteGuard | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsMoveOutcome:
        return await self.wrapped.move(source, destination, expected, replace, capture=capture)

    @_primitive()
    def batch(self) -> AbstractAsyncContextManager[None]:
        return self.wrapped.batch()

    @_primitive()
    async def aclose(self) -> None:
        await self.wrapped.aclose()


PRIMITIVES: Mapping[str, FsPrimitive] = dict(_ROWS)
"""Every `FileSystem` primitive (tests/fs/test_wrapper.py holds the contract to it): what
it does to each target, as the forwarding methods of `WrapperFileSystem` declare it. The
hooks decide from these rows."""

_STAT = PRIMITIVES["stat"]
_READ_DECODED_AT = PRIMITIVES["read_decoded_at"]
_CHANGE_ACCESS: Mapping[str, FsAccess] = {
    "edit": PRIMITIVES["edit_text"].targets[0],
    "write": PRIMITIVES["write_text"].targets[0],
    "delete": PRIMITIVES["delete"].targets[0],
    "move": PRIMITIVES["move"].targets[0],
}
"""The access of the primitive that makes each change `read_decoded_at` may be made for."""
(_READ_SMALL_ACCESS,) = PRIMITIVES["read_small"].targets
_LSTAT = PRIMITIVES["lstat"]
_STREAM_TEXT = PRIMITIVES["stream_text"]
_READ_MANY = PRIMITIVES["read_many"]
_STREAM_TEXT_FROM = PRIMITIVES["stream_text_from"]
_LIST_DIR = PRIMITIVES["list_dir"]
_LIST_DIR_FIRST = PRIMITIVES["list_dir_first"]
_WALK = PRIMITIVES["walk"]
_NATIVE_GREP = PRIMITIVES["native_grep"]
_NATIVE_GLOB = PRIMITIVES["native_glob"]

_PLAIN = re.compile(r"[A-Za-z0-9._/+=@%,~-]+")
"""The characters a path below a searcher's root may use to be handed to it as an exclusion
(those every gitignore implementation reads literally)."""


def _below(path: str, place: str) -> bool:
    """Whether `path` is `place` or lies inside it, by components (never by string prefix:
    ``/s/journal-x`` is not inside ``/s/journal``)."""
    return path == place or path.startswith(place.rstrip("/") + "/")


class FenceOut(WrapperFileSystem):
    """`wrapped` with `places` out of reach of every primitive: what lies there reads as
    absent (`stat` None, reads `FS_NOT_FOUND`), listings, walks and searches never show it,
    and every change naming it is `FS_SANDBOX_DENIED` (`messages.fenced_out`).

    The workspace puts the change journal's store behind one whenever it journals, in
    every mode (the store holds every root's pre-images: a model that could read it would
    read deleted content, one that could write it could forge undo records). Each check
    tests the path as spelled and the target key (every link followed, for local
    providers), so a link into a place is inside it. A link to a place shows in its
    directory's listing as a link; nothing is read through it.

    Args:
        wrapped: The provider; the wrapper owns it.
        places: Canonical absolute paths (or URLs, as the provider's target keys spell
            them) of directories no tool may reach.
        what: What the places are, for the refusal (``the change journal's store``).
    """

    def __init__(self, wrapped: FileSystem, places: tuple[str, ...], what: str) -> None:
        super().__init__(wrapped)
        self.places = tuple(place.rstrip("/") or place for place in places)
        """The fenced-out directories."""
        self.what = what
        """What they are (named in refusals)."""
        # `_below` for every place at once, in C: asked up to five times per read.
        self._exact = frozenset(self.places)
        self._prefixes = tuple(place.rstrip("/") + "/" for place in self.places)

    def _inside(self, *paths: str) -> bool:
        exact, prefixes = self._exact, self._prefixes
        return any(path in exact or path.startswith(prefixes) for path in paths)

    def hides(self, target: FsTarget) -> bool:
        display, key = target.display_path, target.target_key
        exact, prefixes = self._exact, self._prefixes
        return (
            display.startswith(prefixes)
            or key.startswith(prefixes)
            or display in exact
            or key in exact
        )

    def check(self, access: FsAccess, target: FsTarget) -> None:
        # Names read nothing: a caller spelling a path learns only its own spelling. Every
        # other touch of a fenced place is refused (reads were answered absent already).
        if access.touch is FsTouch.NAMES:
            return
        if self.hides(target):
            raise messages.fenced_out(access.verb, target.display_path, self.what)
        # An entry moved or removed takes what lies inside it along: a directory that holds
        # a place would carry it where no fence names it (then every tool reaches it).
        if access.touch is FsTouch.ENTRY and any(
            _below(place, path)
            for place in self.places
            for path in (target.display_path, str(target.target_key))
        ):
            raise messages.holds_fenced_out(access.verb, target.display_path, self.what)

    def filters(self, root: FsTarget) -> bool:
        # Only a directory above a place can list it; everywhere else answers pass through.
        return any(
            _below(place, path)
            for place in self.places
            for path in (root.display_path, str(root.target_key))
        )

    def reveals(self, root: FsTarget, path: str) -> bool:
        return not self._inside(_join(root.display_path, path), _join(str(root.target_key), path))

    def excluded(self, root: FsTarget) -> tuple[str, ...]:
        key = str(root.target_key).rstrip("/")
        lines = []
        for place in self.places:
            if _below(place, key) and place != key:
                relative = place[len(key) :].strip("/")
                # A name with gitignore's special characters could match something else
                # (or less): it is not handed on, and `reveals` alone filters it.
                if _PLAIN.fullmatch(relative):
                    lines.append(f"/{relative}/")
        return tuple(lines)
