"""OpenAI's Responses API and ``apply_patch`` over the workspace, with the SDK's own types."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from openai.types.responses import (
    ApplyPatchToolParam,
    FunctionToolParam,
    ResponseApplyPatchToolCall,
    ResponseFunctionToolCall,
    ResponseInputItemParam,
)
from pydantic import TypeAdapter

from dsh_fs import Workspace
from dsh_fs.adapters import execute_openai_response, openai_responses_tools
from dsh_fs.workspace import Session

pytestmark = pytest.mark.anyio


_ids = iter(range(1_000_000))


async def apply(session: Session, kind: str, path: str, diff: str | None = None) -> tuple[str, str]:
    """One ``apply_patch_call``, as the SDK returns it; the status and output."""
    operation: dict[str, Any] = {"type": kind, "path": path}
    if diff is not None:
        operation["diff"] = diff
    n = next(_ids)
    raw = {
        "id": f"apc_{n}",
        "call_id": f"call_{n}",
        "status": "completed",
        "type": "apply_patch_call",
        "operation": operation,
    }
    call: object = raw
    if kind in ("create_file", "update_file", "delete_file") and (
        diff is not None or kind == "delete_file"
    ):
        call = ResponseApplyPatchToolCall.model_validate(raw)
    # Otherwise the SDK refuses to build it: the raw JSON item stands in.
    (reply,) = await execute_openai_response(session, [call])
    TypeAdapter(ResponseInputItemParam).validate_python(reply)
    assert reply["type"] == "apply_patch_call_output"
    assert reply["call_id"] == raw["call_id"]
    return reply["status"], reply["output"]


async def read(session: Session, path: str) -> str:
    call = ResponseFunctionToolCall(
        type="function_call",
        call_id=f"call_r{next(_ids)}",
        name="read",
        arguments=f'{{"file_path": "{path}"}}',
    )
    (reply,) = await execute_openai_response(session, [call])
    assert reply["type"] == "function_call_output"
    assert reply["call_id"] == call.call_id
    assert isinstance(reply["output"], str)
    return reply["output"]


def test_responses_tools_validate_and_apply_patch_replaces_write_and_edit(root: Path) -> None:
    workspace = Workspace.sandbox(root)
    tools = openai_responses_tools(workspace, apply_patch=True)
    assert tools[-1] == {"type": "apply_patch"}
    TypeAdapter(ApplyPatchToolParam).validate_python(tools[-1])
    for tool in tools[:-1]:
        TypeAdapter(FunctionToolParam).validate_python(tool)
    assert [t.get("name") for t in tools[:-1]] == [
        "read",
        "edit_files",
        "glob",
        "grep",
        "list",
        "move",
        "delete",
        "mkdir",
    ]
    plain = openai_responses_tools(workspace)
    assert [t.get("name") for t in plain] == [
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


async def test_read_update_stale_refused_reread_then_update(session: Session, root: Path) -> None:
    path = root / "app.py"
    path.write_text("def greet():\n    return 'hi'\n\nprint(greet())\n", encoding="utf-8")
    diff = "@@ def greet():\n-    return 'hi'\n+    return 'hello'\n"

    assert "1: def greet():" in await read(session, "app.py")
    assert await apply(session, "update_file", "app.py", diff) == (
        "completed",
        f"Updated file {path}",
    )
    assert (
        path.read_text(encoding="utf-8") == "def greet():\n    return 'hello'\n\nprint(greet())\n"
    )

    path.write_text("def greet():\n    return 'hello'\n\nprint(greet())  # theirs\n", "utf-8")
    again = "@@ def greet():\n-    return 'hello'\n+    return 'hey'\n"
    assert await apply(session, "update_file", "app.py", again) == (
        "failed",
        f'Error: cannot edit "{path}": file changed since it was read'
        " \u2014 read the file again, then send a new patch",
    )
    assert "theirs" in path.read_text(encoding="utf-8")

    await read(session, "app.py")
    assert (await apply(session, "update_file", "app.py", again))[0] == "completed"
    assert path.read_text(encoding="utf-8") == (
        "def greet():\n    return 'hey'\n\nprint(greet())  # theirs\n"
    )


async def test_update_of_an_unread_file_is_refused(session: Session, root: Path) -> None:
    (root / "a.txt").write_text("a\n", encoding="utf-8")
    assert await apply(session, "update_file", "a.txt", "-a\n+b\n") == (
        "failed",
        f'Error: update_file requires reading "{root / "a.txt"}" first'
        " \u2014 read the file, then retry",
    )


async def test_a_multi_hunk_update_is_all_or_nothing(session: Session, root: Path) -> None:
    path = root / "a.py"
    path.write_text("a = 1\nb = 2\nc = 3\n", encoding="utf-8")
    await read(session, "a.py")
    miss = "@@\n-a = 1\n+a = 10\n@@\n-c = 4\n+c = 30\n"
    status, output = await apply(session, "update_file", "a.py", miss)
    assert status == "failed"
    assert output.splitlines()[0] == (
        f'Error: hunk 2 of the patch was not found in "{path}" \u2014 read the file, then send '
        "the hunk with its context and - lines copied exactly"
    )
    assert path.read_text(encoding="utf-8") == "a = 1\nb = 2\nc = 3\n"
    both = "@@\n-a = 1\n+a = 10\n@@\n-c = 3\n+c = 30\n"
    assert (await apply(session, "update_file", "a.py", both))[0] == "completed"
    assert path.read_text(encoding="utf-8") == "a = 10\nb = 2\nc = 30\n"


async def test_context_lines_must_match_exactly(session: Session, root: Path) -> None:
    path = root / "a.py"
    path.write_text("if x:\n    y = 1\n", encoding="utf-8")
    await read(session, "a.py")
    loose = " if x:\n-  y = 1\n+  y = 2\n"  # indentation differs: no fuzzy match
    assert (await apply(session, "update_file", "a.py", loose))[0] == "failed"
    assert path.read_text(encoding="utf-8") == "if x:\n    y = 1\n"


async def test_create_never_overwrites_a_file_it_did_not_read(session: Session, root: Path) -> None:
    (root / "a.txt").write_text("keep\n", encoding="utf-8")
    assert await apply(session, "create_file", "a.txt", "+new\n") == (
        "failed",
        f'Error: cannot overwrite existing "{root / "a.txt"}" without reading it first'
        " \u2014 read the file, then retry",
    )
    assert (root / "a.txt").read_text(encoding="utf-8") == "keep\n"
    assert await apply(session, "create_file", "b/new.py", "+x = 1\n+y = 2\n") == (
        "completed",
        f"Created file {root / 'b' / 'new.py'}",
    )
    assert (root / "b" / "new.py").read_text(encoding="utf-8") == "x = 1\ny = 2\n"


async def test_delete_needs_a_read_at_the_current_version(session: Session, root: Path) -> None:
    path = root / "a.txt"
    path.write_text("a\n", encoding="utf-8")
    assert (await apply(session, "delete_file", "a.txt"))[0] == "failed"
    await read(session, "a.txt")
    path.write_text("changed\n", encoding="utf-8")
    assert (await apply(session, "delete_file", "a.txt"))[0] == "failed"
    assert path.exists()
    await read(session, "a.txt")
    assert await apply(session, "delete_file", "a.txt") == ("completed", f"Deleted file {path}")
    assert not path.exists()


async def test_a_path_outside_the_fence_is_refused(session: Session, root: Path) -> None:
    outside = root.parent / "secret.txt"
    outside.write_text("secret\n", encoding="utf-8")
    status, output = await apply(session, "create_file", str(root.parent / "new.txt"), "+x\n")
    assert status == "failed"
    assert "outside the sandbox" in output
    assert not (root.parent / "new.txt").exists()
    assert "outside the sandbox" in await read(session, str(outside))
    assert (await apply(session, "delete_file", str(outside)))[0] == "failed"
    assert outside.read_text(encoding="utf-8") == "secret\n"


@pytest.mark.parametrize(
    ("kind", "diff", "message"),
    [
        (
            "update_file",
            "@@ -1,2 +1,2 @@\n-a\n+b\n",
            "invalid diff for a.txt: line 1 ('@@ -1,2 +1,2 @@') is a unified diff header; V4A "
            "hunks start with @@ alone or @@ followed by a line of the file (a class or "
            "function), without line numbers",
        ),
        (
            "update_file",
            "*** Begin Patch\n*** Update File: a.txt\n-a\n+b\n*** End Patch\n",
            "invalid diff for a.txt: line 1 ('*** Begin Patch') is not part of an update_file "
            "diff: send only the hunks (@@ lines, and lines starting with a space, - or +)",
        ),
        (
            "update_file",
            "-a\nb\n",
            "invalid diff for a.txt: line 2 ('b') must start with a space (context), - "
            "(removed), + (added) or @@",
        ),
        ("update_file", "", "invalid diff for a.txt: the update_file diff is empty"),
        (
            "update_file",
            "@@ def f():\n",
            "invalid diff for a.txt: hunk 1 of the update_file diff has no lines",
        ),
        (
            "create_file",
            "+a\nb\n",
            "invalid diff for a.txt: line 2 of the create_file diff ('b') must start with + "
            "(every line of a new file is an added line)",
        ),
        ("update_file", None, "the update_file operation has no diff"),
        (
            "rename_file",
            "",
            "unknown operation type 'rename_file'; expected create_file, "
            "update_file or delete_file",
        ),
    ],
)
async def test_malformed_operations_fail_clearly_and_change_nothing(
    session: Session, root: Path, kind: str, diff: str | None, message: str
) -> None:
    (root / "a.txt").write_text("a\n", encoding="utf-8")
    await read(session, "a.txt")
    assert await apply(session, kind, "a.txt", diff) == ("failed", f"Error: {message}")
    assert (root / "a.txt").read_text(encoding="utf-8") == "a\n"


async def test_function_calls_and_other_items_in_one_response(session: Session, root: Path) -> None:
    (root / "a.txt").write_text("a\n", encoding="utf-8")
    items: list[Any] = [
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "function_call", "call_id": "c1", "name": "read", "arguments": "{bad"},
        {"type": "function_call", "call_id": "c2", "name": "nope", "arguments": "{}"},
        {"type": "message", "role": "assistant", "content": []},
    ]
    replies = await execute_openai_response(session, items)
    assert [r["call_id"] for r in replies] == ["c1", "c2"]
    assert str(replies[0]["output"]).startswith("Error: arguments are not valid JSON")
    assert replies[1]["output"] == 'Error: unknown tool "nope"'
