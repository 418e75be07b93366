"""ripgrep's globs in Python: ``--glob`` for the glob tool, type globs for grep's `include`.

The rules are those of ripgrep's glob crate in its gitignore flavour: ``*`` and ``?`` stop
at ``/``; ``**`` as a whole component spans directories (``**/x``, ``x/**``, ``a/**/b``);
``[…]`` (``[!…]`` or ``[^…]`` negated) is a class; ``{a,b}`` alternatives do not nest;
``\\`` escapes. A glob without a ``/`` (a trailing one aside) matches the file name at any
depth; one with a ``/`` matches the path from the searched directory (a leading ``/`` only
anchors). The same globs are refused as ripgrep refuses them, so both search engines agree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dsh_fs.fs import messages

__all__ = ["PathGlob", "compile_name_glob", "compile_path_glob"]


class _GlobError(Exception):
    pass


@dataclass(frozen=True, slots=True)
class PathGlob:
    """A compiled glob and what kind of entry it can match."""

    regex: re.Pattern[str]
    """Matches a whole relative path (``/``-separated)."""
    directories_only: bool
    """The glob ended with ``/``: it matches directories, never a file."""

    def matches_file(self, path: str) -> bool:
        """Whether the file at relative `path` matches."""
        return not self.directories_only and self.regex.fullmatch(path) is not None


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
    try:
        return PathGlob(re.compile(_translate(text), re.DOTALL), directories_only)
    except _GlobError as error:
        raise messages.invalid_pattern("glob", glob, str(error)) from None


def compile_name_glob(glob: str) -> re.Pattern[str]:
    """A ripgrep type glob (``--type-add``): matched against file names only.

    Raises:
        FsError: `SEARCH_INVALID_PATTERN`, in ripgrep's words.
    """
    try:
        return re.compile(_translate(glob), re.DOTALL)
    except _GlobError as error:
        raise messages.invalid_pattern("glob", glob, str(error)) from None


def _translate(glob: str) -> str:
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
            out.append(re.escape(glob[i + 1]))
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
            out.append(re.escape(char))
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
            items.append(f"{re.escape(low)}-{re.escape(high)}")
            i += 3
        else:
            items.append(re.escape(char))
            i += 1
    body = "".join(items)
    return (f"[^/{body}]" if negated else f"[{body}]"), i
