"""The tools' arguments: their JSON Schemas, and the checks that give upstream's exact messages.

Two stages, as upstream checks them (SPEC §6):

1. *Shape*: every required property present, every property of its JSON type, no undeclared
   property. All problems are reported at once, in that order, as one
   ``invalid arguments: <problem>; <problem>`` sentence, each problem in upstream's words
   (``missing required property "file_path"``, ``"offset" must be a number``, …).
2. *Values*: the rules a JSON type can't express, first failure only, in the tool's order
   (``file_path must be a non-empty string``, ``offset must be a positive integer``, …).

Every argument error has the code ``INVALID_ARGS``. A whole number sent as a float (``2.0``,
``1e3``) is an integer, as JSON Schema says. What differs from upstream on purpose: an
undeclared property is refused (upstream ignores it, so ``edit`` with ``dry_run: true``
edits), in the words upstream's validator uses for a closed schema.

Each parameter is declared once, as a `Param`: the JSON type the shape check wants, and the
property's JSON Schema exactly as the model reads it (snake_case, no titles; the tool's
schema adds ``additionalProperties: false``). No pydantic: building its models and their
schemas was most of the time `import dsh_fs` took (and so `dsh-fs mcp`'s start-up).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from dsh_fs.runtime import ToolArgumentError

from .paging import MAX_LINES

__all__ = [
    "EDIT_FILES_PARAMS",
    "EDIT_PARAMS",
    "JS_SPACE",
    "MAX_SET_EDITS",
    "READ_PARAMS",
    "WRITE_PARAMS",
    "EditArguments",
    "EditFilesArguments",
    "JsonType",
    "Param",
    "ReadArguments",
    "WriteArguments",
    "check_shape",
    "is_blank",
    "js_number",
    "non_blank",
    "object_schema",
    "positive_integer",
    "string_param",
]


JsonType = Literal["string", "number", "boolean", "array"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Param:
    """One declared parameter: what the shape check wants, and what the model reads."""

    name: str
    """The property name."""
    type: JsonType
    """Its JSON type (``number`` accepts any finite number; value checks narrow it)."""
    schema: Mapping[str, Any]
    """Its JSON Schema in the tool's ``parameters``, keys in the order the model reads them
    (``type``, ``description``, then bounds and ``default``)."""
    required: bool = False
    """Whether it must be present."""


def object_schema(params: tuple[Param, ...]) -> dict[str, Any]:
    """The JSON Schema of a tool's arguments: its parameters' properties in order, the
    required ones, no other property."""
    return {
        "type": "object",
        "properties": {p.name: dict(p.schema) for p in params},
        "required": [p.name for p in params if p.required],
        "additionalProperties": False,
    }


def string_param(
    name: str, description: str, *, required: bool = True, non_empty: bool = False
) -> Param:
    """A string parameter; `non_empty` adds ``minLength: 1`` to its schema."""
    schema: dict[str, Any] = {"type": "string", "description": description}
    if non_empty:
        schema["minLength"] = 1
    return Param(name=name, type="string", required=required, schema=schema)


_FILE = "(absolute, or relative to the working directory)."

READ_PARAMS: Final = (
    string_param("file_path", f"Path of the file to read {_FILE}", non_empty=True),
    Param(
        name="offset",
        type="number",
        schema={
            "type": "integer",
            "description": "Line number to start reading from (1-based). Defaults to 1.",
            "minimum": 1,
            "default": 1,
        },
    ),
    Param(
        name="limit",
        type="number",
        schema={
            "type": "integer",
            "description": f"Maximum number of lines to read (at most {MAX_LINES}). "
            f"Defaults to {MAX_LINES}.",
            "minimum": 1,
            "maximum": MAX_LINES,
            "default": MAX_LINES,
        },
    ),
)
"""`read`'s parameters."""

WRITE_PARAMS: Final = (
    string_param("file_path", f"Path of the file to create or overwrite {_FILE}", non_empty=True),
    string_param("content", "The complete content the file will have."),
)
"""`write`'s parameters."""

EDIT_PARAMS: Final = (
    string_param("file_path", f"Path of the file to edit {_FILE}", non_empty=True),
    string_param(
        "old_string",
        "The exact text to replace. It must appear exactly once in the file unless "
        "replace_all is true.",
        non_empty=True,
    ),
    string_param("new_string", "The text to put in its place (must differ)."),
    Param(
        name="replace_all",
        type="boolean",
        schema={
            "type": "boolean",
            "description": "Replace every occurrence of old_string instead of exactly one. "
            "Defaults to false.",
            "default": False,
        },
    ),
)
"""`edit`'s parameters."""


MAX_SET_EDITS: Final = 100
"""The most edits one `edit_files` call takes (SPEC §13)."""

