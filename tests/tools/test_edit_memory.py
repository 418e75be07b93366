"""What a session's edits remember (SPEC §8.3): the same miss twice on an unchanged file is
said to repeat, with the read to make; stale text the session's own edit replaced is named
as such, with what those lines read now."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dsh_fs import Workspace

pytestmark = pytest.mark.anyio

PY = (
    "def area(width, height):\n"
    '    """Rectangle area."""\n'
    "    return width * height\n"
    "\n"
    "\n"
    "def main():\n"
    "    print(area(2, 3))\n"
)
AGAIN = "This old_string failed the same way before; the file has not changed since."


async def test_the_same_miss_on_an_unchanged_file_says_so_first_and_names_the_read_to_make(
    tmp_path: Path,
) -> None:
    path = tmp_path / "f.py"
    path.write_text(PY, encoding="utf-8")
    miss = {"file_path": "f.py", "old_string": "    return width*height\n", "new_string": "x"}
    async with Workspace.local(tmp_path) as workspace:
        session = workspace.session()
        await session.call("read", {"file_path": "f.py"})
        first = await session.call("edit", miss)
        second = await session.call("edit", miss)
    assert first.code == second.code == "FS_EDIT_NOT_FOUND"
    assert AGAIN not in first.text
    lines = second.text.split("\n")
    assert lines[0] == f'Error: old_string was not found in "{path}"'
    assert lines[1] == (
        f'{AGAIN} Read the lines again before another edit: read(file_path="f.py", '
        "offset=1, limit=8)"
    )
    # The rest is the diagnosis the first miss had.
    assert "\n".join(lines[2:]) == "\n".join(first.text.split("\n")[1:])
    assert second.details is not None
    assert second.details["repeated"] is True
    assert second.details["read"] == {"offset": 1, "limit": 8}
    assert path.read_text(encoding="utf-8") == PY


async def test_a_miss_after_the_file_changed_is_not_called_a_repeat(tmp_path: Path) -> None:
    path = tmp_path / "f.py"
    path.write_text(PY, encoding="utf-8")
    miss = {"file_path": "f.py", "old_string": "    return width*height\n", "new_string": "x"}
    async with Workspace.local(tmp_path) as workspace:
        session = workspace.session()
        await session.call("read", {"file_path": "f.py"})
        await session.call("edit", miss)
        done = await session.call(
            "edit", {"file_path": "f.py", "old_string": "print(", "new_string": "show("}
        )
        assert not done.is_error, done.text
        second = await session.call("edit", miss)
        other = await workspace.session().call("read", {"file_path": "f.py"})
        assert not other.is_error
    assert second.code == "FS_EDIT_NOT_FOUND"
    assert AGAIN not in second.text


async def test_another_old_string_or_another_session_is_not_a_repeat(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text(PY, encoding="utf-8")
    miss = {"file_path": "f.py", "old_string": "    return width*height\n", "new_string": "x"}
    async with Workspace.local(tmp_path) as workspace:
        one, two = workspace.session(), workspace.session()
        for session in (one, two):
            await session.call("read", {"file_path": "f.py"})
        await one.call("edit", miss)
        other = await one.call("edit", {**miss, "old_string": "    return width+height\n"})
        elsewhere = await two.call("edit", miss)
    assert AGAIN not in other.text
    assert AGAIN not in elsewhere.text


async def test_a_repeat_with_nothing_close_names_a_read_from_the_start(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text(PY, encoding="utf-8")
    miss = {"file_path": "f.py", "old_string": "class Widget:\n    spin = 42\n", "new_string": "x"}
    async with Workspace.local(tmp_path) as workspace:
        session = workspace.session()
        await session.call("read", {"file_path": "f.py"})
        await session.call("edit", miss)
        second = await session.call("edit", miss)
    assert second.text.split("\n")[1].endswith('read(file_path="f.py", offset=1, limit=2000)')


USERS = "    rows = db.query('users')\n    return [User(*row) for row in rows]\n"
TWINS = (
    "def load_users(db):\n"
    "    rows = db.query('users')\n"
    "    return [User(*row) for row in rows]\n"
    "\n"
    "\n"
    "def load_groups(db):\n"
    "    rows = db.query('groups')\n"
    "    return [Group(*row) for row in rows]\n"
)


async def test_stale_text_the_sessions_own_edit_replaced_is_named_with_what_it_reads_now(
    tmp_path: Path,
) -> None:
    path = tmp_path / "db.py"
    path.write_text(TWINS, encoding="utf-8")
    async with Workspace.local(tmp_path) as workspace:
        session = workspace.session()
        await session.call("read", {"file_path": "db.py"})
        done = await session.call(
            "edit",
            {
                "file_path": "db.py",
                "old_string": USERS,
                "new_string": "    rows = db.query('users', active=True)\n"
                "    return [User.from_row(row) for row in rows]\n",
            },
        )
        assert not done.is_error, done.text
        # The model edits the block again from the text it remembers: the near-copy in
        # load_groups is the closest text in the file now.
        stale = await session.call(
            "edit",
            {
                "file_path": "db.py",
                "old_string": USERS,
                "new_string": "    return []\n",
            },
        )
    assert stale.code == "FS_EDIT_NOT_FOUND"
    lines = stale.text.split("\n")
    assert lines[0] == f'Error: old_string was not found in "{path}"'
    assert re.fullmatch(
        r"Your edit at \d\d:\d\d UTC replaced these lines; they now read \(lines 2-3\):", lines[1]
    )
    assert lines[2:4] == [
        "2:     rows = db.query('users', active=True)",
        "3:     return [User.from_row(row) for row in rows]",
    ]
    assert stale.details is not None
    assert stale.details["your_edit"]["start"] == 2
    assert path.read_text(encoding="utf-8").count("active=True") == 1
