"""`RuledFileSystem`: path rules (SPEC §10) as a wrapper around any provider.

A denied path does not exist: `stat`/`lstat` answer None, reads and lists `FS_NOT_FOUND`,
listings, walks and both searchers (the walk-based engine and ripgrep) never show it, and
every mutation naming it is `FS_SANDBOX_DENIED` ``... denied by rule "<pattern>"``. A
protected path reads as usual; every mutation of it is ``... protected by rule "<pattern>"``.
Each check tests the path as spelled (the display path) and its real path (the target key,
every link followed), so a link to ``.env`` is ``.env``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TypeVar

from dsh_fs.errors import FsError
from dsh_fs.fs import (
    FileSystem,
    FsCapabilities,
    FsCapture,
    FsDecoded,
    FsDeleteOutcome,
    FsDirEntry,
    FsDirListing,
    FsEdit,
    FsEditOutcome,
    FsFileType,
    FsGlobQuery,
    FsGrepHit,
    FsGrepQuery,
    FsInfo,
    FsMkdirOutcome,
    FsMoveOutcome,
    FsPathInfo,
    FsPreImage,
    FsTarget,
    FsTextStream,
    FsVersion,
    FsWalkEntry,
    FsWriteOutcome,
    PathRules,
    RuleMatch,
    WriteGuard,
    messages,
)

__all__ = ["RuledFileSystem"]

_T = TypeVar("_T")


def _join(base: str, rel: str) -> str:
    return base + rel if base.endswith("/") else f"{base}/{rel}"


class RuledFileSystem(FileSystem):
    """`inner` with `rules` applied to every primitive.

    Args:
        inner: The provider (local, sandbox, fsspec, …); the wrapper owns it.
        rules: The compiled rules (`PathRules.compile(Rules(...), roots)`).
    """

    def __init__(self, inner: FileSystem, rules: PathRules) -> None:
        self._inner = inner
        self._rules = rules
        self.capabilities: FsCapabilities = inner.capabilities

    @property
    def inner(self) -> FileSystem:
        """The wrapped provider."""
        return self._inner

    @property
    def rules(self) -> PathRules:
        """The rules applied."""
        return self._rules

    def __getattr__(self, name: str) -> object:
        # The wrapped provider's own attributes (`roots`, `base`, `root`, `mode`, …).
        return getattr(self._inner, name)

    def _match(self, target: FsTarget) -> RuleMatch | None:
        return self._rules.match((target.display_path, str(target.target_key)))

    def _hidden(self, target: FsTarget) -> bool:
        if self._rules.denies_nothing:
            return False
        found = self._match(target)
        return found is not None and found.kind == "deny"

    def _read(self, target: FsTarget, verb: messages.Verb = "read") -> None:
        if self._hidden(target):
            raise messages.not_found(verb, target.display_path)

    def _mutate(self, target: FsTarget, verb: messages.Verb) -> None:
        found = self._match(target)
        if found is None:
            return
        if found.kind == "deny":
            raise messages.rule_denied(verb, target.display_path, found.pattern)
        raise messages.rule_protected(verb, target.display_path, found.pattern)

    async def _shown(self, parent: FsTarget, name: str, kind: FsFileType) -> bool:
        """Whether a child found by listing or walking may be shown: its spelled path, its
        real path through `parent`, and for a link the real path it leads to."""
        display, key = _join(parent.display_path, name), _join(str(parent.target_key), name)
        if self._deny_only((display, key)) is not None:
            return False
        if kind is FsFileType.SYMLINK:
            try:
                target = await self._inner.resolve(display)
            except FsError:
                return True
            return not self._hidden(target)
        return True

    def _deny_only(self, paths: tuple[str, str]) -> RuleMatch | None:
        return self._rules.denied(paths)

    # Identity: untouched.

    async def resolve(self, path: str, cwd: str | None = None) -> FsTarget:
        return await self._inner.resolve(path, cwd)

    async def process_path(self, target: FsTarget) -> str:
        return await self._inner.process_path(target)

    async def file_url(self, target: FsTarget) -> str:
        return await self._inner.file_url(target)

    async def contains(self, parent: FsTarget, child: FsTarget) -> bool:
        return await self._inner.contains(parent, child)

    # Reads: a denied path is absent.

    async def stat(self, target: FsTarget) -> FsInfo | None:
        if self._hidden(target):
            return None
        return await self._inner.stat(target)

    async def lstat(self, path: str, cwd: str | None = None) -> FsPathInfo | None:
        if self._hidden(await self._inner.resolve(path, cwd)):
            return None
        info = await self._inner.lstat(path, cwd)
        if info is not None and self._deny_only((info.display_path, info.display_path)):
            return None
        return info

    async def read_text(self, target: FsTarget) -> str:
        self._read(target)
        return await self._inner.read_text(target)

    async def read_decoded(self, target: FsTarget) -> FsDecoded:
        self._read(target)
        return await self._inner.read_decoded(target)

    def stream_text(self, target: FsTarget) -> AbstractAsyncContextManager[AsyncIterator[str]]:
        return self._checked(target, lambda: self._inner.stream_text(target))

    def stream_text_from(
        self, target: FsTarget, start: int = 0
    ) -> AbstractAsyncContextManager[FsTextStream]:
        return self._checked(target, lambda: self._inner.stream_text_from(target, start))

    @asynccontextmanager
    async def _checked(
        self, target: FsTarget, open_: Callable[[], AbstractAsyncContextManager[_T]]
    ) -> AsyncIterator[_T]:
        self._read(target)
        async with open_() as inner:
            yield inner

    async def read_bytes(self, target: FsTarget, max_bytes: int) -> bytes:
        self._read(target)
        return await self._inner.read_bytes(target, max_bytes)

    async def read_head(self, target: FsTarget, size: int) -> bytes:
        self._read(target)
        return await self._inner.read_head(target, size)

    async def list_dir(self, target: FsTarget) -> list[FsDirEntry]:
        self._read(target, "list")
        entries = await self._inner.list_dir(target)
        if self._rules.denies_nothing:
            return entries
        return [e for e in entries if await self._shown(target, e.name, e.type)]

    async def list_dir_first(self, target: FsTarget, limit: int) -> FsDirListing:
        if self._rules.denies_nothing:  # protected paths are listed as any other
            return await self._inner.list_dir_first(target, limit)
        self._read(target, "list")
        # Counting needs every child's verdict: the whole listing, filtered.
        children = await self.list_dir(target)
        if limit < 0:
            raise ValueError(f"limit must not be negative, got {limit}")
        return FsDirListing(entries=tuple(children[:limit]), total=len(children))

    def walk(
        self, root: FsTarget, *, descend: Callable[[str], bool] | None = None
    ) -> AbstractAsyncContextManager[AsyncIterator[list[FsWalkEntry]]]:
        return self._walk(root, descend)

    @asynccontextmanager
    async def _walk(
        self, root: FsTarget, descend: Callable[[str], bool] | None
    ) -> AsyncIterator[AsyncIterator[list[FsWalkEntry]]]:
        self._read(root, "search")

        def enter(path: str) -> bool:
            display, key = _join(root.display_path, path), _join(str(root.target_key), path)
            if self._deny_only((display, key)) is not None:
                return False
            return descend(path) if descend is not None else True

        async with self._inner.walk(root, descend=enter) as batches:
            yield batches if self._rules.denies_nothing else self._filtered_walk(root, batches)

    async def _filtered_walk(
        self, root: FsTarget, batches: AsyncIterator[list[FsWalkEntry]]
    ) -> AsyncIterator[list[FsWalkEntry]]:
        async for batch in batches:
            shown = [e for e in batch if await self._shown(root, e.path, e.type)]
            if shown:  # a directory whose every child is denied has no batch, like an empty one
                yield shown

    async def walk_target(self, root: FsTarget, path: str) -> FsTarget:
        return await self._inner.walk_target(root, path)

    def native_grep(
        self, root: FsTarget, query: FsGrepQuery
    ) -> AbstractAsyncContextManager[AsyncIterator[list[FsGrepHit]]] | None:
        excluded = self._excluded(root)
        if excluded:
            query = dataclasses.replace(query, excluded=(*query.excluded, *excluded))
        inner = self._inner.native_grep(root, query)
        if inner is None:
            return None
        return self._native(root, inner, lambda hit: hit.path)

    def native_glob(
        self, root: FsTarget, query: FsGlobQuery
    ) -> AbstractAsyncContextManager[AsyncIterator[list[str]]] | None:
        excluded = self._excluded(root)
        if excluded:
            query = dataclasses.replace(query, excluded=(*query.excluded, *excluded))
        inner = self._inner.native_glob(root, query)
        if inner is None:
            return None
        return self._native(root, inner, lambda path: path)

    def _excluded(self, root: FsTarget) -> tuple[str, ...]:
        """The denied paths below `root` a searcher need not even open (what it reports is
        filtered all the same)."""
        return self._rules.excluded_below(str(root.target_key))

    @asynccontextmanager
    async def _native(
        self,
        root: FsTarget,
        inner: AbstractAsyncContextManager[AsyncIterator[list[_T]]],
        path_of: Callable[[_T], str],
    ) -> AsyncIterator[AsyncIterator[list[_T]]]:
        self._read(root, "search")
        async with inner as batches:
            if self._rules.denies_nothing:
                yield batches
            else:
                yield self._filtered_native(root, batches, path_of)

    async def _filtered_native(
        self,
        root: FsTarget,
        batches: AsyncIterator[list[_T]],
        path_of: Callable[[_T], str],
    ) -> AsyncIterator[list[_T]]:
        async for found in batches:
            # A searcher reports files reached without following links: their spelled and
            # real paths are the root's joined with the path it gives.
            batch = [
                item
                for item in found
                if self._deny_only(
                    (
                        _join(root.display_path, path_of(item)),
                        _join(str(root.target_key), path_of(item)),
                    )
                )
                is None
            ]
            if batch:
                yield batch

    # Mutations: refused for denied and protected paths.

    async def write_text(
        self,
        target: FsTarget,
        content: str,
        expected: WriteGuard | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsWriteOutcome:
        self._mutate(target, "write")
        return await self._inner.write_text(target, content, expected, capture=capture)

    async def edit_text(
        self,
        target: FsTarget,
        edit: FsEdit,
        expected: FsVersion | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsEditOutcome:
        self._mutate(target, "edit")
        return await self._inner.edit_text(target, edit, expected, capture=capture)

    async def delete(
        self,
        target: FsTarget,
        expected: FsVersion | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsDeleteOutcome:
        self._mutate(target, "delete")
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
        self._mutate(target, "write")
        return await self._inner.restore(target, pre_image, expected, mode=mode, capture=capture)

    async def delete_link(self, target: FsTarget) -> None:
        # The link's own place (not what it points to, which it does not change).
        self._mutate_place(target, "delete")
        await self._inner.delete_link(target)

    async def delete_dir(self, target: FsTarget) -> None:
        self._mutate(target, "delete")
        await self._inner.delete_dir(target)

    async def mkdir(self, target: FsTarget, *, capture: FsCapture | None = None) -> FsMkdirOutcome:
        self._mutate(target, "mkdir")
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
        self._mutate_place(source, "move")
        self._mutate(destination, "move")
        if capture is None:
            return await self._inner.move(source, destination, expected, replace)
        return await self._inner.move(source, destination, expected, replace, capture=capture)

    def _mutate_place(self, target: FsTarget, verb: messages.Verb) -> None:
        """`_mutate` of the entry itself: its spelled path, and its real path unless it is
        a link (a moved or removed link leaves what it points to as it was)."""
        found = self._rules.match((target.display_path,))
        if found is None:
            # The key follows a final link; the link's target is not changed, so only a
            # rule on the entry's real place counts: the key when no link is in between.
            found = self._rules.match((str(target.target_key),))
            if found is not None and found.kind == "protect":
                found = None
        if found is None:
            return
        if found.kind == "deny":
            raise messages.rule_denied(verb, target.display_path, found.pattern)
        raise messages.rule_protected(verb, target.display_path, found.pattern)

    async def aclose(self) -> None:
        await self._inner.aclose()
