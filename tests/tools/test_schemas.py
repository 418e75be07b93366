"""What the model reads about the tools: exact schemas, descriptions, prompt sections, and
the exact argument-validation messages. A change here is a change of the public contract."""

from __future__ import annotations

from typing import Any

import pytest

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.runtime import Context, ToolArgumentError
from dsh_fs.tools import EditTool, FsToolsPlugin, ReadTool, WriteTool
from dsh_fs.tools._render import message_with_remedy

READ_SCHEMA = {
    "name": "read",
    "description": (
        "Read a UTF-8 text file. The result shows numbered lines (`<n>: <text>`), at most "
        "2000 lines and 50 KiB per call; lines longer than 2000 characters are truncated. Use "
        "offset and limit to continue reading a large file. Reading a file (any part of it) is "
        "what allows you to overwrite it with write or change it with edit afterwards."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "file_path": {
                "type": "string",
                "description": "Path of the file to read (absolute, or relative to the working "
                "directory).",
                "minLength": 1,
            },
            "offset": {
                "type": "integer",
                "description": "Line number to start reading from (1-based). Defaults to 1.",
                "minimum": 1,
                "default": 1,
            },
            "limit": {
                "type": "integer",
                "description": "Maximum number of lines to read (at most 2000). Defaults to 2000.",
                "minimum": 1,
                "maximum": 2000,
                "default": 2000,
            },
        },
        "required": ["file_path"],
        "additionalProperties": False,
    },
}

WRITE_SCHEMA = {
    "name": "write",
    "description": (
        "Create a file, or completely replace the content of an existing file. To overwrite an "
        "existing file, read it first in this session: overwriting a file you have not read (or "
        "that changed since you read it) is refused. Prefer edit for targeted changes."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "file_path": {
                "type": "string",
                "description": "Path of the file to create or overwrite (absolute, or relative "
                "to the working directory).",
                "minLength": 1,
            },
            "content": {
                "type": "string",
                "description": "The complete content the file will have.",
            },
        },
        "required": ["file_path", "content"],
        "additionalProperties": False,
    },
}

EDIT_SCHEMA = {
    "name": "edit",
    "description": (
        "Replace literal text in an existing UTF-8 text file. old_string must match the file "
        "exactly (line endings aside) and, unless replace_all is true, appear exactly once. "
        "Read the file first in this session (editing a file you have not read, or that "
        "changed since you read it, is refused), unless you just created or edited it."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "file_path": {
                "type": "string",
                "description": "Path of the file to edit (absolute, or relative to the working "
                "directory).",
                "minLength": 1,
            },
            "old_string": {
                "type": "string",
                "description": "The exact text to replace. It must appear exactly once in the "
                "file unless replace_all is true.",
                "minLength": 1,
            },
            "new_string": {
                "type": "string",
                "description": "The text to put in its place (must differ).",
            },
            "replace_all": {
                "type": "boolean",
                "description": "Replace every occurrence of old_string instead of exactly one. "
                "Defaults to false.",
                "default": False,
            },
        },
        "required": ["file_path", "old_string", "new_string"],
        "additionalProperties": False,
    },
}

EDIT_FILES_SCHEMA = {
    "name": "edit_files",
    "description": (
        "Make several literal replacements, in one file or across several UTF-8 text files, "
        "all or nothing: each edit is as for edit (old_string must match exactly and, unless "
        "replace_all is true, appear exactly once), edits to the same file apply in order, "
        "and if any edit fails no file changes. Read every file first in this session (a file "
        "you have not read, or that changed since you read it, is refused), unless you just "
        "created or edited it."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "edits": {
                "type": "array",
                "description": "The edits, applied all or none: edits to the same file apply "
                "in order, each to the result of the previous one. Every file must have been "
                "read (as for edit).",
                "minItems": 1,
                "maxItems": 100,
                "items": EDIT_SCHEMA["parameters"],
            },
        },
        "required": ["edits"],
        "additionalProperties": False,
    },
}
"""SPEC §13's tool; the three §6 schemas above stay as they were."""

