"""Claude's text editor (``text_editor_20250728``) over the workspace, with the SDK's own types."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from anthropic.types import ToolResultBlockParam, ToolTextEditor20250728Param, ToolUseBlock
from pydantic import TypeAdapter

from dsh_fs import Workspace
from dsh_fs.adapters import anthropic_tool_results, anthropic_tools
from dsh_fs.workspace import Session

pytestmark = pytest.mark.anyio

EDITOR = "str_replace_based_edit_tool"


_ids = iter(range(1_000_000))


async def editor(session: Session, **command: Any) -> tuple[str, bool]:
    """One ``str_replace_based_edit_tool`` call, as the SDK hands it over."""
    block = ToolUseBlock(id=f"toolu_{next(_ids)}", name=EDITOR, input=command, type="tool_use")
    (result,) = await anthropic_tool_results(session, [block])
    TypeAdapter(ToolResultBlockParam).validate_python(result)
    assert result["tool_use_id"] == block.id
    assert isinstance(result["content"], str)
    return result["content"], result["is_error"]


def test_the_text_editor_replaces_read_write_edit_in_the_tool_list(root: Path) -> None:
    workspace = Workspace.sandbox(root)
    tools = anthropic_tools(workspace, text_editor=True)
    assert tools[0] == {"type": "text_editor_20250728", "name": EDITOR}
    TypeAdapter(ToolTextEditor20250728Param).validate_python(tools[0])
    # Tools other than read/write/edit (discovery, when present) stay ordinary tools.
    assert [t["name"] for t in tools[1:]] == [
        s["name"] for s in workspace.tool_schemas() if s["name"] not in {"read", "write", "edit"}
    ]
    assert [t["name"] for t in anthropic_tools(workspace)] == [
        "read",
        "write",
        "edit",
        "edit_files",
        "glob",
        "grep",
        "list",
        "move",
        "delete",
        "mkdir",
    ]


async def test_view_edit_stale_refused_review_then_edit(session: Session, root: Path) -> None:
    path = root / "app.py"
    path.write_text("def greet():\n    return 'hi'\n", encoding="utf-8")

    assert await editor(session, command="view", path="app.py") == (
        "1: def greet():\n2:     return 'hi'",
        False,
    )
    text, is_error = await editor(
        session, command="str_replace", path="app.py", old_str="'hi'", new_str="'hello'"
    )
    assert not is_error
    assert text == (
        f"The file {path} has been edited. Here is a snippet of the edited file:\n"
        "1: def greet():\n2:     return 'hello'\n"
        "Review the changes and make sure they are as expected. Edit the file again if necessary."
    )

    path.write_text("def greet():\n    return 'hello'\n# theirs\n", encoding="utf-8")
    refused = await editor(
        session, command="str_replace", path="app.py", old_str="'hello'", new_str="'hey'"
    )
    assert refused == (
        f'Error: cannot edit "{path}": file changed since it was read'
        " \u2014 view the file again, then retry",
        True,
    )
    assert path.read_text(encoding="utf-8") == "def greet():\n    return 'hello'\n# theirs\n"

    await editor(session, command="view", path="app.py")
    text, is_error = await editor(
        session, command="str_replace", path="app.py", old_str="'hello'", new_str="'hey'"
    )
    assert not is_error, text
    assert path.read_text(encoding="utf-8") == "def greet():\n    return 'hey'\n# theirs\n"


async def test_str_replace_without_a_view_is_refused_in_the_tools_words(
    session: Session, root: Path
) -> None:
    (root / "a.txt").write_text("x\n", encoding="utf-8")
    text = await editor(session, command="str_replace", path="a.txt", old_str="x", new_str="y")
    assert text == (
        f'Error: editing requires viewing "{root / "a.txt"}" first'
        " \u2014 view the file, then retry",
        True,
    )


async def test_create_never_overwrites_a_file_it_did_not_view(session: Session, root: Path) -> None:
    (root / "a.txt").write_text("keep me\n", encoding="utf-8")
    assert await editor(session, command="create", path="a.txt", file_text="new\n") == (
        f'Error: cannot overwrite existing "{root / "a.txt"}" without viewing it first'
        " \u2014 view the file, then retry",
        True,
    )
    assert (root / "a.txt").read_text(encoding="utf-8") == "keep me\n"
    assert await editor(session, command="create", path="new.txt", file_text="hi\n") == (
        f"File created successfully at: {root / 'new.txt'}",
        False,
    )
    assert (root / "new.txt").read_text(encoding="utf-8") == "hi\n"
    await editor(session, command="view", path="a.txt")
    assert await editor(session, command="create", path="a.txt", file_text="new\n") == (
        f"File overwritten successfully at: {root / 'a.txt'}",
        False,
    )


async def test_a_str_replace_miss_or_ambiguity_changes_nothing_and_says_why(
    session: Session, root: Path
) -> None:
    path = root / "a.py"
    path.write_text("x = 1\nx = 1\n", encoding="utf-8")
    await editor(session, command="view", path="a.py")
    miss, is_error = await editor(
        session, command="str_replace", path="a.py", old_str="y = 1", new_str="y = 2"
    )
    assert is_error
    assert miss.splitlines()[0] == (
        f'Error: No replacement was performed: old_str was not found in "{path}"'
    )
    twice = await editor(session, command="str_replace", path="a.py", old_str="x = 1", new_str="z")
    assert twice[0].splitlines()[0] == (
        f'Error: No replacement was performed: old_str matched 2 times in "{path}"; '
        "include more surrounding lines in old_str so that it matches exactly once"
    )
    assert path.read_text(encoding="utf-8") == "x = 1\nx = 1\n"


async def test_insert_goes_after_the_line_under_the_same_guard(
    session: Session, root: Path
) -> None:
    path = root / "a.py"
    path.write_text("import os\n\nprint(os.name)\n", encoding="utf-8")
    refused = await editor(session, command="insert", path="a.py", insert_line=0, new_str="# hi")
    assert refused[1]
    await editor(session, command="view", path="a.py")
    text, is_error = await editor(
        session, command="insert", path="a.py", insert_line=1, new_str="import sys"
    )
    assert not is_error, text
    assert text.startswith(f"The file {path} has been edited. Here is a snippet")
    assert "2: import sys" in text
    assert path.read_text(encoding="utf-8") == "import os\nimport sys\n\nprint(os.name)\n"
    out_of_range = await editor(session, command="insert", path="a.py", insert_line=9, new_str="x")
    assert out_of_range == (
        f'Error: insert_line 9 is out of range for "{path}" (4 lines); '
        "insert after a line from 0 (the top) to 4",
        True,
    )


async def test_view_range_windows_and_footer(session: Session, root: Path) -> None:
    (root / "a.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)), encoding="utf-8")
    assert await editor(session, command="view", path="a.txt", view_range=[3, 4]) == (
        "3: line 3\n4: line 4",
        False,
    )
    assert await editor(session, command="view", path="a.txt", view_range=[9, -1]) == (
        "9: line 9\n10: line 10",
        False,
    )
    bad = await editor(session, command="view", path="a.txt", view_range=[4, 2])
    assert bad[1]
    assert bad[0].startswith("Error: Invalid `view_range`: [4, 2].")
    past = await editor(session, command="view", path="a.txt", view_range=[50, -1])
    assert past == (
        f'Error: view_range start 50 is out of range for "{root / "a.txt"}" (10 lines)',
        True,
    )


async def test_view_of_a_directory_lists_two_levels_without_hidden_entries(
    session: Session, root: Path
) -> None:
    (root / "src" / "pkg" / "deep").mkdir(parents=True)
    (root / "src" / "pkg" / "deep" / "x.py").write_text("", encoding="utf-8")
    (root / "src" / "main.py").write_text("", encoding="utf-8")
    (root / ".git").mkdir()
    (root / ".env").write_text("", encoding="utf-8")
    (root / "README.md").write_text("", encoding="utf-8")
    assert await editor(session, command="view", path=".") == (
        f"Here's the files and directories up to 2 levels deep in {root}, "
        f"excluding hidden items:\n{root}\n{root}/README.md\n{root}/src\n"
        f"{root}/src/main.py\n{root}/src/pkg\n",
        False,
    )


async def test_a_path_outside_the_fence_is_refused(session: Session, root: Path) -> None:
    outside = root.parent / "secret.txt"
    outside.write_text("secret\n", encoding="utf-8")
    command: dict[str, Any]
    for command in (
        {"command": "view", "path": str(outside)},
        {"command": "create", "path": str(outside), "file_text": "pwned"},
    ):
        text, is_error = await editor(session, **command)
        assert is_error
        assert "outside the sandbox" in text, text
    # Never viewable, so never editable: the policy refuses before the fence is asked.
    for command in (
        {"command": "str_replace", "path": str(outside), "old_str": "secret", "new_str": "x"},
        {"command": "insert", "path": str(outside), "insert_line": 0, "new_str": "x"},
    ):
        text, is_error = await editor(session, **command)
        assert is_error
        assert text.startswith("Error: editing requires viewing"), text
    assert outside.read_text(encoding="utf-8") == "secret\n"


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (
            {"command": "undo_edit", "path": "a.txt"},
            "Unrecognized command 'undo_edit'. The allowed commands for the "
            "str_replace_based_edit_tool tool are: view, create, str_replace, insert",
        ),
        ({"command": "view"}, "Parameter `path` is required for command: view"),
        (
            {"command": "create", "path": "a.txt"},
            "Parameter `file_text` is required for command: create",
        ),
        (
            {"command": "str_replace", "path": "a.txt", "new_str": "y"},
            "Parameter `old_str` is required for command: str_replace",
        ),
        (
            {"command": "str_replace", "path": "a.txt", "old_str": "x", "new_str": "x"},
            "Parameter `new_str` must differ from `old_str`: nothing would change",
        ),
        (
            {"command": "insert", "path": "a.txt", "new_str": "y"},
            "Parameter `insert_line` is required for command: insert",
        ),
        (
            {"command": "insert", "path": "a.txt", "insert_line": 0},
            "Parameter `new_str` is required for command: insert",
        ),
        (
            {"command": "view", "path": "a.txt", "view_range": [1]},
            "Invalid `view_range`. It should be a list of two integers.",
        ),
    ],
)
async def test_malformed_commands_fail_clearly_and_change_nothing(
    session: Session, root: Path, command: dict[str, Any], message: str
) -> None:
    (root / "a.txt").write_text("x\n", encoding="utf-8")
    await editor(session, command="view", path="a.txt")
    assert await editor(session, **command) == (f"Error: {message}", True)
    assert (root / "a.txt").read_text(encoding="utf-8") == "x\n"


async def test_an_input_that_is_not_an_object_is_a_failed_result(session: Session) -> None:
    block = {"type": "tool_use", "id": "toolu_x", "name": EDITOR, "input": "view a.txt"}
    (result,) = await anthropic_tool_results(session, [block])
    assert result["is_error"]
    assert result["content"] == "Error: the input must be an object with a command and a path"


async def test_insert_accepts_insert_text_as_the_texts_name(session: Session, root: Path) -> None:
    (root / "a.txt").write_text("b\n", encoding="utf-8")
    await editor(session, command="view", path="a.txt")
    text, is_error = await editor(
        session, command="insert", path="a.txt", insert_line=0, insert_text="a"
    )
    assert not is_error, text
    assert (root / "a.txt").read_text(encoding="utf-8") == "a\nb\n"