EDIT_FILES_PARAMS: Final = (
    Param(
        name="edits",
        type="array",
        required=True,
        schema={
            "type": "array",
            "description": "The edits, applied all or none: edits to the same file apply in "
            "order, each to the result of the previous one. Every file must have been read "
            "(as for edit).",
            "minItems": 1,
            "maxItems": MAX_SET_EDITS,
            "items": object_schema(EDIT_PARAMS),
        },
    ),
)
"""`edit_files`'s parameters: one array of `edit`'s arguments."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadArguments:
    """Arguments of `read`, checked."""

    file_path: str
    """The path, as given."""
    offset: int = 1
    """The first line shown (1-based)."""
    limit: int = MAX_LINES
    """How many lines at most."""
    windowed: bool = False
    """`offset` or `limit` was given (an image has no lines to window: INVALID_ARGS)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class WriteArguments:
    """Arguments of `write`, checked."""

    file_path: str
    """The path, as given."""
    content: str
    """The whole new content."""


@dataclass(frozen=True, slots=True, kw_only=True)
class EditArguments:
    """Arguments of `edit`, checked."""

    file_path: str
    """The path, as given."""
    old_string: str
    """The text to replace."""
    new_string: str
    """Its replacement."""
    replace_all: bool = False
    """Replace every occurrence instead of exactly one."""


@dataclass(frozen=True, slots=True, kw_only=True)
class EditFilesArguments:
    """Arguments of `edit_files`, checked."""

    edits: tuple[EditArguments, ...]
    """The edits, in the order they apply (1 to `MAX_SET_EDITS`)."""


def check_shape(raw: Mapping[str, Any], params: tuple[Param, ...]) -> None:
    """Stage 1: required properties, JSON types, no undeclared property.

    Raises:
        ToolArgumentError: ``invalid arguments: …`` naming every problem.
    """
    # Right arguments (every call but a broken one) pass in one loop over the parameters:
    # each present one of its type, each required one present, and no other property (as
    # many present as were counted). Anything else is worded below, every problem named.
    present = 0
    for param in params:
        if param.name in raw:
            if _type_problem(param, raw[param.name]) is not None:
                break
            present += 1
        elif param.required:
            break
    else:
        if present == len(raw):
            return
    problems = [
        f'missing required property "{p.name}"' for p in params if p.required and p.name not in raw
    ]
    for param in params:
        if param.name in raw:
            problem = _type_problem(param, raw[param.name])
            if problem is not None:
                problems.append(problem)
    declared = {p.name for p in params}
    problems += [
        f'"{key}" is not a declared property (additionalProperties: false)'
        for key in raw
        if key not in declared
    ]
    if problems:
        raise ToolArgumentError("invalid arguments: " + "; ".join(problems))


def _type_problem(param: Param, value: object) -> str | None:
    if param.type == "string":
        return None if isinstance(value, str) else f'"{param.name}" must be a string'
    if param.type == "boolean":
        return None if isinstance(value, bool) else f'"{param.name}" must be a boolean'
    if param.type == "array":
        return None if isinstance(value, list) else f'"{param.name}" must be an array'
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f'"{param.name}" must be a number'
    if not _finite(value):
        return f'"{param.name}" must be a finite JSON number'
    return None


def _finite(value: int | float) -> bool:
    """Whether JavaScript would hold `value` as a finite number other than -0."""
    if isinstance(value, float):
        return math.isfinite(value) and not (value == 0 and math.copysign(1, value) < 0)
    try:
        return math.isfinite(float(value))
    except OverflowError:  # an integer past the largest double is Infinity in JavaScript
        return False


JS_SPACE: Final = (
    "\t\n\v\f\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
"""What JavaScript's `String.prototype.trim` removes (WhiteSpace and LineTerminator)."""


def is_blank(value: str) -> bool:
    """Whether `value` holds nothing but white space as JavaScript's ``trim`` sees it."""
    return not value.strip(JS_SPACE)


def non_blank(value: str, name: str) -> str:
    """A string argument with something besides white space in it.

    Raises:
        ToolArgumentError: ``<name> must be a non-empty string``.
    """
    if is_blank(value):
        raise ToolArgumentError(f"{name} must be a non-empty string")
    return value


def positive_integer(value: int | float, name: str) -> int:
    """A number argument that is a whole number of at least 1 (``2.0`` counts).

    Raises:
        ToolArgumentError: ``<name> must be a positive integer``.
    """
    if isinstance(value, float):
        if not value.is_integer():
            raise ToolArgumentError(f"{name} must be a positive integer")
        value = int(value)
    if value < 1:
        raise ToolArgumentError(f"{name} must be a positive integer")
    return value


def js_number(value: int) -> str:
    """`value` as JavaScript prints the number it would hold (``Number.prototype.toString``).

    Upstream's messages print numbers the model sent; a JSON integer past 2**53 loses
    precision there, and from 1e21 on it is printed with an exponent.
    """
    if abs(value) <= 2**53:
        return str(value)
    digits, exponent = _shortest_digits(float(value))
    sign = "-" if value < 0 else ""
    if exponent <= 21:
        return sign + digits + "0" * (exponent - len(digits))
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{sign}{mantissa}e+{exponent - 1}"


def _shortest_digits(number: float) -> tuple[str, int]:
    """The shortest round-trip decimal digits of `number` and the position of its point
    (``1.5e21`` → ``("15", 22)``), as ECMAScript's Number::toString defines them."""
    mantissa, _, exp = repr(abs(number)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction.rstrip("0")).lstrip("0") or "0"
    point = len(whole.lstrip("0")) + (int(exp) if exp else 0)
    return digits.rstrip("0") or "0", point
