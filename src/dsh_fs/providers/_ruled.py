"""`RuledFileSystem`: path rules (SPEC §10) as a wrapper around any provider.

A denied path does not exist: `stat`/`lstat` answer None, reads and lists `FS_NOT_FOUND`,
listings, walks and both searchers (the walk-based engine and ripgrep) never show it, and
every mutation naming it is `FS_SANDBOX_DENIED` ``... denied by rule "<pattern>"``. A
protected path reads as usual; every mutation of it is ``... protected by rule "<pattern>"``.
Each check tests the path as spelled (the display path) and its real path (the target key,
every link followed), so a link to ``.env`` is ``.env``.
"""

from __future__ import annotations

from dsh_fs.errors import FsError
from dsh_fs.fs import (
    FileSystem,
    FsAccess,
    FsFileType,
    FsTarget,
    FsTouch,
    PathRules,
    RuleMatch,
    WrapperFileSystem,
)

__all__ = ["RuledFileSystem"]


def _join(base: str, rel: str) -> str:
    return base + rel if base.endswith("/") else f"{base}/{rel}"


class RuledFileSystem(WrapperFileSystem):
    """`inner` with `rules` applied to every primitive.

    Args:
        inner: The provider (local, sandbox, fsspec, …); the wrapper owns it.
        rules: The compiled rules (`PathRules.compile(Rules(...), roots)`).
    """

    def __init__(self, inner: FileSystem, rules: PathRules) -> None:
        super().__init__(inner)
        self._rules = rules

    @property
    def inner(self) -> FileSystem:
        """The wrapped provider."""
        return self.wrapped

    @property
    def rules(self) -> PathRules:
        """The rules applied."""
        return self._rules

    def _match(self, target: FsTarget) -> RuleMatch | None:
        return self._rules.match((target.display_path, str(target.target_key)))

    # -- the rules, as the hooks of `WrapperFileSystem` --------------------------------------

    def hides(self, target: FsTarget) -> bool:
        """A denied path does not exist: its spelled path or its real path (a link to
        ``.env`` is ``.env``)."""
        if self._rules.denies_nothing:
            return False
        found = self._match(target)
        return found is not None and found.kind == "deny"

    def check(self, access: FsAccess, target: FsTarget) -> None:
        """Every change naming a denied or protected path is refused with the rule's words;
        reads were answered (a denied path is absent, a protected one readable)."""
        if access.touch is FsTouch.CHANGES or (access.touch is FsTouch.ENTRY and not access.link):
            found = self._match(target)
        elif access.touch is FsTouch.ENTRY:
            found = self._entry_match(target)
        else:
            return
        if found is not None:
            raise self._rules.refusal(access.verb, target.display_path, found)

    def _entry_match(self, target: FsTarget) -> RuleMatch | None:
        """The rule on an entry that may be a link itself: its spelled path, and its real
        path unless it is a link (a moved or removed link leaves what it points to as it
        was)."""
        found = self._rules.match((target.display_path,))
        if found is None:
            # The key follows a final link; the link's target is not changed, so only a
            # rule on the entry's real place counts: the key when no link is in between.
            found = self._rules.match((str(target.target_key),))
            if found is not None and found.kind == "protect":
                found = None
        return found

    def filters(self, root: FsTarget) -> bool:
        # Protected paths are listed as any other: only deny patterns filter.
        del root
        return not self._rules.denies_nothing

    def reveals(self, root: FsTarget, path: str) -> bool:
        display, key = _join(root.display_path, path), _join(str(root.target_key), path)
        return self._rules.denied((display, key)) is None

    async def shows(self, parent: FsTarget, name: str, kind: FsFileType) -> bool:
        """Its spelled path, its real path through `parent`, and for a link the real path
        it leads to."""
        if not self.reveals(parent, name):
            return False
        if kind is FsFileType.SYMLINK:
            try:
                target = await self.wrapped.resolve(_join(parent.display_path, name))
            except FsError:
                return True
            return not self.hides(target)
        return True

    def excluded(self, root: FsTarget) -> tuple[str, ...]:
        """The denied paths below `root` a searcher need not even open (what it reports is
        filtered all the same)."""
        return self._rules.excluded_below(str(root.target_key))
