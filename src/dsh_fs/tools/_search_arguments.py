"""The discovery tools' arguments (SPEC §8.1): schemas, and checks in upstream's words."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from dsh_fs.runtime import ToolArgumentError

from ._arguments import _JS_SPACE, json_schema

__all__ = [
    "GlobArguments",
    "GrepArguments",
    "ListArguments",
    "check_include",
    "optional_path",
    "positive_glob",
    "search_schema",
]


class _Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


_PATH = "(absolute, or relative to the working directory). Defaults to the working directory."


class GlobArguments(_Arguments):
    """Arguments of `glob`."""

    pattern: str = Field(
        min_length=1,
        description='Glob pattern to match file paths against (e.g. "**/*.py", '
        '"src/**/*.test.ts"). Without a "/" it matches file names at any depth; with one it '
        "matches paths from the search directory.",
    )
    path: str | None = Field(default=None, description=f"Directory to search in {_PATH}")


class GrepArguments(_Arguments):
    """Arguments of `grep`."""

    pattern: str = Field(
        min_length=1,
        description="Regular expression to search for (ripgrep syntax; escape special "
        "characters with \\ to match them literally).",
    )
    path: str | None = Field(default=None, description=f"File or directory to search {_PATH}")
    include: str | None = Field(
        default=None,
        description='One glob for the names of the files to search (e.g. "*.py", '
        '"*.{ts,tsx}"). Not a list; negation is not supported.',
    )


class ListArguments(_Arguments):
    """Arguments of `list`."""

    path: str | None = Field(default=None, description=f"Directory to list {_PATH}")


def search_schema(model: type[BaseModel]) -> dict[str, Any]:
    """`json_schema`, with an optional string shown as a plain string property (no
    ``anyOf`` with null, no null default): omitting it is how the model leaves it out."""
    schema = json_schema(model)
    for name, spec in schema["properties"].items():
        if "anyOf" in spec:
            kinds = [option for option in spec.pop("anyOf") if option.get("type") != "null"]
            spec = {**kinds[0], **spec}
        if spec.get("default", 0) is None:
            del spec["default"]
        schema["properties"][name] = {
            key: spec[key] for key in sorted(spec, key=lambda key: key != "type")
        }
    return schema


def optional_path(value: str | None) -> str | None:
    """A `path` argument: absent, or with something besides white space.

    Raises:
        ToolArgumentError: ``path must be a non-empty string when given``.
    """
    if value is not None and not value.strip(_JS_SPACE):
        raise ToolArgumentError("path must be a non-empty string when given")
    return value


def positive_glob(pattern: str) -> str:
    """glob's `pattern`: not blank, not a negation.

    Raises:
        ToolArgumentError: the rule broken.
    """
    if not pattern.strip(_JS_SPACE):
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
    if not include.strip(_JS_SPACE):
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
