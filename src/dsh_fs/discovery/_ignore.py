"""Which entries a grep skips, as ripgrep decides by default: ignore files and hidden names.

``.rgignore``, ``.ignore`` and ``.gitignore`` (the last only inside a git work tree: a
directory with ``.git`` at or above it) in a directory govern what lies below it; a deeper
directory's rules win over its parents', and in one directory ``.rgignore`` wins over
``.ignore``, which wins over ``.gitignore``. The search root's parent directories count too,
as far up as the provider lets the search read. Rules are parsed by `pathspec` (git's own
wildmatch semantics, negations included).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import re2

from ._globs import matchable

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

__all__ = ["IGNORE_FILES", "IgnoreRules", "is_hidden"]

IGNORE_FILES: tuple[str, ...] = (".rgignore", ".ignore", ".gitignore")
"""Ignore files, strongest first."""


def is_hidden(name: str) -> bool:
    """A hidden entry (skipped by grep, with everything below it)."""
    return name.startswith(".")


def _parent(path: str) -> str:
    return path.rpartition("/")[0]


class IgnoreRules:
    """The ignore rules in force during one walk; memory holds one entry per ignore file."""

    __slots__ = ("_above", "_below", "_repos", "_root_in_git")

    def __init__(self) -> None:
        self._below: dict[str, list[_Spec]] = {}
        self._above: list[tuple[str, list[_Spec]]] = []
        self._repos: set[str] = set()
        self._root_in_git = False

    def set_ancestors(self, ancestors: list[tuple[str, dict[str, bytes], bool]]) -> None:
        """The search root's parents, nearest first: for each, the path from it down to the
        root (with a trailing ``/``), the content of its ignore files, and whether it holds
        ``.git``. A parent's `.gitignore` counts only if that parent is in a git work tree
        (``.git`` in it or further up). As in ripgrep, a parent's rule that matches a
        directory between that parent and the root (a root inside an ignored directory) does
        not hide the root's contents: such rules are dropped."""
        in_git = False
        kept: list[tuple[str, list[_Spec]]] = []
        for lead, texts, has_git in reversed(ancestors):
            in_git = in_git or has_git
            usable = texts if in_git else {k: v for k, v in texts.items() if k != ".gitignore"}
            kept.append((lead, texts_to_specs(usable, _directories(lead))))
        kept.reverse()
        self._above = [(lead, specs) for lead, specs in kept if specs]
        self._root_in_git = in_git

    def in_git(self, directory: str) -> bool:
        """Whether `directory` (relative to the root) is inside a git work tree."""
        if self._root_in_git:
            return True
        while True:
            if directory in self._repos:
                return True
            if not directory:
                return False
            directory = _parent(directory)

    def add_directory(self, directory: str, names: set[str], texts: dict[str, bytes]) -> None:
        """The ignore files found in `directory` (relative to the root; ``""`` for it), whose
        entries are `names`: `texts` holds the content of those present."""
        if ".git" in names:
            self._repos.add(directory)
        specs = texts_to_specs(texts)
        if specs:
            self._below[directory] = specs

    def wanted(self, directory: str, names: set[str]) -> tuple[str, ...]:
        """The ignore files of `directory` to read, given its entries' `names`."""
        in_git = ".git" in names or self.in_git(directory)
        return tuple(
            name for name in IGNORE_FILES if name in names and (name != ".gitignore" or in_git)
        )

    def ignored(self, path: str, is_dir: bool) -> bool:
        """Whether the entry at `path` (relative to the root) is excluded."""
        directory = _parent(path)
        while True:
            specs = self._below.get(directory)
            if specs:
                rel = path[len(directory) + 1 :] if directory else path
                decided = _decide(specs, rel, is_dir)
                if decided is not None:
                    return decided
            if not directory:
                break
            directory = _parent(directory)
        for lead, specs in self._above:
            decided = _decide(specs, lead + path, is_dir)
            if decided is not None:
                return decided
        return False


def texts_to_specs(texts: dict[str, bytes], above: tuple[str, ...] = ()) -> list[_Spec]:
    """Parsed rules, strongest file first, without the rules that match one of the
    directories `above` the search root (``a/``, ``a/b/``)."""
    specs = []
    for name in IGNORE_FILES:
        data = texts.get(name)
        if data:
            # U+FFFD for a byte that is not UTF-8, as names are matched (`matchable`).
            lines = data.decode("utf-8", "replace").splitlines()
            if above:
                lines = [line for line in lines if not _matches_any(line, above)]
            specs.append(_Spec(_parse(lines)))
    return specs


def _directories(lead: str) -> tuple[str, ...]:
    """``a/b/`` → ``("a/", "a/b/")``."""
    parts = lead.rstrip("/").split("/")
    return tuple("/".join(parts[: index + 1]) + "/" for index in range(len(parts)))


def _matches_any(line: str, directories: tuple[str, ...]) -> bool:
    spec = _parse([line])
    return any(
        spec.check_file(matchable(directory)).include is not None for directory in directories
    )


def _decide(specs: list[_Spec], rel: str, is_dir: bool) -> bool | None:
    candidate = matchable(rel + "/" if is_dir else rel)
    for spec in specs:
        if spec.any is not None and spec.any.match(candidate) is None:
            continue
        include = spec.rules.check_file(candidate).include
        if include is not None:
            return include
    return None


_NAMED_GROUP = re.compile(r"\(\?P<[^>]+>")


class _Spec:
    """One ignore file's rules, with one regex that tells at once whether any rule matches
    (most paths match none; checking each rule in turn costs a call per rule)."""

    __slots__ = ("any", "rules")

    def __init__(self, rules: GitIgnoreSpec) -> None:
        self.rules = rules
        self.any: Any = None
        sources: list[str] = []
        for pattern in rules.patterns:
            if getattr(pattern, "include", None) is None:
                continue  # a comment or a blank line
            regex = getattr(pattern, "regex", None)
            if not isinstance(regex, re.Pattern):
                return  # a rule without a regex: no shortcut, every rule is asked
            # Named groups can't repeat across the alternatives: make them plain groups.
            sources.append(_NAMED_GROUP.sub("(?:", regex.pattern))
        if sources:
            # RE2, as the rules themselves (`_parse`): linear in the path, whatever the rules.
            options = re2.Options()
            options.log_errors = False
            try:
                joined = "|".join(f"(?:{source})" for source in sources)
                self.any = re2.compile(joined, options)
            except re2.error:  # pragma: no cover - the rules compiled one by one
                self.any = None


def _parse(lines: list[str]) -> GitIgnoreSpec:
    # Imported on the first ignore file a pure-engine walk meets, not at start-up: a server
    # answering `initialize` (or searching with ripgrep) never needs it.
    from pathspec import GitIgnoreSpec

    # The RE2 backend: matching is linear in the path whatever an ignore file says.
    return GitIgnoreSpec.from_lines(lines, backend="re2")
