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

The pydantic models only describe the parameters: their JSON Schema is what the model reads
(snake_case, ``additionalProperties: false``, no titles).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from dsh_fs.runtime import ToolArgumentError

from ._window import MAX_LINES

__all__ = [
    "EditArguments",
    "Param",
    "ReadArguments",
    "WriteArguments",
    "check_shape",
    "js_number",
    "json_schema",
    "non_blank",
    "positive_integer",
]


class _Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ReadArguments(_Arguments):
    """Arguments of `read`."""

    file_path: str = Field(
        min_length=1,
        description="Path of the file to read (absolute, or relative to the working directory).",
    )
    offset: int = Field(
        default=1, ge=1, description="Line number to start reading from (1-based). Defaults to 1."
    )
    limit: int = Field(
        default=MAX_LINES,
        ge=1,
        le=MAX_LINES,
        description=f"Maximum number of lines to read (at most {MAX_LINES}). "
        f"Defaults to {MAX_LINES}.",
    )


class WriteArguments(_Arguments):
    """Arguments of `write`."""

    file_path: str = Field(
        min_length=1,
        description="Path of the file to create or overwrite (absolute, or relative to the "
        "working directory).",
    )
    content: str = Field(description="The complete content the file will have.")


class EditArguments(_Arguments):
    """Arguments of `edit`."""

    file_path: str = Field(
        min_length=1,
        description="Path of the file to edit (absolute, or relative to the working directory).",
    )
    old_string: str = Field(
        min_length=1,
        description="The exact text to replace. It must appear exactly once in the file "
        "unless replace_all is true.",
    )
    new_string: str = Field(description="The text to put in its place (must differ).")
    replace_all: bool = Field(
        default=False,
        description="Replace every occurrence of old_string instead of exactly one. "
        "Defaults to false.",
    )


JsonType = Literal["string", "number", "boolean", "array"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Param:
    """One declared parameter, as the shape check sees it."""

    name: str
    """The property name."""
    type: JsonType
    """Its JSON type (``number`` accepts any finite number; value checks narrow it)."""
    required: bool = False
    """Whether it must be present."""


def check_shape(raw: Mapping[str, Any], params: tuple[Param, ...]) -> None:
    """Stage 1: required properties, JSON types, no undeclared property.

    Raises:
        ToolArgumentError: ``invalid arguments: …`` naming every problem.
    """
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


# JavaScript's `String.prototype.trim` removes these (WhiteSpace and LineTerminator).
_JS_SPACE = "\t\n\v\f\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
_JS_SPACE += "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


def non_blank(value: str, name: str) -> str:
    """A string argument with something besides white space in it.

    Raises:
        ToolArgumentError: ``<name> must be a non-empty string``.
    """
    if not value.strip(_JS_SPACE):
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


_KEY_ORDER = {"type": 0, "description": 1, "minLength": 2, "minimum": 3, "maximum": 4, "default": 5}


def json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON Schema as the model sees it: no titles, in a stable key order."""
    generated = model.model_json_schema()
    properties = {
        name: {
            key: spec[key]
            for key in sorted(spec, key=lambda key: _KEY_ORDER.get(key, len(_KEY_ORDER)))
            if key != "title"
        }
        for name, spec in generated["properties"].items()
    }
    return {
        "type": "object",
        "properties": properties,
        "required": list(generated.get("required", [])),
        "additionalProperties": False,
    }
