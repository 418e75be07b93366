"""What a search keeps while results stream in: the first matches and the sampled paths.

Both engines feed the same collectors, in whatever order their results come, and memory
stays bounded by the caps (plus one name per top-level entry for glob), never by the tree.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from itertools import repeat
from operator import itemgetter

from ._lines import LineHit

__all__ = ["MatchCollector", "PathCollector", "path_key"]


_first = itemgetter(0)


def path_key(path: str) -> str:
    """The sort key of a relative path: component by component (``a/b`` before ``a-b``)."""
    return path.replace("/", "\x00")


class MatchCollector:
    """The first `limit` matching lines in path order, and how many there are in all."""

    __slots__ = ("_files", "_kept", "limit", "total")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        """How many matches are kept."""
        self.total = 0
        """How many matching lines were found."""
        self._files: dict[str, list[LineHit]] = {}
        self._kept = 0

    def add(self, path: str, hits: Iterable[LineHit], count: int) -> None:
        """`count` matching lines of the file at `path` (relative to the root), of which
        `hits` are the first ones, in line order."""
        self.total += count
        kept = self._files.setdefault(path, [])
        before = len(kept)
        kept.extend(hits)
        if not kept:
            del self._files[path]
        self._kept += len(kept) - before
        if self._kept > 2 * self.limit:
            self._prune()

    def _prune(self) -> None:
        kept: dict[str, list[LineHit]] = {}
        room = self.limit
        for path in sorted(self._files, key=path_key):
            if room <= 0:
                break
            hits = sorted(self._files[path], key=lambda hit: hit.number)[:room]
            kept[path] = hits
            room -= len(hits)
        self._files = kept
        self._kept = self.limit - room

    def matches(self) -> list[tuple[str, LineHit]]:
        """The kept matches: files in path order, lines ascending."""
        self._prune()
        return [(path, hit) for path, hits in self._files.items() for hit in hits]


class _Group:
    """The oldest files of one top-level entry."""

    __slots__ = ("files",)

    def __init__(self) -> None:
        self.files: list[tuple[int, str, str]] = []

    @property
    def first(self) -> tuple[int, str, str]:
        return self.files[0]


class PathCollector:
    """Files found by glob: all of them when they fit in `limit`, else a sample that takes
    one file from each top-level entry in turn (oldest first), as upstream does.

    Order is oldest modification first, then path. Memory: the kept files and one name per
    top-level entry under the search root.
    """

    __slots__ = ("_entries", "_groups", "limit", "total")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        """How many paths are shown."""
        self.total = 0
        """How many files matched."""
        self._entries: set[str] = set()
        self._groups: dict[str, _Group] = {}

    def add(self, path: str, order: int) -> None:
        """A matching file: its path relative to the search root, and where it comes in the
        oldest-first order (its modification time, or its rank in an ordered listing)."""
        self.total += 1
        top = path.partition("/")[0]
        self._entries.add(top)
        group = self._groups.get(top)
        if group is not None:
            room = 1 if len(self._entries) >= self.limit else self.limit
            if len(group.files) >= room and order > group.files[-1][0]:
                return  # later than every file this entry keeps: it can't be shown
        item = (order, path_key(path), path)
        if group is None:
            if len(self._groups) >= self.limit and self._is_full():
                worst = max(self._groups.items(), key=lambda kv: kv[1].first)
                if item >= worst[1].first:
                    return
                del self._groups[worst[0]]
            group = self._groups[top] = _Group()
        bisect.insort(group.files, item)
        if len(group.files) > self.limit:
            group.files.pop()
        if len(self._entries) >= self.limit:
            # With as many entries as slots, each shown entry gets exactly one slot: only
            # its oldest file can matter.
            del group.files[1:]

    def add_ordered(self, paths: list[str]) -> None:
        """Matching files that come, in this order, after every file added so far (a
        searcher that lists files oldest first): each is ranked by its arrival. Not to be
        mixed with `add`.

        The sample is the one `add` would make; the work per path is done at C speed (its
        top-level entry), and a Python step is spent only on the few files a sample can
        show.
        """
        groups, entries, limit = self._groups, self._entries, self.limit
        rank = self.total
        self.total += len(paths)
        tops = list(map(_first, map(str.partition, paths, repeat("/"))))
        present = dict.fromkeys(tops)  # in order of first arrival
        for top in present:
            if top not in entries:
                entries.add(top)
                # A later entry can't displace an earlier one: it joins only while there
                # is room for it.
                if len(groups) < limit or len(entries) < limit:
                    groups[top] = _Group()
        # With as many entries as slots, each shown entry gets one slot: only its oldest
        # file can matter (earlier extra files are harmless: the sample never reaches them).
        room = 1 if len(entries) >= limit else limit
        open_groups = {top for top in present if top in groups and len(groups[top].files) < room}
        if not open_groups:
            return
        for index, top in enumerate(tops):
            if top in open_groups:
                path = paths[index]
                files = groups[top].files
                files.append((rank + index + 1, path_key(path), path))
                if len(files) >= room:
                    open_groups.discard(top)
                    if not open_groups:
                        return

    def _is_full(self) -> bool:
        return len(self._entries) >= self.limit

    def sample(self) -> tuple[list[str], int, int]:
        """The paths to show, how many top-level entries they reach, and how many there
        are in all."""
        if self.total <= self.limit:
            every = sorted(item for group in self._groups.values() for item in group.files)
            return [item[2] for item in every], len(self._entries), len(self._entries)
        ordered = sorted(self._groups.values(), key=lambda group: group.first)
        taken: list[list[str]] = [[] for _ in ordered]
        count, depth = 0, 0
        while count < self.limit:
            progressed = False
            for index, group in enumerate(ordered):
                if count >= self.limit:
                    break
                if depth < len(group.files):
                    taken[index].append(group.files[depth][2])
                    count += 1
                    progressed = True
            if not progressed:
                break
            depth += 1
        shown = sum(1 for paths in taken if paths)
        return [path for paths in taken for path in paths], shown, len(self._entries)
