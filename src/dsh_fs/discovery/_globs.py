"""ripgrep's globs in Python: ``--glob`` for the glob tool, type globs for grep's `include`.

The rules are those of ripgrep's glob crate in its gitignore flavour: ``*`` and ``?`` stop
at ``/``; ``**`` as a whole component spans directories (``**/x``, ``x/**``, ``a/**/b``);
``[…]`` (``[!…]`` or ``[^…]`` negated) is a class; ``{a,b}`` alternatives do not nest;
``\\`` escapes. A glob without a ``/`` (a trailing one aside) matches the file name at any
depth; one with a ``/`` matches the path from the searched directory (a leading ``/`` only
anchors). The same globs are refused as ripgrep refuses them, so both search engines agree.

Globs are matched by RE2, in time linear in the name's length whatever the pattern (a glob
like ``*a*a*a…*:`` never backtracks), on UTF-8 bytes; a lone surrogate in a name (a byte that
is not UTF-8) is matched as one character, as U+FFFD. A glob too large for RE2's memory
bound is an invalid pattern.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import re2

from dsh_fs.fs import messages

__all__ = ["NameGlob", "PathGlob", "compile_name_glob", "compile_path_glob", "matchable", "utf8"]


_SURROGATE = re.compile("[\ud800-\udfff]")


def matchable(text: str) -> str:
    """`text` with each lone surrogate (a byte of a name that is not UTF-8) as U+FFFD: text
    RE2 can match (it matches UTF-8)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def utf8(text: str) -> bytes:
    """`text` as the UTF-8 bytes RE2 matches; a lone surrogate becomes U+FFFD."""
    return matchable(text).encode("utf-8")


class _GlobError(Exception):
    pass


@dataclass(frozen=True, slots=True)
class NameGlob:
    """A compiled glob, matched against a whole string."""

    regex: Any
    """The RE2 program (bytes, UTF-8)."""

    def matches(self, text: str) -> bool:
        """Whether the glob matches all of `text`."""
        return self.regex.fullmatch(utf8(text)) is not None


@dataclass(frozen=True, slots=True)
class PathGlob:
    """A compiled glob and what kind of entry it can match."""

    glob: NameGlob
    """Matches a whole relative path (``/``-separated)."""
    directories_only: bool
    """The glob ended with ``/``: it matches directories, never a file."""

    def matches_file(self, path: str) -> bool:
        """Whether the file at relative `path` matches."""
        return not self.directories_only and self.glob.matches(path)


def compile_path_glob(glob: str) -> PathGlob:
    """A ripgrep ``--glob`` for relative paths.

    Raises:
        FsError: `SEARCH_INVALID_PATTERN`, in ripgrep's words.
    """
    text = glob
    directories_only = text.endswith("/") and not text.endswith("\\/")
    if directories_only:
        text = text[:-1]
    if text.startswith("/"):
        text = text[1:]
    elif "/" not in text and text != "**":
        text = "**/" + text
    return PathGlob(_compiled(glob, text), directories_only)


def compile_name_glob(glob: str) -> NameGlob:
    """A ripgrep type glob (``--type-add``): matched against file names only.

    Raises:
        FsError: `SEARCH_INVALID_PATTERN`, in ripgrep's words.
    """
    return _compiled(glob, glob)


def _compiled(glob: str, text: str) -> NameGlob:
    """`text` (`glob`, made relative) compiled; refusals quote `glob`."""
    try:
        source = _translate(text)
    except _GlobError as error:
        raise messages.invalid_pattern("glob", glob, str(error)) from None
    options = re2.Options()
    options.log_errors = False
    options.dot_nl = True
    try:
        return NameGlob(re2.compile(source.encode("utf-8"), options))
    except re2.error as error:
        reason = error.args[0] if error.args else "invalid"
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise messages.invalid_pattern("glob", glob, str(reason)) from None


def _escape(char: str) -> str:
    """`char` as an RE2 literal (inside a class too)."""
    if char.isascii() and not (char.isalnum() or char == "_"):
        return f"\\x{{{ord(char):x}}}" if not char.isprintable() else "\\" + char
    return char


def _translate(glob: str) -> str:
    if "\0" in glob:  # no file name holds one
        raise _GlobError("a NUL byte is not allowed in a pattern")
    if not glob.isascii():
        try:
            glob.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: no file name can hold it
            raise _GlobError("not valid Unicode") from None
    out: list[str] = []
    in_group = False
    i, n = 0, len(glob)
    while i < n:
        char = glob[i]
        if char == "\\":
            if i + 1 >= n:
                raise _GlobError("dangling '\\'")
            out.append(_escape(glob[i + 1]))
            i += 2
        elif char == "*":
            j = i
            while j < n and glob[j] == "*":
                j += 1
            whole = (i == 0 or glob[i - 1] == "/") and (j == n or glob[j] == "/")
            if j - i >= 2 and whole:
                if j == n:
                    out.append(".*")
                    i = j
                else:
                    # `**/`: any number of whole directories, none included
                    out.append("(?:.*/)?")
                    i = j + 1
            else:
                out.append("[^/]*")
                i = j
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[":
            regex, i = _char_class(glob, i)
            out.append(regex)
        elif char == "{":
            if in_group:
                raise _GlobError("nested alternate groups are not allowed")
            in_group = True
            out.append("(?:")
            i += 1
        elif char == "," and in_group:
            out.append("|")
            i += 1
        elif char == "}" and in_group:
            in_group = False
            out.append(")")
            i += 1
        else:
            out.append(_escape(char))
            i += 1
    if in_group:
        raise _GlobError("unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)")
    return "".join(out)


def _char_class(glob: str, start: int) -> tuple[str, int]:
    """The regex of the class opening at `start`, and the index after it."""
    i = start + 1
    negated = i < len(glob) and glob[i] in "!^"
    if negated:
        i += 1
    items: list[str] = []
    first = True
    while True:
        if i >= len(glob):
            raise _GlobError("unclosed character class; missing ']'")
        char = glob[i]
        if char == "]" and not first:
            i += 1
            break
        first = False
        if i + 2 < len(glob) and glob[i + 1] == "-" and glob[i + 2] != "]":
            low, high = char, glob[i + 2]
            if low > high:
                raise _GlobError(f"invalid range; '{low}' > '{high}'")
            items.append(f"{_escape(low)}-{_escape(high)}")
            i += 3
        else:
            items.append(_escape(char))
            i += 1
    body = "".join(items)
    return (f"[^/{body}]" if negated else f"[{body}]"), i
