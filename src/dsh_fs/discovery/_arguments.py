"""The discovery tools' arguments (SPEC §8.1): schemas, and checks in upstream's words."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from dsh_fs.runtime import ToolArgumentError
from dsh_fs.tools import Param, is_blank, string_param

__all__ = [
    "GLOB_PARAMS",
    "GREP_PARAMS",
    "LIST_PARAMS",
    "GlobArguments",
    "GrepArguments",
    "ListArguments",
    "check_include",
    "optional_path",
    "positive_glob",
]


_PATH = "(absolute, or relative to the working directory). Defaults to the working directory."


def _optional_path(description: str) -> Param:
    # An optional string is a plain string property: omitting it is how the model leaves
    # it out (no null, no null default).
    return string_param("path", description, required=False)


GLOB_PARAMS: Final = (
    string_param(
        "pattern",
        'Glob pattern to match file paths against (e.g. "**/*.py", '
        '"src/**/*.test.ts"). Without a "/" it matches file names at any depth; with one '
        "it matches paths from the search directory.",
        non_empty=True,
    ),
    _optional_path(f"Directory to search in {_PATH}"),
)
"""`glob`'s parameters."""

GREP_PARAMS: Final = (
    string_param(
        "pattern",
        "Regular expression to search for (ripgrep syntax; escape special "
        "characters with \\ to match them literally).",
        non_empty=True,
    ),
    _optional_path(f"File or directory to search {_PATH}"),
    string_param(
        "include",
        'One glob for the names of the files to search (e.g. "*.py", "*.{ts,tsx}"). Not a '
        "list; negation is not supported.",
        required=False,
    ),
)
"""`grep`'s parameters."""

LIST_PARAMS: Final = (_optional_path(f"Directory to list {_PATH}"),)
"""`list`'s parameters."""


@dataclass(frozen=True, slots=True, kw_only=True)
class GlobArguments:
    """Arguments of `glob`, checked."""

    pattern: str
    """The glob."""
    path: str | None = None
    """The directory searched (None: the working directory)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class GrepArguments:
    """Arguments of `grep`, checked."""

    pattern: str
    """The regular expression."""
    path: str | None = None
    """The file or directory searched (None: the working directory)."""
    include: str | None = None
    """The glob file names must match (None: every file)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ListArguments:
    """Arguments of `list`, checked."""

    path: str | None = None
    """The directory listed (None: the working directory)."""


def optional_path(value: str | None) -> str | None:
    """A `path` argument: absent, or with something besides white space.

    Raises:
        ToolArgumentError: ``path must be a non-empty string when given``.
    """
    if value is not None and is_blank(value):
        raise ToolArgumentError("path must be a non-empty string when given")
    return value


def positive_glob(pattern: str) -> str:
    """glob's `pattern`: not blank, not a negation.

    Raises:
        ToolArgumentError: the rule broken.
    """
    if is_blank(pattern):
        raise ToolArgumentError("pattern must be a non-empty string")
    if pattern.startswith("!"):
        raise ToolArgumentError(
            'pattern must be a positive glob; negated patterns ("!…") are not supported'
        )
    return pattern


def check_include(include: str) -> str:
    """grep's `include`: ONE positive glob for file names (a comma inside ``{…}`` is an
    alternation, not a list). A leading ``**/`` is allowed (it changes nothing for a name).

    Raises:
        ToolArgumentError: the rule broken, in upstream's words.
    """
    if is_blank(include):
        raise ToolArgumentError("include must be a non-empty glob when given")
    if include.startswith("!"):
        raise ToolArgumentError(
            'include must be a positive glob filter; negated patterns ("!…") are not supported'
        )
    depth = 0
    for char in include:
        if char == "{":
            depth += 1
        elif char == "}":
            depth = max(0, depth - 1)
        elif char == "," and depth == 0:
            raise ToolArgumentError(
                "include must be one glob, not a comma-separated list "
                "(use {a,b} alternation instead)"
            )
    name = include
    while name.startswith("**/"):
        name = name[3:]
    if "/" in name:
        raise ToolArgumentError(
            'include matches file names, not paths: put the directory in path (e.g. path "src", '
            'include "*.py")'
        )
    return include
