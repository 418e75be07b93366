"""Path rules (SPEC §10): paths that are denied (they do not exist for any tool) or protected
(readable, never changed), in gitignore syntax relative to each root.

`Rules` is what a caller writes; `PathRules` is the compiled matcher a provider wrapper and
the rules plugin share. Pure: no I/O, the caller gives the paths to test (the path as spelled
and its real path).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from dsh_fs.errors import FsError

from . import messages

if TYPE_CHECKING:
    from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

__all__ = ["DEFAULT_PROTECT", "PathRules", "RuleMatch", "Rules"]

DEFAULT_PROTECT: tuple[str, ...] = (".git/",)
"""What is protected unless the default rules are dropped."""

_DECIDED = 4096
"""How many paths' answers a `PathRules` keeps (all are dropped when it is full)."""

_PLAIN = re.compile(r"[A-Za-z0-9._/*?+=@%,~-]+")
"""The characters a deny pattern may use to be handed to a native searcher: those every
gitignore implementation reads alike (no escapes, classes, braces or spaces)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Rules:
    """Which paths no tool may see (`deny`) and which none may change (`protect`).

    Patterns are gitignore lines, matched relative to each root (``.env``, ``secrets/``,
    ``*.pem``, ``/build``); a ``!`` pattern re-includes within its own kind. Deny wins over
    protect. `default_rules` adds `DEFAULT_PROTECT` (``.git/``) to `protect`.
    """

    deny: Sequence[str] = ()
    """Denied patterns: reads answer as for an absent path, mutations are refused."""
    protect: Sequence[str] = ()
    """Protected patterns: readable and findable, every mutation refused."""
    default_rules: bool = True
    """Protect ``.git/`` too."""

    @property
    def protected(self) -> tuple[str, ...]:
        """`protect` with the default rules, when they apply."""
        extra = tuple(p for p in DEFAULT_PROTECT if p not in self.protect)
        return (*extra, *self.protect) if self.default_rules else tuple(self.protect)


@dataclass(frozen=True, slots=True)
class RuleMatch:
    """A path a rule matched: its kind and the pattern (as written) that decided."""

    kind: Literal["deny", "protect"]
    pattern: str


@dataclass(frozen=True, slots=True)
class _Kind:
    patterns: tuple[tuple[str, GitIgnoreSpecPattern], ...]

    @property
    def negated(self) -> bool:
        """Whether a pattern re-includes (``!pattern``)."""
        return any(pattern.include is False for _, pattern in self.patterns)

    def match(self, relative: str) -> str | None:
        """The last pattern deciding `relative` (gitignore order), if it ends included."""
        decided: str | None = None
        for text, pattern in self.patterns:
            if pattern.include is None:
                continue
            if pattern.match_file(relative) is not None:
                decided = text if pattern.include else None
        return decided


@dataclass(frozen=True, slots=True)
class PathRules:
    """`Rules` compiled against the roots they are relative to."""

    roots: tuple[str, ...]
    """Absolute root paths (or URLs), without a trailing separator."""
    deny: _Kind = field(repr=False)
    protect: _Kind = field(repr=False)
    source: Rules = field(repr=True)
    _decided: dict[tuple[str, ...], RuleMatch | None] = field(
        default_factory=dict, repr=False, compare=False
    )
    """`match`'s answers by its paths (a pure function of them: the rules never change),
    up to `_DECIDED` of them; every path a read names is matched twice otherwise."""

    @classmethod
    def compile(cls, rules: Rules, roots: Iterable[str]) -> PathRules:
        """Parse every pattern.

        Raises:
            ValueError: a pattern gitignore syntax cannot parse (the message names it).
        """
        return cls(
            roots=tuple(_strip(root) for root in roots),
            deny=_compile(rules.deny, "deny"),
            protect=_compile(rules.protected, "protect"),
            source=rules,
        )

    @property
    def empty(self) -> bool:
        """No rule at all."""
        return not self.deny.patterns and not self.protect.patterns

    def match(self, paths: Iterable[str]) -> RuleMatch | None:
        """The rule that applies to any of `paths` (the path as spelled, its real path):
        deny first, then protect; None when neither does."""
        key = tuple(paths)
        try:
            return self._decided[key]
        except KeyError:
            pass
        found = self._match(key)
        if len(self._decided) >= _DECIDED:
            self._decided.clear()
        self._decided[key] = found
        return found

    def refusal(self, verb: messages.Verb, path: str, found: RuleMatch) -> FsError:
        """The refusal of a change naming `path` that `found` decided (FS_SANDBOX_DENIED):
        ``cannot <verb> "<path>": denied by rule "<pattern>"`` or ``… protected by rule
        "<pattern>"`` (the provider wrapper and the rules plugin both refuse with it)."""
        if found.kind == "deny":
            return messages.rule_denied(verb, path, found.pattern)
        return messages.rule_protected(verb, path, found.pattern)

    @property
    def denies_nothing(self) -> bool:
        """No deny pattern: every path exists for every tool (listings, walks and searches
        need no filtering; only mutations are checked)."""
        return not self.deny.patterns

    def denied(self, paths: Iterable[str]) -> RuleMatch | None:
        """The deny rule that applies to any of `paths`, if one does: `match` without the
        protect patterns, which do not hide (what a listing or a walk asks of each child;
        not kept, as a listing's children are seldom asked twice)."""
        if not self.deny.patterns:
            return None
        return self._match(tuple(paths), kinds=("deny",))

    def _match(
        self, paths: tuple[str, ...], kinds: tuple[str, ...] = ("deny", "protect")
    ) -> RuleMatch | None:
        # The spelled path and the real path are mostly the same below a root: each
        # relative path is matched once.
        relatives = list(dict.fromkeys(rel for path in paths for rel in self._relatives(path)))
        for kind in kinds:
            rules = self.deny if kind == "deny" else self.protect
            for relative in relatives:
                pattern = _match_with_parents(rules, relative)
                if pattern is not None:
                    return RuleMatch(kind, pattern)  # type: ignore[arg-type]
        return None

    def excluded_below(self, directory: str) -> tuple[str, ...]:
        """Gitignore lines, relative to `directory`, naming denied paths below it, for a
        native searcher to skip without opening them (ripgrep's ``--glob=!LINE``).

        Never more than the rules deny (what the lines cannot say exactly is left out: the
        caller still filters what the searcher reports): none when a deny pattern
        re-includes (``!``), and only patterns of plain characters, rebased where that is
        exact (an anchored pattern whose leading components name `directory` literally).
        """
        if any(pattern.include is False for _, pattern in self.deny.patterns):
            return ()  # a re-include: what is left denied is not a list of patterns
        texts = [
            text
            for text, pattern in self.deny.patterns
            if pattern.include and _PLAIN.fullmatch(text) and "//" not in text and text != "/"
        ]
        directory = _strip(directory)
        lines: list[str] = []
        for root in self.roots:
            if directory == root or directory.startswith(root.rstrip("/") + "/"):
                sub = directory[len(root) :].strip("/")
                lines += [line for text in texts if (line := _below(text, sub)) is not None]
            elif root.startswith(directory.rstrip("/") + "/"):
                prefix = root[len(directory) :].strip("/")
                if _PLAIN.fullmatch(prefix):
                    lines += [_above(text, prefix) for text in texts]
        return tuple(dict.fromkeys(lines))

    def _relatives(self, path: str) -> list[str]:
        path = _strip(path)
        found = []
        for root in self.roots:
            if path == root:
                continue
            prefix = root if root.endswith("/") else root + "/"
            if path.startswith(prefix):
                found.append(path[len(prefix) :])
        return found


def _anchored(body: str) -> bool:
    return "/" in body.rstrip("/")


def _below(text: str, sub: str) -> str | None:
    """Deny pattern `text` of a root as a line of its subdirectory `sub` (``""``: the root
    itself), or None when no exact line says it."""
    if not sub or not _anchored(text):
        return text  # unanchored patterns match at any depth: below `sub` too
    body = text.lstrip("/")
    if body.startswith("**/"):
        return body
    directory_only = body.endswith("/")
    parts = body.rstrip("/").split("/")
    heads = sub.split("/")
    if len(parts) <= len(heads):
        return None  # it names `sub` or a parent of it: the search itself is refused
    for part, head in zip(parts, heads, strict=False):
        if part != head or "*" in part or "?" in part:
            return None
    rest = "/".join(parts[len(heads) :])
    return "/" + rest + ("/" if directory_only else "")


def _above(text: str, prefix: str) -> str:
    """Deny pattern `text` of a root `prefix` below the directory, as its line."""
    body = text.lstrip("/")
    if _anchored(text):
        return f"/{prefix}/{body}"
    return f"/{prefix}/**/{body}"


def _match_with_parents(rules: _Kind, relative: str) -> str | None:
    """Like git: a path is matched itself (as a file and as a directory), and a directory
    that matched takes everything below it along; the pattern that decided at the
    shallowest such depth.

    Without a negated pattern a directory's match is a match of everything below it (the
    patterns' own regexes say so), so the depths that match are all those from one on: the
    whole path is matched once, and that depth found by bisection. Matching each depth in
    turn costs the square of the path's length (a path of 20,000 components: seconds)."""
    ends = [index for index, char in enumerate(relative) if char == "/"]
    ends.append(len(relative))

    def at(depth: int) -> str | None:  # depth: 0-based index into `ends`
        head = relative[: ends[depth]]
        candidates = (head + "/",) if depth < len(ends) - 1 else (head, head + "/")
        for candidate in candidates:
            pattern = rules.match(candidate)
            if pattern is not None:
                return pattern
        return None

    if rules.negated:
        for depth in range(len(ends)):
            found = at(depth)
            if found is not None:
                return found
        return None
    if at(len(ends) - 1) is None:
        return None
    low, high = 0, len(ends) - 1  # the shallowest matching depth is in [low, high]
    while low < high:
        middle = (low + high) // 2
        if at(middle) is not None:
            high = middle
        else:
            low = middle + 1
    return at(low)


def _compile(patterns: Sequence[str], kind: str) -> _Kind:
    from pathspec.patterns.gitignore import GitIgnorePatternError
    from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

    compiled = []
    for text in patterns:
        if not isinstance(text, str) or not text.strip() or "\0" in text:
            raise ValueError(f"invalid {kind} pattern {text!r}: an empty pattern matches nothing")
        try:
            compiled.append((text, GitIgnoreSpecPattern(text)))
        except (GitIgnorePatternError, ValueError, TypeError) as exc:
            raise ValueError(f"invalid {kind} pattern {text!r}: {exc}") from exc
    return _Kind(tuple(compiled))


def _strip(path: str) -> str:
    return path.rstrip("/") if path.rstrip("/") else path