PROMPTS = {
    "tools:read": (
        "Use the read tool — not shell commands like cat — to inspect text files. Results "
        "include line numbers. Use offset and limit to continue reading large files."
    ),
    "tools:write": (
        "Use the write tool to create files or completely replace file contents. Existing "
        "files are overwritten, so read an existing file first (the default "
        "fs-observation-policy requires it) and prefer edit for targeted changes."
    ),
    "tools:edit": (
        "Use the edit tool for targeted changes to existing UTF-8 text files. It replaces "
        "literal old_string with new_string; by default old_string must appear exactly once. "
        "If old_string appears multiple times, provide a more specific old_string or set "
        "replace_all to true. Read the file first (the default fs-observation-policy requires "
        "it), unless you just created or edited it in this session."
    ),
    "tools:edit_files": (
        "Use the edit_files tool for one logical change across several places (a rename "
        "across files, a signature and its callers): it applies every edit or none. Each edit "
        "is as for edit; edits to the same file apply in order, each to the result of the "
        "previous one. Read each file first (the default fs-observation-policy requires it)."
    ),
}


@pytest.fixture
def context() -> Context:
    context = Context()
    context.use(FsToolsPlugin(), None)
    return context


def test_the_tool_schemas_are_exactly_the_snapshot(context: Context) -> None:
    assert context.tools.schemas() == [READ_SCHEMA, WRITE_SCHEMA, EDIT_SCHEMA, EDIT_FILES_SCHEMA]


def test_schemas_carry_no_pydantic_titles(context: Context) -> None:
    assert "title" not in repr(context.tools.schemas())


def test_a_returned_schema_is_a_copy_callers_may_change(context: Context) -> None:
    context.tools.schemas()[0]["parameters"]["properties"].clear()
    assert context.tools.schemas()[0] == READ_SCHEMA


def test_descriptions_tell_the_model_to_read_before_overwriting_or_editing() -> None:
    assert "read it first" in WriteTool.description
    assert "Read the file first" in EditTool.description


def test_the_prompt_sections_are_the_spec_texts_verbatim(context: Context) -> None:
    assert {s.id: s.text for s in context.prompts.sections()} == PROMPTS
    assert context.prompts.assemble() == "\n\n".join(PROMPTS.values())


def test_disposing_the_tools_plugin_removes_tools_and_sections() -> None:
    context = Context()
    handle = context.use(FsToolsPlugin(), None)
    handle.dispose()
    assert context.tools.names() == []
    assert context.prompts.sections() == []


@pytest.mark.parametrize(
    ("tool", "raw", "message"),
    [
        # Shape: upstream's validator words, every problem at once, in its order.
        (ReadTool(), {}, 'invalid arguments: missing required property "file_path"'),
        (ReadTool(), {"file_path": 7}, 'invalid arguments: "file_path" must be a string'),
        (ReadTool(), {"file_path": None}, 'invalid arguments: "file_path" must be a string'),
        (
            ReadTool(),
            {"file_path": "a", "offset": "3"},
            'invalid arguments: "offset" must be a number',
        ),
        (
            ReadTool(),
            {"file_path": "a", "limit": True},
            'invalid arguments: "limit" must be a number',
        ),
        (
            ReadTool(),
            {"file_path": "a", "offset": False},
            'invalid arguments: "offset" must be a number',
        ),
        (
            ReadTool(),
            {"file_path": "a", "offset": float("nan")},
            'invalid arguments: "offset" must be a finite JSON number',
        ),
        (
            ReadTool(),
            {"file_path": "a", "offset": 10**400},
            'invalid arguments: "offset" must be a finite JSON number',
        ),
        (
            ReadTool(),
            {"file_path": "a", "path": "b"},
            'invalid arguments: "path" is not a declared property (additionalProperties: false)',
        ),
        (
            ReadTool(),
            {"offset": "x", "y": 1},
            'invalid arguments: missing required property "file_path"; '
            '"offset" must be a number; '
            '"y" is not a declared property (additionalProperties: false)',
        ),
        (WriteTool(), {"file_path": "a"}, 'invalid arguments: missing required property "content"'),
        (
            WriteTool(),
            {"file_path": "a", "content": b"x"},
            'invalid arguments: "content" must be a string',
        ),
        (
            EditTool(),
            {"file_path": "a", "new_string": "b"},
            'invalid arguments: missing required property "old_string"',
        ),
        (
            EditTool(),
            {"file_path": "a", "old_string": "a"},
            'invalid arguments: missing required property "new_string"',
        ),
        (
            EditTool(),
            {"file_path": "a", "old_string": "a", "new_string": "b", "replace_all": 1},
            'invalid arguments: "replace_all" must be a boolean',
        ),
        (
            EditTool(),
            {"file_path": "a", "old_string": "a", "new_string": "b", "replace_all": "true"},
            'invalid arguments: "replace_all" must be a boolean',
        ),
        # Values: the first rule broken, upstream's sentences.
        (ReadTool(), {"file_path": ""}, "file_path must be a non-empty string"),
        (ReadTool(), {"file_path": " \t\u3000"}, "file_path must be a non-empty string"),
        (ReadTool(), {"file_path": "a", "limit": 2001}, "limit must be less than or equal to 2000"),
        (
            ReadTool(),
            {"file_path": "a", "limit": 2e3 + 1},
            "limit must be less than or equal to 2000",
        ),
        (ReadTool(), {"file_path": "a", "limit": 0}, "limit must be a positive integer"),
        (ReadTool(), {"file_path": "a", "offset": 0}, "offset must be a positive integer"),
        (ReadTool(), {"file_path": "a", "offset": -3}, "offset must be a positive integer"),
        (ReadTool(), {"file_path": "a", "offset": 2.5}, "offset must be a positive integer"),
        (ReadTool(), {"file_path": "", "offset": 0}, "file_path must be a non-empty string"),
        (WriteTool(), {"file_path": "", "content": "x"}, "file_path must be a non-empty string"),
        (
            EditTool(),
            {"file_path": "a", "old_string": "", "new_string": "b"},
            "old_string must be a non-empty string",
        ),
        (
            EditTool(),
            {"file_path": "a", "old_string": "a", "new_string": "a"},
            "old_string and new_string must differ",
        ),
    ],
)
def test_invalid_arguments_get_upstreams_exact_sentences(
    tool: ReadTool | WriteTool | EditTool, raw: dict[str, Any], message: str
) -> None:
    with pytest.raises(ToolArgumentError) as caught:
        tool.parse_arguments(raw)
    assert caught.value.message == message
    assert caught.value.code == "INVALID_ARGS"


