"""`edit_files` (SPEC §13) end to end: every edit checked before anything is written, the
first failure named by its position, and publication all or nothing against a concurrent
writer. Each test checks the exact text the model sees and the disk."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from dsh_fs import Session, ToolResult, Workspace
from dsh_fs.fs import FsCapture, FsTarget, FsWriteOutcome, WrapperFileSystem, WriteGuard
from dsh_fs.providers import LocalFileSystem

pytestmark = pytest.mark.anyio

WorkspaceFactory = Callable[..., Workspace]  # the `make_workspace` fixture (conftest.py)

STALE_REMEDY = " \u2014 re-read the file, then retry"
NOT_OBSERVED_REMEDY = " \u2014 read the file, then retry"
NAMES = ("a.py", "b.py", "c.py")


def ok(result: ToolResult) -> ToolResult:
    assert not result.is_error, result.text
    return result


def one(path: Path | str, old: str, new: str, **extra: Any) -> dict[str, Any]:
    return {"file_path": str(path), "old_string": old, "new_string": new, **extra}


async def edit_files(session: Session, *edits: dict[str, Any]) -> ToolResult:
    return await session.call("edit_files", {"edits": list(edits)})


async def three_read_files(root: Path, session: Session) -> dict[str, str]:
    """a.py, b.py, c.py, each read by `session`; their contents by name."""
    contents = {}
    for name in NAMES:
        contents[name] = f"def {name[0]}():\n    return old_name\n"
        (root / name).write_text(contents[name], encoding="utf-8")
        ok(await session.call("read", {"file_path": name}))
    return contents


def on_disk(root: Path) -> dict[str, str]:
    return {name: (root / name).read_text(encoding="utf-8") for name in NAMES}


async def test_a_rename_across_three_files_lands_whole_and_is_rendered_as_a_list(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    session = make_workspace().session()
    before = await three_read_files(root, session)
    result = ok(
        await edit_files(
            session,
            *(one(name, "old_name", "new_name") for name in NAMES),
            one("a.py", "def a", "def first"),
        )
    )
    assert result.text == (
        f"Edited 3 files (4 replacements)\n- {root / 'a.py'}\n- {root / 'b.py'}\n- {root / 'c.py'}"
    )
    assert on_disk(root) == {
        "a.py": "def first():\n    return new_name\n",
        "b.py": "def b():\n    return new_name\n",
        "c.py": "def c():\n    return new_name\n",
    }
    assert result.value is not None
    assert [file["before"] for file in result.value["files"]] == [before[n] for n in NAMES]
    assert result.value["replacements"] == 4


async def test_edits_to_one_file_apply_in_order_each_to_the_previous_result(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    session = make_workspace().session()
    await three_read_files(root, session)
    ok(
        await edit_files(
            session, one("a.py", "old_name", "mid_name"), one("a.py", "mid_name", "new_name")
        )
    )
    assert (root / "a.py").read_text(encoding="utf-8") == "def a():\n    return new_name\n"


async def test_files_edited_by_the_set_can_be_edited_again_without_a_read(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    session = make_workspace().session()
    await three_read_files(root, session)
    ok(await edit_files(session, one("a.py", "old_name", "x"), one("b.py", "old_name", "y")))
    ok(await edit_files(session, one("a.py", "x", "z"), one("b.py", "y", "z")))
    assert (root / "b.py").read_text(encoding="utf-8") == "def b():\n    return z\n"


@pytest.mark.parametrize("position", [1, 2, 3])
async def test_an_edit_not_found_at_any_position_changes_no_file_and_names_its_position(
    make_workspace: WorkspaceFactory, root: Path, position: int
) -> None:
    session = make_workspace().session()
    before = await three_read_files(root, session)
    edits = [one(name, "old_name", "new_name") for name in NAMES]
    missing = NAMES[position - 1]
    edits[position - 1] = one(missing, "no such text", "new_name")
    alone = await session.call("edit", edits[position - 1])
    result = await edit_files(session, *edits)
    assert result.code == alone.code == "FS_EDIT_NOT_FOUND"
    assert result.text == (
        f'Error: edit {position} of 3 ("{root / missing}"): ' + alone.text.removeprefix("Error: ")
    )
    assert result.error is not None
    assert alone.error is not None
    assert result.error["details"] == alone.error["details"]
    assert on_disk(root) == before


@pytest.mark.parametrize("position", [1, 2, 3])
async def test_an_ambiguous_edit_at_any_position_changes_no_file(
    make_workspace: WorkspaceFactory, root: Path, position: int
) -> None:
    session = make_workspace().session()
    before = await three_read_files(root, session)
    edits = [one(name, "old_name", "new_name") for name in NAMES]
    edits[position - 1] = one(NAMES[position - 1], "e", "E")
    alone = await session.call("edit", edits[position - 1])
    result = await edit_files(session, *edits)
    assert result.code == alone.code == "FS_AMBIGUOUS_EDIT"
    assert result.text == (
        f'Error: edit {position} of 3 ("{root / NAMES[position - 1]}"): '
        + alone.text.removeprefix("Error: ")
    )
    assert on_disk(root) == before


@pytest.mark.parametrize("position", [1, 2, 3])
async def test_an_unread_file_at_any_position_is_refused_with_the_read_remedy(
    make_workspace: WorkspaceFactory, root: Path, position: int
) -> None:
    session = make_workspace().session()
    before = await three_read_files(root, session)
    unread = root / "unread.py"
    unread.write_text("old_name\n", encoding="utf-8")
    edits = [one(name, "old_name", "new_name") for name in NAMES]
    edits.insert(position - 1, one("unread.py", "old_name", "new_name"))
    result = await edit_files(session, *edits)
    assert result.code == "FS_NOT_OBSERVED"
    assert result.text == (
        f'Error: edit {position} of 4 ("{unread}"): edit requires reading "{unread}" first'
        + NOT_OBSERVED_REMEDY
    )
    assert on_disk(root) == before
    assert unread.read_text(encoding="utf-8") == "old_name\n"


@pytest.mark.parametrize("position", [1, 2, 3])
async def test_a_file_changed_since_it_was_read_at_any_position_is_stale_and_nothing_changes(
    make_workspace: WorkspaceFactory, root: Path, position: int
) -> None:
    session = make_workspace().session()
    before = await three_read_files(root, session)
    changed = root / NAMES[position - 1]
    changed.write_text(before[changed.name] + "# someone else\n", encoding="utf-8")
    before[changed.name] = changed.read_text(encoding="utf-8")
    result = await edit_files(session, *(one(name, "old_name", "new_name") for name in NAMES))
    assert result.code == "FS_STALE_VERSION"
    assert result.text == (
        f'Error: edit {position} of 3 ("{changed}"): cannot edit "{changed}": '
        "file changed since it was read" + STALE_REMEDY
    )
    assert on_disk(root) == before


async def test_a_placeholder_in_a_later_edit_refuses_the_whole_set(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    session = make_workspace().session()
    body = "".join(f"    step_{n}()\n" for n in range(8))
    (root / "b.py").write_text(f"def b():\n{body}", encoding="utf-8")
    before = await three_read_files(root, session)
    before["b.py"] = f"def b():\n{body}"
    (root / "b.py").write_text(before["b.py"], encoding="utf-8")
    ok(await session.call("read", {"file_path": "b.py"}))
    result = await edit_files(
        session,
        one("a.py", "old_name", "new_name"),
        one("b.py", body, "    # ... existing code ...\n    step_8()\n"),
    )
    assert result.code == "FS_PLACEHOLDER"
    assert result.text.startswith(f'Error: edit 2 of 2 ("{root / "b.py"}"): ')
    assert on_disk(root) == before


@pytest.mark.parametrize(
    ("edits", "message"),
    [
        ([], "edits must hold at least one edit"),
        (
            [one("a.py", "x", "y")] * 101,
            "edits must hold at most 100 edits (the limit of one call), got 101",
        ),
        ([one("a.py", "", "y")], "edit 1 of 1: old_string must be a non-empty string"),
        (
            [one("a.py", "x", "y"), one("a.py", "x", "x")],
            "edit 2 of 2: old_string and new_string must differ",
        ),
        (
            [one("a.py", "x", "y"), {"file_path": "a.py"}],
            'edit 2 of 2: invalid arguments: missing required property "old_string"; '
            'missing required property "new_string"',
        ),
        (["a.py"], "edit 1 of 1: invalid arguments: the edit must be an object"),
    ],
)
async def test_bad_arguments_are_invalid_args_naming_the_edit_or_the_limit(
    make_workspace: WorkspaceFactory, edits: list[Any], message: str
) -> None:
    result = await make_workspace().session().call("edit_files", {"edits": edits})
    assert result.code == "INVALID_ARGS"
    assert result.text == f"Error: {message}"


async def test_a_set_over_the_size_bound_is_invalid_args_naming_the_limit(root: Path) -> None:
    workspace = Workspace(LocalFileSystem(root), cwd=str(root), max_set_bytes=40)
    try:
        session = workspace.session()
        before = await three_read_files(root, session)
        result = await edit_files(session, *(one(n, "old_name", "new_name") for n in NAMES))
    finally:
        await workspace.aclose()
    assert result.code == "INVALID_ARGS"
    assert result.text == (
        "Error: the files edit_files would write total 87 bytes, over the limit of 40 bytes"
    )
    assert on_disk(root) == before


# --- a concurrent writer between staging and publication --------------------------------


class BeforePublication(WrapperFileSystem):
    """The local provider, running `hook` once right before the first write: after every
    edit of the set is staged, before any file is published."""

    def __init__(self, root: Path, hook: Callable[[], Awaitable[None]]) -> None:
        super().__init__(LocalFileSystem(root))
        self.hook: Callable[[], Awaitable[None]] | None = hook

    async def write_text(
        self,
        target: FsTarget,
        content: str,
        expected: WriteGuard | None = None,
        *,
        capture: FsCapture | None = None,
    ) -> FsWriteOutcome:
        hook, self.hook = self.hook, None
        if hook is not None:
            await hook()
        return await super().write_text(target, content, expected, capture=capture)


@pytest.mark.parametrize("position", [1, 2, 3])
async def test_a_writer_between_staging_and_publication_rolls_the_set_back(
    root: Path, position: int
) -> None:
    changed = root / NAMES[position - 1]
    theirs = "their content, longer than before\n"

    async def writer() -> None:
        changed.write_text(theirs, encoding="utf-8")

    workspace = Workspace(BeforePublication(root, writer), cwd=str(root))
    try:
        session = workspace.session()
        before = await three_read_files(root, session)
        result = await edit_files(session, *(one(name, "old_name", "new_name") for name in NAMES))
        assert result.code == "FS_STALE_VERSION"
        assert result.text == (
            f'Error: edit {position} of 3 ("{changed}"): cannot edit "{changed}": '
            "file changed since it was read" + STALE_REMEDY
        )
        before[changed.name] = theirs
        assert on_disk(root) == before
        # The files put back are as the session read them: editable without a new read.
        others = [name for name in NAMES if name != changed.name]
        ok(await edit_files(session, *(one(n, "old_name", "new_name") for n in others)))
    finally:
        await workspace.aclose()


async def test_the_schema_is_one_array_of_edit_arguments_and_not_destructive() -> None:
    from dsh_fs.tools import EditFilesTool, EditTool

    tool = EditFilesTool()
    schema = tool.parameters_schema()
    assert schema["required"] == ["edits"]
    edits = schema["properties"]["edits"]
    assert (edits["minItems"], edits["maxItems"]) == (1, 100)
    assert edits["items"] == EditTool().parameters_schema()
    assert tool.annotations.destructive is False
    assert tool.annotations.idempotent is False
