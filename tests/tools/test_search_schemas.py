"""What the model reads about glob, grep and list: schemas, descriptions, guidance, and the
exact argument messages (upstream's words)."""

from __future__ import annotations

from typing import Any

import pytest

from dsh_fs.discovery import DiscoveryPlugin, GlobTool, GrepTool, ListTool
from dsh_fs.runtime import Context, ToolArgumentError

PATH_PARAM = "(absolute, or relative to the working directory). Defaults to the working directory."


def test_the_schemas_are_plain_object_schemas() -> None:
    assert GlobTool().parameters_schema() == {
        "type": "object",
        "properties": {
            "pattern": {
                "type": "string",
                "description": 'Glob pattern to match file paths against (e.g. "**/*.py", '
                '"src/**/*.test.ts"). Without a "/" it matches file names at any depth; with '
                "one it matches paths from the search directory.",
                "minLength": 1,
            },
            "path": {"type": "string", "description": f"Directory to search in {PATH_PARAM}"},
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }
    grep = GrepTool().parameters_schema()
    assert list(grep["properties"]) == ["pattern", "path", "include"]
    assert grep["required"] == ["pattern"]
    assert grep["properties"]["include"] == {
        "type": "string",
        "description": 'One glob for the names of the files to search (e.g. "*.py", '
        '"*.{ts,tsx}"). Not a list; negation is not supported.',
    }
    assert ListTool().parameters_schema() == {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": f"Directory to list {PATH_PARAM}"}
        },
        "required": [],
        "additionalProperties": False,
    }


def test_each_tool_adds_one_guidance_section_telling_to_read_before_editing() -> None:
    context = Context()
    context.use(DiscoveryPlugin(), None)
    sections = {section.id: section.text for section in context.prompts.sections()}
    assert list(sections) == ["tools:glob", "tools:grep", "tools:list"]
    assert "read a file before you edit it" in sections["tools:glob"]
    assert "read it before editing it" in sections["tools:grep"]
    assert sections["tools:list"].startswith("Use the list tool")
    assert "Read a file before editing it" in GlobTool().description
    assert "before editing it" in GrepTool().description


def test_the_plugin_registers_only_the_named_tools() -> None:
    context = Context()
    context.use(DiscoveryPlugin(("grep",)), None)
    assert context.tools.names() == ["grep"]


ARGUMENT_ERRORS: list[tuple[Any, dict[str, Any], str]] = [
    (GlobTool(), {}, 'invalid arguments: missing required property "pattern"'),
    (GlobTool(), {"pattern": 3}, 'invalid arguments: "pattern" must be a string'),
    (GlobTool(), {"pattern": "  "}, "pattern must be a non-empty string"),
    (GlobTool(), {"pattern": "*", "path": " "}, "path must be a non-empty string when given"),
    (
        GlobTool(),
        {"pattern": "!*.py"},
        'pattern must be a positive glob; negated patterns ("!…") are not supported',
    ),
    (GrepTool(), {"pattern": ""}, "pattern must be a non-empty string"),
    (GrepTool(), {"pattern": "x", "path": "\t"}, "path must be a non-empty string when given"),
    (GrepTool(), {"pattern": "x", "include": " "}, "include must be a non-empty glob when given"),
    (
        GrepTool(),
        {"pattern": "x", "include": "!*.ts"},
        'include must be a positive glob filter; negated patterns ("!…") are not supported',
    ),
    (
        GrepTool(),
        {"pattern": "x", "include": "*.ts,*.js"},
        "include must be one glob, not a comma-separated list (use {a,b} alternation instead)",
    ),
    (
        GrepTool(),
        {"pattern": "x", "include": "src/*.py"},
        'include matches file names, not paths: put the directory in path (e.g. path "src", '
        'include "*.py")',
    ),
    (ListTool(), {"path": ""}, "path must be a non-empty string when given"),
    (
        ListTool(),
        {"path": "a", "recursive": True},
        'invalid arguments: "recursive" is not a declared property (additionalProperties: false)',
    ),
]


@pytest.mark.parametrize(("tool", "raw", "message"), ARGUMENT_ERRORS)
def test_argument_mistakes_get_upstream_words(tool: Any, raw: dict[str, Any], message: str) -> None:
    with pytest.raises(ToolArgumentError) as info:
        tool.parse_arguments(raw)
    assert info.value.message == message
    assert info.value.code == "INVALID_ARGS"


def test_whitespace_is_a_valid_grep_pattern_and_braces_a_valid_include() -> None:
    parsed = GrepTool().parse_arguments({"pattern": "  ", "include": "*.{ts,tsx}"})
    assert (parsed.pattern, parsed.include, parsed.path) == ("  ", "*.{ts,tsx}", None)
    assert GrepTool().parse_arguments({"pattern": "x", "include": "**/*.py"}).include == "**/*.py"
