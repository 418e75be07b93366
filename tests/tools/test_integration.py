"""The three tools end to end: `Session.call` over a real provider on the real disk.

Every test runs against each backend of `conftest.BACKENDS`, with the observation policy
unless it says otherwise, and checks both the exact text the model sees and the disk.
External changes always change the file's size, so the new version differs even when the
filesystem clock has not ticked since the read.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from dsh_fs import Session, ToolResult, Workspace
from dsh_fs.fs import FS_OBSERVED, Absent, FsObserved, Present

pytestmark = pytest.mark.anyio

WorkspaceFactory = Callable[..., Workspace]  # the `make_workspace` fixture (conftest.py)

NOT_OBSERVED_REMEDY = " \u2014 read the file, then retry"
STALE_REMEDY = " \u2014 re-read the file, then retry"


def read_block(path: Path, body: str) -> str:
    return f"<path>{path}</path>\n<type>file</type>\n<content>\n{body}\n</content>"


def write_block(path: Path, outcome: str) -> str:
    return f"<path>{path}</path>\n<type>file</type>\n<content>\n{outcome}\n</content>"


def ok(result: ToolResult) -> ToolResult:
    assert not result.is_error, result.text
    return result


def failed(result: ToolResult, code: str, text: str) -> None:
    assert result.is_error
    assert result.code == code
    assert result.text == text
    assert result.value is None
    assert result.error is not None
    assert result.error["code"] == code


async def read(session: Session, path: Path | str, **extra: Any) -> ToolResult:
    return await session.call("read", {"file_path": str(path), **extra})


async def write(session: Session, path: Path | str, content: str) -> ToolResult:
    return await session.call("write", {"file_path": str(path), "content": content})


async def edit(session: Session, path: Path | str, old: str, new: str, **extra: Any) -> ToolResult:
    return await session.call(
        "edit", {"file_path": str(path), "old_string": old, "new_string": new, **extra}
    )


# --- read: windowing, footers, caps ---------------------------------------------------------


async def test_read_shows_numbered_lines_and_the_end_of_file_footer(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    (root / "a.py").write_text("first line\nsecond line\n", encoding="utf-8")
    result = ok(await read(make_workspace().session(), "a.py"))
    assert result.text == read_block(
        root / "a.py", "1: first line\n2: second line\n\n(End of file - total 2 lines)"
    )
    assert result.value == {
        "path": str(root / "a.py"),
        "offset": 1,
        "lines": [{"number": 1, "text": "first line"}, {"number": 2, "text": "second line"}],
        "total_lines": 2,
        "output_capped": False,
        "encoding": "utf-8",
        "bom": False,
    }


async def test_read_with_offset_and_limit_shows_the_continue_footer(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    (root / "a.txt").write_text("".join(f"l{n}\n" for n in range(1, 11)), encoding="utf-8")
    result = ok(await read(make_workspace().session(), "a.txt", offset=4, limit=2))
    assert result.text == read_block(
        root / "a.txt", "4: l4\n5: l5\n\n(Showing lines 4-5 of 10. Use offset=6 to continue.)"
    )


async def test_read_of_a_window_reaching_the_end_shows_end_of_file(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    (root / "a.txt").write_text("a\nb\nc", encoding="utf-8")
    result = ok(await read(make_workspace().session(), "a.txt", offset=3, limit=5))
    assert result.text == read_block(root / "a.txt", "3: c\n\n(End of file - total 3 lines)")


async def test_read_stops_at_2000_lines_by_default(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    (root / "long.txt").write_text("x\n" * 2500, encoding="utf-8")
    result = ok(await read(make_workspace().session(), "long.txt"))
    assert result.text.endswith(
        "2000: x\n\n(Showing lines 1-2000 of 2500. Use offset=2001 to continue.)\n</content>"
    )
    assert result.value is not None
    assert len(result.value["lines"]) == 2000


async def test_read_stops_at_50_kib_of_output_with_the_capped_footer(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    # 99 characters + 1 separator per line: 512 lines fit in 51200 bytes, the 513th does not.
    (root / "wide.txt").write_text(("w" * 99 + "\n") * 600, encoding="utf-8")
    result = ok(await read(make_workspace().session(), "wide.txt", offset=3))
    assert result.text.endswith(
        f"514: {'w' * 99}\n\n"
        "(Output capped. Showing lines 3-514. Use offset=515 to continue.)\n</content>"
    )
    assert result.value is not None
    assert result.value["total_lines"] == 600
    assert result.value["output_capped"] is True


async def test_a_large_file_is_streamed_and_windowed_exactly(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    # ~6.5 MiB: larger than the whole-read threshold and than one 4 MiB stream chunk, with
    # multi-byte characters, so windows straddle chunk boundaries.
    lines = [f"{n:06d} é€ {'x' * 50}" for n in range(1, 110_001)]
    (root / "big.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    session = make_workspace().session()
    for offset in (1, 69_900, 109_995):
        result = ok(await read(session, "big.txt", offset=offset, limit=10))
        assert result.value is not None
        assert result.value["total_lines"] == 110_000
        shown = [line["text"] for line in result.value["lines"]]
        assert shown == lines[offset - 1 : offset - 1 + 10]


async def test_read_truncates_a_line_longer_than_2000_characters(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    (root / "min.js").write_text("m" * 5000 + "\nshort\n", encoding="utf-8")
    result = ok(await read(make_workspace().session(), "min.js"))
    assert result.text == read_block(
        root / "min.js",
        f"1: {'m' * 2000}... (line truncated to 2000 chars)\n2: short\n\n"
        "(End of file - total 2 lines)",
    )


async def test_read_hides_crlf_line_endings(make_workspace: WorkspaceFactory, root: Path) -> None:
    (root / "dos.txt").write_bytes(b"one\r\ntwo\r\nthree")
    result = ok(await read(make_workspace().session(), "dos.txt"))
    assert result.text == read_block(
        root / "dos.txt", "1: one\n2: two\n3: three\n\n(End of file - total 3 lines)"
    )


async def test_read_of_an_empty_file_shows_the_footer_alone(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    (root / "empty.txt").write_bytes(b"")
    result = ok(await read(make_workspace().session(), "empty.txt"))
    assert result.text == read_block(root / "empty.txt", "(End of file - total 0 lines)")
    assert result.value is not None
    assert result.value["lines"] == []


async def test_read_hides_a_leading_byte_order_mark(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    (root / "bom.txt").write_bytes(b"\xef\xbb\xbfhello\n")
    result = ok(await read(make_workspace().session(), "bom.txt"))
    assert "\n1: hello\n" in result.text


async def test_read_with_an_offset_past_the_end_is_not_found(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    (root / "a.txt").write_text("a\nb\n", encoding="utf-8")
    session = make_workspace().session()
    failed(
        await read(session, "a.txt", offset=3),
        "FS_NOT_FOUND",
        f'Error: offset 3 is out of range for "{root / "a.txt"}" (2 lines)',
    )
    (root / "empty.txt").write_bytes(b"")
    failed(
        await read(session, "empty.txt", offset=2),
        "FS_NOT_FOUND",
        f'Error: offset 2 is out of range for "{root / "empty.txt"}" (0 lines)',
    )


@pytest.mark.parametrize(
    ("offset", "shown"),
    [
        (100000000000000000000, "100000000000000000000"),
        (1e20, "100000000000000000000"),
        (123456789012345678901, "123456789012345680000"),
        (10**21, "1e+21"),
        (2**63, "9223372036854776000"),
    ],
)
async def test_an_offset_too_large_to_exist_is_out_of_range_printed_as_upstream_prints_it(
    make_workspace: WorkspaceFactory, root: Path, offset: float, shown: str
) -> None:
    (root / "a.txt").write_text("a\n", encoding="utf-8")
    result = await make_workspace().session().call("read", {"file_path": "a.txt", "offset": offset})
    failed(
        result,
        "FS_NOT_FOUND",
        f'Error: offset {shown} is out of range for "{root / "a.txt"}" (1 lines)',
    )


async def test_read_with_a_limit_above_2000_is_an_argument_error(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    (root / "a.txt").write_text("a\n", encoding="utf-8")
    failed(
        await read(make_workspace().session(), "a.txt", limit=2001),
        "INVALID_ARGS",
        "Error: limit must be less than or equal to 2000",
    )


async def test_read_of_a_missing_file_is_not_found(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    failed(
        await read(make_workspace().session(), "missing.txt"),
        "FS_NOT_FOUND",
        f'Error: cannot read "{root / "missing.txt"}": not found',
    )


async def test_read_of_a_binary_file_is_not_text(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    (root / "img.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    failed(
        await read(make_workspace().session(), "img.bin"),
        "FS_NOT_TEXT",
        f'Error: cannot read "{root / "img.bin"}": binary file',
    )


async def test_read_of_invalid_utf8_is_not_text(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    (root / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    failed(
        await read(make_workspace().session(), "latin1.txt"),
        "FS_NOT_TEXT",
        f'Error: cannot read "{root / "latin1.txt"}": invalid UTF-8 text',
    )


async def test_read_of_a_directory_is_not_a_regular_file(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    (root / "sub").mkdir()
    failed(
        await read(make_workspace().session(), "sub"),
        "FS_NOT_REGULAR_FILE",
        f'Error: cannot read "{root / "sub"}": not a regular file',
    )


async def test_read_of_a_fifo_is_refused_without_blocking(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    os.mkfifo(root / "pipe")
    session = make_workspace().session()
    with anyio.fail_after(60):
        failed(
            await read(session, "pipe"),
            "FS_NOT_REGULAR_FILE",
            f'Error: cannot read "{root / "pipe"}": not a regular file',
        )
        failed(
            await write(session, "pipe", "x"),
            "FS_NOT_REGULAR_FILE",
            f'Error: cannot write "{root / "pipe"}": not a regular file',
        )


async def test_read_resolves_relative_paths_against_the_session_cwd(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    (root / "sub").mkdir()
    (root / "sub" / "a.txt").write_text("inner\n", encoding="utf-8")
    session = make_workspace().session(cwd=root / "sub")
    result = ok(await read(session, "a.txt"))
    assert result.text.startswith(f"<path>{root / 'sub' / 'a.txt'}</path>")


# --- write -------------------------------------------------------------------------------


async def test_write_creates_a_new_file(make_workspace: WorkspaceFactory, root: Path) -> None:
    result = ok(await write(make_workspace().session(), "new/file.txt", "hello\n"))
    assert result.text == write_block(root / "new" / "file.txt", "Created file")
    assert result.value == {
        "path": str(root / "new" / "file.txt"),
        "operation": "create",
        "before": None,
        "after": "hello\n",
    }
    assert (root / "new" / "file.txt").read_bytes() == b"hello\n"


async def test_write_after_a_read_updates_the_file(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    (root / "a.txt").write_text("old\n", encoding="utf-8")
    session = make_workspace().session()
    ok(await read(session, "a.txt"))
    result = ok(await write(session, "a.txt", "new\n"))
    assert result.text == write_block(root / "a.txt", "Updated file")
    assert result.value is not None
    assert result.value["before"] == "old\n"
    assert (root / "a.txt").read_bytes() == b"new\n"


async def test_overwrite_without_a_read_is_not_observed_with_the_remedy(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    (root / "a.txt").write_text("keep\n", encoding="utf-8")
    failed(
        await write(make_workspace().session(), "a.txt", "clobber\n"),
        "FS_NOT_OBSERVED",
        f'Error: cannot overwrite existing "{root / "a.txt"}" without reading it first'
        + NOT_OBSERVED_REMEDY,
    )
    assert (root / "a.txt").read_bytes() == b"keep\n"


async def test_write_twice_needs_no_read_in_between(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    session = make_workspace().session()
    ok(await write(session, "a.txt", "one\n"))
    result = ok(await write(session, "a.txt", "two\n"))
    assert result.text == write_block(root / "a.txt", "Updated file")
    assert (root / "a.txt").read_bytes() == b"two\n"


async def test_stale_write_after_an_external_change_is_refused_with_the_remedy(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    (root / "a.txt").write_text("v1\n", encoding="utf-8")
    session = make_workspace().session()
    ok(await read(session, "a.txt"))
    (root / "a.txt").write_text("external v2\n", encoding="utf-8")
    failed(
        await write(session, "a.txt", "mine\n"),
        "FS_STALE_VERSION",
        f'Error: cannot write "{root / "a.txt"}": file changed since it was read' + STALE_REMEDY,
    )
    assert (root / "a.txt").read_bytes() == b"external v2\n"
    ok(await read(session, "a.txt"))
    ok(await write(session, "a.txt", "mine\n"))
    assert (root / "a.txt").read_bytes() == b"mine\n"


# --- edit --------------------------------------------------------------------------------


async def test_edit_after_a_read_replaces_the_unique_match(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    (root / "a.py").write_text("x = 1\ny = 2\n", encoding="utf-8")
    session = make_workspace().session()
    ok(await read(session, "a.py"))
    result = ok(await edit(session, "a.py", "y = 2", "y = 3"))
    assert result.text == f"The file {root / 'a.py'} has been updated successfully."
    assert result.value == {
        "path": str(root / "a.py"),
        "before": "x = 1\ny = 2\n",
        "after": "x = 1\ny = 3\n",
        "replacements": 1,
        "replace_all": False,
    }
    assert (root / "a.py").read_bytes() == b"x = 1\ny = 3\n"


async def test_edit_without_a_read_is_not_observed_with_the_remedy(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    (root / "a.txt").write_text("a\n", encoding="utf-8")
    failed(
        await edit(make_workspace().session(), "a.txt", "a", "b"),
        "FS_NOT_OBSERVED",
        f'Error: edit requires reading "{root / "a.txt"}" first' + NOT_OBSERVED_REMEDY,
    )
    assert (root / "a.txt").read_bytes() == b"a\n"


async def test_stale_edit_after_an_external_change_is_refused_with_the_remedy(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    (root / "a.txt").write_text("alpha\n", encoding="utf-8")
    session = make_workspace().session()
    ok(await read(session, "a.txt"))
    (root / "a.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    failed(
        await edit(session, "a.txt", "alpha", "gamma"),
        "FS_STALE_VERSION",
        f'Error: cannot edit "{root / "a.txt"}": file changed since it was read' + STALE_REMEDY,
    )
    assert (root / "a.txt").read_bytes() == b"alpha\nbeta\n"
    ok(await read(session, "a.txt"))
    ok(await edit(session, "a.txt", "alpha", "gamma"))
    assert (root / "a.txt").read_bytes() == b"gamma\nbeta\n"


async def test_edit_of_a_missing_old_string_is_edit_not_found(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    (root / "a.txt").write_text("abc\n", encoding="utf-8")
    session = make_workspace().session()
    ok(await read(session, "a.txt"))
    failed(
        await edit(session, "a.txt", "xyz", "q"),
        "FS_EDIT_NOT_FOUND",
        f'Error: old_string was not found in "{root / "a.txt"}"\n'
        "Nothing in the file is close to old_string: read the file to find the text you meant "
        "to change, or check the path.",
    )


async def test_edit_of_an_ambiguous_old_string_is_refused(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    (root / "a.txt").write_text("foo\nfoo\nfoo\n", encoding="utf-8")
    session = make_workspace().session()
    ok(await read(session, "a.txt"))
    failed(
        await edit(session, "a.txt", "foo", "bar"),
        "FS_AMBIGUOUS_EDIT",
        f'Error: old_string matched 3 times in "{root / "a.txt"}"; '
        "provide a more specific old_string or set replace_all to true\n"
        "The matches start at lines 1, 2 and 3.",
    )
    assert (root / "a.txt").read_bytes() == b"foo\nfoo\nfoo\n"


async def test_edit_with_replace_all_replaces_every_occurrence(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    (root / "a.txt").write_text("foo\nfoo\nfoo\n", encoding="utf-8")
    session = make_workspace().session()
    ok(await read(session, "a.txt"))
    result = ok(await edit(session, "a.txt", "foo", "bar", replace_all=True))
    assert result.text == (
        f"The file {root / 'a.txt'} has been updated. All occurrences were successfully replaced."
    )
    assert result.value is not None
    assert result.value["replacements"] == 3
    assert (root / "a.txt").read_bytes() == b"bar\nbar\nbar\n"


async def test_edit_with_an_empty_old_string_is_an_argument_error(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    (root / "a.txt").write_text("a\n", encoding="utf-8")
    failed(
        await edit(make_workspace().session(), "a.txt", "", "b"),
        "INVALID_ARGS",
        "Error: old_string must be a non-empty string",
    )


async def test_edit_with_identical_strings_is_an_argument_error(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    (root / "a.txt").write_text("a\n", encoding="utf-8")
    failed(
        await edit(make_workspace().session(), "a.txt", "a", "a"),
        "INVALID_ARGS",
        "Error: old_string and new_string must differ",
    )


async def test_edit_keeps_crlf_line_endings(make_workspace: WorkspaceFactory, root: Path) -> None:
    (root / "dos.txt").write_bytes(b"one\r\ntwo\r\n")
    session = make_workspace().session()
    ok(await read(session, "dos.txt"))
    ok(await edit(session, "dos.txt", "one\ntwo", "1\n2"))
    assert (root / "dos.txt").read_bytes() == b"1\r\n2\r\n"


async def test_a_windowed_read_authorizes_an_edit_far_outside_the_window(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    (root / "big.txt").write_text("".join(f"line {n}\n" for n in range(1, 5001)), encoding="utf-8")
    session = make_workspace().session()
    ok(await read(session, "big.txt", offset=100, limit=5))
    ok(await edit(session, "big.txt", "line 4500\n", "line 4500 edited\n"))
    assert "line 4500 edited\n" in (root / "big.txt").read_text(encoding="utf-8")


async def test_create_then_edit_needs_no_read(make_workspace: WorkspaceFactory, root: Path) -> None:
    session = make_workspace().session()
    ok(await write(session, "a.txt", "draft\n"))
    ok(await edit(session, "a.txt", "draft", "final"))
    assert (root / "a.txt").read_bytes() == b"final\n"


async def test_edit_then_edit_needs_no_read(make_workspace: WorkspaceFactory, root: Path) -> None:
    (root / "a.txt").write_text("a b c\n", encoding="utf-8")
    session = make_workspace().session()
    ok(await read(session, "a.txt"))
    ok(await edit(session, "a.txt", "a", "1"))
    ok(await edit(session, "a.txt", "b", "2"))
    ok(await edit(session, "a.txt", "c", "3"))
    assert (root / "a.txt").read_bytes() == b"1 2 3\n"


async def test_a_read_through_a_symlink_authorizes_an_edit_through_the_real_path(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    (root / "real.txt").write_text("target\n", encoding="utf-8")
    (root / "link.txt").symlink_to(root / "real.txt")
    session = make_workspace().session()
    result = ok(await read(session, "link.txt"))
    assert result.text.startswith(f"<path>{root / 'link.txt'}</path>")
    ok(await edit(session, "real.txt", "target", "edited"))
    assert (root / "real.txt").read_bytes() == b"edited\n"
    assert (root / "link.txt").is_symlink()


async def test_two_sessions_racing_on_one_file_one_wins_and_one_is_stale(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    (root / "a.txt").write_text("count = 0\n", encoding="utf-8")
    workspace = make_workspace()
    first, second = workspace.session(), workspace.session()
    ok(await read(first, "a.txt"))
    ok(await read(second, "a.txt"))
    results: dict[str, ToolResult] = {}

    async def attempt(name: str, session: Session, new: str) -> None:
        results[name] = await edit(session, "a.txt", "count = 0", new)

    async with anyio.create_task_group() as group:
        group.start_soon(attempt, "first", first, "count = 1")
        group.start_soon(attempt, "second", second, "count = 2")

    winners = [name for name, result in results.items() if not result.is_error]
    losers = [result for result in results.values() if result.is_error]
    assert len(winners) == 1
    assert len(losers) == 1
    failed(
        losers[0],
        "FS_STALE_VERSION",
        f'Error: cannot edit "{root / "a.txt"}": file changed since it was read' + STALE_REMEDY,
    )
    expected = b"count = 1\n" if winners == ["first"] else b"count = 2\n"
    assert (root / "a.txt").read_bytes() == expected


async def test_another_sessions_read_does_not_authorize_this_session(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    (root / "a.txt").write_text("a\n", encoding="utf-8")
    workspace = make_workspace()
    reader, other = workspace.session(), workspace.session()
    ok(await read(reader, "a.txt"))
    result = await edit(other, "a.txt", "a", "b")
    assert result.code == "FS_NOT_OBSERVED"


async def test_a_deleted_file_recovers_through_a_reread_and_a_write(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    path = root / "a.txt"
    path.write_text("hello\n", encoding="utf-8")
    session = make_workspace().session()
    ok(await read(session, "a.txt"))
    path.unlink()
    failed(
        await edit(session, "a.txt", "hello", "bye"),
        "FS_STALE_VERSION",
        f'Error: cannot edit "{path}": file changed since it was read' + STALE_REMEDY,
    )
    failed(
        await write(session, "a.txt", "bye\n"),
        "FS_STALE_VERSION",
        f'Error: cannot write "{path}": file no longer exists' + STALE_REMEDY,
    )
    failed(await read(session, "a.txt"), "FS_NOT_FOUND", f'Error: cannot read "{path}": not found')
    failed(
        await edit(session, "a.txt", "hello", "bye"),
        "FS_NOT_FOUND",
        f'Error: cannot edit "{path}": not found',
    )
    result = ok(await write(session, "a.txt", "bye\n"))
    assert result.text == write_block(path, "Created file")
    assert path.read_bytes() == b"bye\n"
    ok(await edit(session, "a.txt", "bye", "hello again"))
    assert path.read_bytes() == b"hello again\n"


async def test_a_file_created_after_an_observed_absence_is_not_overwritten(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    session = make_workspace().session()
    failed(
        await read(session, "a.txt"),
        "FS_NOT_FOUND",
        f'Error: cannot read "{root / "a.txt"}": not found',
    )
    (root / "a.txt").write_text("someone else\n", encoding="utf-8")
    result = await write(session, "a.txt", "mine\n")
    assert result.code == "FS_NOT_OBSERVED"
    assert (root / "a.txt").read_bytes() == b"someone else\n"


async def test_edit_of_a_binary_or_invalid_utf8_file_is_not_text(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    (root / "img.bin").write_bytes(b"ab\x00cd")
    (root / "latin1.txt").write_bytes("café".encode("latin-1"))
    session = make_workspace(policy=False).session()
    failed(
        await edit(session, "img.bin", "ab", "x"),
        "FS_NOT_TEXT",
        f'Error: cannot edit "{root / "img.bin"}": binary file',
    )
    failed(
        await edit(session, "latin1.txt", "caf", "x"),
        "FS_NOT_TEXT",
        f'Error: cannot edit "{root / "latin1.txt"}": invalid UTF-8 text',
    )
    assert (root / "img.bin").read_bytes() == b"ab\x00cd"


async def test_write_to_a_directory_is_not_a_regular_file(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    (root / "sub").mkdir()
    result = await write(make_workspace(policy=False).session(), "sub", "x")
    assert result.code == "FS_NOT_REGULAR_FILE"
    assert (root / "sub").is_dir()


# --- events and the bare provider -----------------------------------------------------------


async def test_every_success_records_an_observation_and_a_missing_read_records_absence(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    workspace = make_workspace()
    seen: list[FsObserved] = []
    workspace.context.events.on(FS_OBSERVED, seen.append)
    session = workspace.session()
    await read(session, "a.txt")
    ok(await write(session, "a.txt", "a\n"))
    ok(await edit(session, "a.txt", "a", "b"))
    ok(await read(session, "a.txt"))
    kinds = [type(event.observation) for event in seen]
    assert kinds == [Absent, Present, Present, Present]
    assert all(event.actor is not None for event in seen)
    versions = [
        event.observation.version for event in seen[1:] if isinstance(event.observation, Present)
    ]
    assert versions[1] == versions[2]  # the edit's outcome version is what the read saw


async def test_without_the_policy_overwrite_and_edit_need_no_read(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    (root / "a.txt").write_text("one\n", encoding="utf-8")
    session = make_workspace(policy=False).session()
    result = ok(await write(session, "a.txt", "two\n"))
    assert result.text == write_block(root / "a.txt", "Updated file")
    ok(await edit(session, "a.txt", "two", "three"))
    assert (root / "a.txt").read_bytes() == b"three\n"


async def test_without_the_policy_an_edit_of_a_missing_file_is_stale(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    failed(
        await edit(make_workspace(policy=False).session(), "nope.txt", "a", "b"),
        "FS_STALE_VERSION",
        f'Error: cannot edit "{root / "nope.txt"}": file changed since it was read' + STALE_REMEDY,
    )


async def test_a_call_outside_any_session_can_create_but_never_edit(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    tools = make_workspace().context
    ok(await tools.execute("write", {"file_path": str(root / "a.txt"), "content": "a\n"}))
    ok(await tools.execute("read", {"file_path": str(root / "a.txt")}))
    result = await tools.execute(
        "edit", {"file_path": str(root / "a.txt"), "old_string": "a", "new_string": "b"}
    )
    assert result.code == "FS_NOT_OBSERVED"
