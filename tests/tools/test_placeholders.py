"""The placeholder guard (SPEC §8.3): a write or edit whose new text stands for the lines it
deletes is refused and changes nothing; real code is never refused. The measured figures
(real files, placeholder writes) come from ``python -m edit_recovery.placeholders``."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_fs import Workspace
from dsh_fs.tools._placeholders import find_placeholder

pytestmark = pytest.mark.anyio

BODY = "".join(f"    total += item_{k}.price\n" for k in range(8))
PY = f"def total(items):\n    total = 0\n{BODY}    return total\n\n\ndef main():\n    pass\n"


@pytest.mark.parametrize(
    "line",
    [
        "    # ... existing code ...",
        "    # ... rest unchanged",
        "    // ... existing code ...",
        "    /* ... */",
        "    # Rest of the code remains unchanged",
        "    ...[truncated]",
        "    [truncated]",
        "    [... 40 lines truncated ...]",
        "    <!-- ... -->",
        "    …",
        "    total += item_0.pri...[truncated]",
    ],
)
def test_a_line_standing_for_omitted_code_is_found_when_the_change_removes_five_lines(
    line: str,
) -> None:
    after = PY.replace(BODY, line + "\n")
    found = find_placeholder(PY, after, path="cart.py")
    assert found is not None
    assert (found.line, found.text, found.removed) == (3, line.strip(), 8)


def test_a_bare_ellipsis_between_statements_is_a_placeholder_in_python() -> None:
    after = PY.replace(BODY, "    total += item_0.price\n    ...\n")
    found = find_placeholder(PY, after, path="cart.py")
    assert found is not None
    assert found.text == "..."


@pytest.mark.parametrize(
    ("new_body", "path"),
    [
        ('    """Sum."""\n    ...\n', "cart.py"),  # an ellipsis body after a docstring
        ("    ...\n", "cart.py"),  # the whole body of the def (a Protocol stub)
        ("    return x[..., 0]\n", "cart.py"),
        ("    # wait for the lock... then retry\n    return 0\n", "cart.py"),
        ("    # Sending the request...\n    return 0\n", "cart.py"),
        ('    return text[:80] + "...[truncated]"\n', "cart.py"),
        ("    return summary(truncated)\n", "cart.py"),
        ("    >>> f(\n    ...\n", "cart.py"),  # a doctest's continuation
        ("    # ................................\n", "cart.py"),
        ("...\n", "doc.yaml"),  # YAML's end of document
        ("...\n", "notes.md"),  # prose elides
    ],
)
def test_real_code_and_prose_are_never_taken_for_a_placeholder(new_body: str, path: str) -> None:
    before = PY if not new_body.startswith("...") else BODY
    after = (
        PY.replace("    total = 0\n" + BODY, new_body)
        if not new_body.startswith("...")
        else "key: 1\n" + new_body
    )
    assert find_placeholder(before, after, path=path) is None


def test_a_placeholder_the_replaced_text_already_had_is_not_refused() -> None:
    before = PY.replace("    total = 0\n", "    total = 0\n    # ...\n")
    after = before.replace(BODY, "")
    assert find_placeholder(before, after, path="cart.py") is None


def test_a_placeholder_that_removes_fewer_than_five_lines_is_not_refused() -> None:
    body4 = "".join(f"    total += item_{k}.price\n" for k in range(4))
    after = PY.replace(body4, "    # ... existing code ...\n")
    assert find_placeholder(PY, after, path="cart.py") is None


async def test_a_whole_file_write_with_a_placeholder_is_refused_and_changes_nothing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "cart.py"
    path.write_text(PY, encoding="utf-8")
    content = PY.replace(BODY, "    # ... existing code ...\n")
    async with Workspace.local(tmp_path) as workspace:
        session = workspace.session()
        await session.call("read", {"file_path": "cart.py"})
        result = await session.call("write", {"file_path": "cart.py", "content": content})
    assert result.code == "FS_PLACEHOLDER"
    assert result.text == (
        f'Error: cannot write "{path}": line 3 of the new text ("# ... existing code ...") '
        "looks like a placeholder for omitted code, and the change would remove 8 lines "
        "\u2014 write the full text, or use edit for a partial change"
    )
    assert path.read_text(encoding="utf-8") == PY


async def test_an_edit_whose_new_string_stands_for_the_lines_it_replaces_is_refused(
    tmp_path: Path,
) -> None:
    path = tmp_path / "cart.py"
    path.write_text(PY, encoding="utf-8")
    async with Workspace.local(tmp_path) as workspace:
        session = workspace.session()
        await session.call("read", {"file_path": "cart.py"})
        result = await session.call(
            "edit",
            {
                "file_path": "cart.py",
                "old_string": "    total = 0\n" + BODY,
                "new_string": "    total = 1\n    // ... rest unchanged\n",
            },
        )
    assert result.code == "FS_PLACEHOLDER"
    assert result.text.startswith(
        f'Error: cannot edit "{path}": line 2 of the new text ("// ... rest unchanged") '
    )
    assert path.read_text(encoding="utf-8") == PY


async def test_a_patch_through_the_dialects_is_guarded_like_an_edit(tmp_path: Path) -> None:
    path = tmp_path / "cart.py"
    path.write_text(PY, encoding="utf-8")
    lines = [" def total(items):", "     total = 0"]
    lines += [f"-{line}" for line in BODY.rstrip("\n").split("\n")]
    lines += ["+    ...[truncated]"]
    async with Workspace.local(tmp_path) as workspace:
        session = workspace.session()
        await session.call("read", {"file_path": "cart.py"})
        result = await session.call(
            "patch", {"file_path": "cart.py", "hunks": [{"lines": lines}]}, internal=True
        )
    assert result.code == "FS_PLACEHOLDER"
    assert "line 3 of the new text" in result.text
    assert path.read_text(encoding="utf-8") == PY


async def test_the_guard_can_be_turned_off(tmp_path: Path) -> None:
    path = tmp_path / "cart.py"
    path.write_text(PY, encoding="utf-8")
    content = PY.replace(BODY, "    # ... existing code ...\n")
    async with Workspace.local(tmp_path, placeholders=False) as workspace:
        session = workspace.session()
        await session.call("read", {"file_path": "cart.py"})
        result = await session.call("write", {"file_path": "cart.py", "content": content})
    assert not result.is_error, result.text
    assert path.read_text(encoding="utf-8") == content


async def test_creating_a_file_with_an_ellipsis_is_never_refused(tmp_path: Path) -> None:
    async with Workspace.local(tmp_path) as workspace:
        result = await workspace.session().call(
            "write", {"file_path": "new.py", "content": "# ... existing code ...\n"}
        )
    assert not result.is_error, result.text


async def test_a_placeholder_write_over_a_file_changed_since_its_read_is_stale_first(
    tmp_path: Path,
) -> None:
    path = tmp_path / "cart.py"
    path.write_text(PY, encoding="utf-8")
    async with Workspace.local(tmp_path) as workspace:
        session = workspace.session()
        await session.call("read", {"file_path": "cart.py"})
        path.write_text(PY + "# changed\n", encoding="utf-8")
        content = PY.replace(BODY, "    # ... existing code ...\n")
        result = await session.call("write", {"file_path": "cart.py", "content": content})
    assert result.code == "FS_STALE_VERSION"


async def test_a_placeholder_write_over_a_file_never_read_is_refused_as_unread_first(
    tmp_path: Path,
) -> None:
    path = tmp_path / "cart.py"
    path.write_text(PY, encoding="utf-8")
    content = PY.replace(BODY, "    # ... existing code ...\n")
    async with Workspace.local(tmp_path) as workspace:
        result = await workspace.session().call(
            "write", {"file_path": "cart.py", "content": content}
        )
    assert result.code == "FS_NOT_OBSERVED"
    assert path.read_text(encoding="utf-8") == PY
