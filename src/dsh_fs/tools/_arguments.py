"""The tools' argument models (pydantic, at the JSON boundary) and their exact messages.

The models give the JSON Schemas (SPEC §6: snake_case, `additionalProperties: false`, no
titles) and validate strictly: a boolean is not an integer, a number is not a string.
Pydantic's own error text never reaches the model; `parse` maps each error to one short
sentence naming the argument (SPEC's four fixed messages among them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dsh_fs.runtime import ToolArgumentError

from ._window import MAX_LINES

__all__ = ["EditArguments", "ReadArguments", "WriteArguments", "json_schema", "parse"]

M = TypeVar("M", bound=BaseModel)


class _Arguments(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


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


_TYPE_MESSAGES: dict[str, str] = {
    "file_path": "file_path must be a non-empty string",
    "offset": "offset must be a positive integer",
    "limit": "limit must be a positive integer",
    "content": "content must be a string",
    "old_string": "old_string must be a non-empty string",
    "new_string": "new_string must be a string",
    "replace_all": "replace_all must be a boolean",
}


def _message(error: Mapping[str, Any]) -> str:
    location = error["loc"]
    field = str(location[0]) if location else ""
    if error["type"] == "extra_forbidden":
        return f'unexpected argument "{field}"'
    if error["type"] == "less_than_equal":
        return f"{field} must be less than or equal to {error['ctx']['le']}"
    return _TYPE_MESSAGES.get(field, f"{field} is invalid")


def parse(model: type[M], raw: Mapping[str, Any]) -> M:
    """Validate `raw` into `model`.

    Raises:
        ToolArgumentError: one sentence per problem, joined with ``"; "``.
    """
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        messages = dict.fromkeys(_message(error) for error in exc.errors(include_url=False))
        raise ToolArgumentError("; ".join(messages)) from None


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
