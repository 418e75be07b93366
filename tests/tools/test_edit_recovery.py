"""Edit recovery through the tools (SPEC §8.2): the diagnosis reaches the model and programs,
a stale file is still stale first, no observation is recorded, and no near-miss ever
changes the file (a property over generated near-misses, on a real local workspace)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_fs import Session
from dsh_fs.adapters import SyncWorkspace
from dsh_fs.fs import FS_OBSERVED, FsObserved
from dsh_fs.fs.diagnosis._wording import MAX_BYTES

from .conftest import WorkspaceFactory

pytestmark = pytest.mark.anyio

SOURCE = "def area(width, height):\n    return width * height\n"


async def call_edit(session: Session, old: str, new: str = "x") -> Any:
    return await session.call("edit", {"file_path": "a.py", "old_string": old, "new_string": new})


async def test_the_diagnosis_reaches_the_text_and_the_error_details(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    (root / "a.py").write_text(SOURCE, encoding="utf-8")
    session = make_workspace().session()
    await session.call("read", {"file_path": "a.py"})
    result = await call_edit(session, "def area(width, height):\n  return width * height")
    assert result.code == "FS_EDIT_NOT_FOUND"
    assert result.text.split("\n")[:3] == [
        f'Error: old_string was not found in "{root / "a.py"}"',
        "The closest text in the file is at lines 1-2; it differs from old_string:",
        "- indentation: line 2 is indented 2 more spaces in the file than in old_string "
        "(line 2: 4 spaces vs 2 spaces)",
    ]
    assert result.details is not None
    assert result.details["closest"] == {"start": 1, "end": 2}
    assert result.error is not None
    assert result.error["details"]["reasons"][0]["cause"] == "indentation"
    assert (root / "a.py").read_text(encoding="utf-8") == SOURCE


async def test_a_stale_file_is_stale_first_even_when_old_string_also_misses(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    (root / "a.py").write_text(SOURCE, encoding="utf-8")
    session = make_workspace().session()
    await session.call("read", {"file_path": "a.py"})
    (root / "a.py").write_text(SOURCE + "# changed\n", encoding="utf-8")
    result = await call_edit(session, "def area(w, h):")
    assert result.code == "FS_STALE_VERSION"
    assert result.text == (
        f'Error: cannot edit "{root / "a.py"}": file changed since it was read'
        " \u2014 re-read the file, then retry"
    )
    assert result.details is None


async def test_a_diagnosed_miss_records_no_observation(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    (root / "a.py").write_text(SOURCE, encoding="utf-8")
    workspace = make_workspace()
    seen: list[FsObserved] = []
    session = workspace.session()
    await session.call("read", {"file_path": "a.py"})
    workspace.context.events.on(FS_OBSERVED, seen.append)
    missed = await call_edit(session, "    return width * depth")
    assert missed.code == "FS_EDIT_NOT_FOUND"
    assert missed.details is not None
    assert missed.details["closest"] == {"start": 2, "end": 2}
    assert seen == []
    # The failed edit refreshed nothing: an outside change still makes the next edit stale.
    (root / "a.py").write_text(SOURCE + "\n", encoding="utf-8")
    stale = await call_edit(session, "    return width * height")
    assert stale.code == "FS_STALE_VERSION"


async def test_an_ambiguous_edit_lists_its_lines_in_the_details(
    make_workspace: WorkspaceFactory, root: Path
) -> None:
    (root / "a.py").write_text("x = 1\ny = 2\nx = 1\n", encoding="utf-8")
    session = make_workspace().session()
    await session.call("read", {"file_path": "a.py"})
    result = await call_edit(session, "x = 1", "x = 3")
    assert result.code == "FS_AMBIGUOUS_EDIT"
    assert result.text.endswith("\nThe matches start at lines 1 and 3.")
    assert result.details == {"lines": [1, 3], "count": 2}


# --- no near-miss ever changes the file ------------------------------------------------------

WORDS = ["def", "return", "value", "x", "=", "(", ")", ":", "1", "'a'", "\u2019s", "--", "\u00a0"]

line = st.tuples(
    st.sampled_from(["", "    ", "        ", "\t", "  "]),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join),
    st.sampled_from(["", "", "", " ", "\t"]),
).map("".join)


def perturb(kind: int, lines: list[str], at: int) -> list[str]:
    """One realistic way a model misremembers `lines` (line `at` is the one changed)."""
    out = list(lines)
    target = out[at]
    if kind == 0:
        out[at] = "  " + target
    elif kind == 1:
        out[at] = target.replace("    ", "\t") if "    " in target else "\t" + target
    elif kind == 2:
        out[at] = target.rstrip() if target != target.rstrip() else target + " "
    elif kind == 3:
        out = [f"{k + 1}: {text}" for k, text in enumerate(out)]
    elif kind == 4:
        out[at] = target.replace("'", "\u2019").replace("\u00a0", " ") + "'"
    elif kind == 5:
        out = ["\\n".join(out)]
    elif kind == 6:
        out[at] = target + "z"
    elif kind == 7 and len(out) > 1:
        del out[at]
    else:
        out.insert(at, "invented()")
    return out


def test_no_near_miss_ever_changes_the_file(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    with SyncWorkspace.local(str(tmp_path)) as workspace:
        session = workspace.session()

        @settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
        @given(
            lines=st.lists(line, min_size=1, max_size=12),
            crlf=st.booleans(),
            bom=st.booleans(),
            span=st.tuples(st.integers(0, 11), st.integers(1, 4)),
            kind=st.integers(0, 8),
            data=st.data(),
        )
        def check(
            lines: list[str],
            crlf: bool,
            bom: bool,
            span: tuple[int, int],
            kind: int,
            data: st.DataObject,
        ) -> None:
            text = "\n".join(lines) + "\n"
            raw = ("\ufeff" if bom else "") + (text.replace("\n", "\r\n") if crlf else text)
            content = raw.encode("utf-8")
            start = min(span[0], len(lines) - 1)
            meant = lines[start : start + span[1]]
            at = data.draw(st.integers(0, len(meant) - 1))
            old = "\n".join(perturb(kind, meant, at))
            if not old.strip() or old in text:
                return  # not a near-miss: the text is there (or there is no text)
            path.write_bytes(content)
            assert not session.call("read", {"file_path": "f.txt"}).is_error
            result = session.call(
                "edit", {"file_path": "f.txt", "old_string": old, "new_string": old + "!"}
            )
            assert result.is_error, result.text
            assert result.code == "FS_EDIT_NOT_FOUND"
            assert path.read_bytes() == content
            first, _, diagnosis = result.text.partition("\n")
            assert first == f'Error: old_string was not found in "{path}"'
            assert len(diagnosis.encode("utf-8")) <= MAX_BYTES
            closest = (result.details or {}).get("closest")
            if closest is not None:
                assert 1 <= closest["start"] <= closest["end"] <= len(lines)

        check()