@pytest.mark.parametrize(
    ("raw", "offset", "limit"),
    [
        ({"file_path": "a", "offset": 2.0, "limit": 1e3}, 2, 1000),
        ({"file_path": "a", "offset": 10**30}, 10**30, 2000),
        ({"file_path": "a", "offset": 1e20}, 10**20, 2000),
    ],
)
def test_whole_numbers_sent_as_floats_are_integers(
    raw: dict[str, Any], offset: int, limit: int
) -> None:
    args = ReadTool().parse_arguments(raw)
    assert (args.offset, args.limit) == (offset, limit)
    assert isinstance(args.offset, int)


def test_valid_arguments_get_their_defaults() -> None:
    read = ReadTool().parse_arguments({"file_path": "a"})
    assert (read.file_path, read.offset, read.limit) == ("a", 1, 2000)
    edit = EditTool().parse_arguments({"file_path": "a", "old_string": "x", "new_string": ""})
    assert edit.replace_all is False


@pytest.mark.anyio
async def test_arguments_that_are_not_an_object_are_refused(context: Context) -> None:
    result = await context.execute("read", ["a.txt"])
    assert result.text == 'Error: invalid arguments: "arguments" must be an object'
    assert result.code == "INVALID_ARGS"


@pytest.mark.parametrize(
    ("code", "message", "expected"),
    [
        (
            FsErrorCode.STALE_VERSION,
            'cannot edit "/w/a": file changed since it was read',
            'cannot edit "/w/a": file changed since it was read — re-read the file, then retry',
        ),
        (
            FsErrorCode.NOT_OBSERVED,
            'edit requires reading "/w/a" first',
            'edit requires reading "/w/a" first — read the file, then retry',
        ),
        (
            FsErrorCode.SANDBOX_DENIED,
            'cannot write "/etc/x": outside the sandbox [sandbox: file access denied under '
            "workspace-write mode]",
            'cannot write "/etc/x": outside the sandbox [sandbox: file access denied under '
            "workspace-write mode] — use a path inside the workspace, or ask the user for access",
        ),
        (FsErrorCode.NOT_FOUND, 'cannot read "/w/a": not found', 'cannot read "/w/a": not found'),
    ],
)
def test_remedies_are_appended_after_an_em_dash(
    code: FsErrorCode, message: str, expected: str
) -> None:
    assert message_with_remedy(FsError(code, message)) == expected
    assert ReadTool().error_message(FsError(code, message)) == expected
