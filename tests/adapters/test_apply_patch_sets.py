"""``apply_patch`` over several files (SPEC §13): a response's consecutive ``update_file``
calls are one change set, landing whole or not at all; each call still gets its own output,
byte for byte what it gets alone on success."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from openai.types.responses import ResponseApplyPatchToolCall, ResponseFunctionToolCall

from dsh_fs.adapters import execute_openai_response
from dsh_fs.workspace import Session

pytestmark = pytest.mark.anyio

NAMES = ("a.py", "b.py", "c.py")
STALE = " \u2014 read the file again, then send a new patch"


def update(path: str, diff: str, n: int) -> ResponseApplyPatchToolCall:
    return ResponseApplyPatchToolCall.model_validate(
        {
            "id": f"apc_{n}",
            "call_id": f"call_{n}",
            "status": "completed",
            "type": "apply_patch_call",
            "operation": {"type": "update_file", "path": path, "diff": diff},
        }
    )


def read(path: str, n: int) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(
        type="function_call",
        call_id=f"call_r{n}",
        name="read",
        arguments=f'{{"file_path": "{path}"}}',
    )


async def three_read(root: Path, session: Session) -> dict[str, str]:
    before = {name: f"def {name[0]}():\n    return old\n" for name in NAMES}
    for name, text in before.items():
        (root / name).write_text(text, encoding="utf-8")
    await execute_openai_response(session, [read(name, n) for n, name in enumerate(NAMES)])
    return before


def on_disk(root: Path) -> dict[str, str]:
    return {name: (root / name).read_text(encoding="utf-8") for name in NAMES}


def outputs(replies: list[Any]) -> list[tuple[str, str]]:
    """Each reply's status and output."""
    return [(reply["status"], reply["output"]) for reply in replies]


RENAME = "@@\n-    return old\n+    return new\n"


async def test_updates_to_three_files_in_one_response_land_together_with_their_own_outputs(
    session: Session, root: Path
) -> None:
    await three_read(root, session)
    calls = [update(name, RENAME, n) for n, name in enumerate(NAMES)]
    replies = await execute_openai_response(session, calls)
    assert [reply["call_id"] for reply in replies] == ["call_0", "call_1", "call_2"]
    assert outputs(replies) == [("completed", f"Updated file {root / name}") for name in NAMES]
    assert on_disk(root) == {name: f"def {name[0]}():\n    return new\n" for name in NAMES}


@pytest.mark.parametrize("failing", [1, 2, 3])
async def test_a_hunk_that_does_not_match_in_any_call_changes_no_file(
    session: Session, root: Path, failing: int
) -> None:
    before = await three_read(root, session)
    calls = [
        update(name, "@@\n-    return absent\n+    return new\n" if n == failing else RENAME, n)
        for n, name in enumerate(NAMES, 1)
    ]
    replies = await execute_openai_response(session, calls)
    culprit = root / NAMES[failing - 1]
    statuses = [status for status, _ in outputs(replies)]
    assert statuses == ["failed"] * 3
    own = replies[failing - 1]["output"]
    assert isinstance(own, str)
    assert own.splitlines()[0] == (
        f'Error: hunk 1 of the patch was not found in "{culprit}" \u2014 read the file, then '
        "send the hunk with its context and - lines copied exactly"
    )
    for number, reply in enumerate(replies, 1):
        if number != failing:
            assert reply["output"] == (
                f"Error: not applied: the patch to {culprit} in the same response failed, "
                "and a response's apply_patch operations apply all or none"
            )
    assert on_disk(root) == before


async def test_an_invalid_diff_in_one_call_changes_no_file(session: Session, root: Path) -> None:
    before = await three_read(root, session)
    calls = [update(name, RENAME, n) for n, name in enumerate(NAMES)]
    calls[1] = update("b.py", "@@ -1,2 +1,2 @@\n-x\n+y\n", 1)
    replies = await execute_openai_response(session, calls)
    assert [status for status, _ in outputs(replies)] == ["failed"] * 3
    assert str(replies[1]["output"]).startswith("Error: invalid diff for b.py: ")
    assert on_disk(root) == before


async def test_a_file_changed_since_it_was_read_refuses_the_whole_response(
    session: Session, root: Path
) -> None:
    before = await three_read(root, session)
    (root / "c.py").write_text("theirs\n", encoding="utf-8")
    replies = await execute_openai_response(
        session, [update(name, RENAME, n) for n, name in enumerate(NAMES)]
    )
    assert replies[2]["output"] == (
        f'Error: cannot edit "{root / "c.py"}": file changed since it was read' + STALE
    )
    assert on_disk(root) == {**before, "c.py": "theirs\n"}


async def test_one_update_alone_runs_as_before(session: Session, root: Path) -> None:
    await three_read(root, session)
    replies = await execute_openai_response(session, [update("a.py", RENAME, 0)])
    assert outputs(replies) == [("completed", f"Updated file {root / 'a.py'}")]
