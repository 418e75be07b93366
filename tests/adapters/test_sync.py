"""The blocking facade: a workspace driven from plain synchronous code."""

from __future__ import annotations

import gc
import inspect
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from dsh_fs import Workspace
from dsh_fs.adapters import SyncWorkspace


def test_sync_session_reads_and_edits_from_synchronous_code(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n", encoding="utf-8")
    main_thread = threading.get_ident()
    with SyncWorkspace.sandbox(str(tmp_path)) as ws:
        session = ws.session()
        assert "1: one" in session.call("read", {"file_path": "a.txt"}).text
        edit = session.call("edit", {"file_path": "a.txt", "old_string": "two", "new_string": "2"})
        assert not edit.is_error
        messages = session.execute_openai_tool_calls(
            [{"id": "c", "function": {"name": "read", "arguments": '{"file_path": "a.txt"}'}}]
        )
        assert "2: 2" in messages[0]["content"]
        assert [t["name"] for t in ws.tool_schemas()] == [
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
        assert threading.get_ident() == main_thread
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "one\n2\n"


def test_sync_sessions_keep_separate_observations(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n", encoding="utf-8")
    with SyncWorkspace.local(str(tmp_path)) as ws:
        first, second = ws.session(), ws.session()
        first.call("read", {"file_path": "a.txt"})
        refused = second.call("write", {"file_path": "a.txt", "content": "y\n"})
        results = second.anthropic_tool_results(
            [{"type": "tool_use", "id": "t", "name": "read", "input": {"file_path": "a.txt"}}]
        )
        assert results[0]["is_error"] is False
    assert refused.code == "FS_NOT_OBSERVED"
    ws.close()  # idempotent


LEFT_OPEN = """
import sys
from dsh_fs.adapters import SyncWorkspace

ws = SyncWorkspace.local(sys.argv[1])
print(ws.session().call("read", {"file_path": "a.txt"}).text.splitlines()[3])
if sys.argv[2] == "raise":
    raise RuntimeError("the script failed")
"""


@pytest.mark.parametrize("ending", ["return", "raise"])
def test_a_script_that_leaves_its_workspace_open_exits_with_a_resource_warning(
    tmp_path: Path, ending: str
) -> None:
    (tmp_path / "a.txt").write_text("one\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-W", "always::ResourceWarning", "-c", LEFT_OPEN, str(tmp_path), ending],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.stdout == "1: one\n"
    assert "ResourceWarning: SyncWorkspace over Workspace(LocalFileSystem" in done.stderr
    assert "was never closed" in done.stderr
    if ending == "raise":
        assert done.returncode == 1
        assert "RuntimeError: the script failed" in done.stderr
    else:
        assert done.returncode == 0


def _loop_threads() -> int:
    return sum(thread.name == "dsh-fs SyncWorkspace" for thread in threading.enumerate())


def test_a_workspace_dropped_while_open_is_closed_with_a_resource_warning(tmp_path: Path) -> None:
    before = _loop_threads()
    ws = SyncWorkspace.local(tmp_path)
    workspace = ws.workspace
    assert _loop_threads() == before + 1
    with pytest.warns(ResourceWarning, match="was never closed"):
        del ws  # the last reference: CPython finalizes it right here
    assert workspace.closed
    assert _loop_threads() == before


def test_a_session_keeps_its_workspace_open(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n", encoding="utf-8")
    session = SyncWorkspace.sandbox(tmp_path).session()
    gc.collect()
    assert not session.call("read", {"file_path": "a.txt"}).is_error
    with pytest.warns(ResourceWarning, match="was never closed"):
        del session


def test_closing_is_idempotent_and_reported(tmp_path: Path) -> None:
    ws = SyncWorkspace.local(tmp_path)
    states = [ws.closed]
    ws.close()
    ws.close()
    states.append(ws.closed)
    assert states == [False, True]
    assert ws.workspace.closed


def test_remote_workspaces_work_from_synchronous_code() -> None:
    with SyncWorkspace.remote("memory://sync-remote") as ws:
        session = ws.session()
        created = session.call("write", {"file_path": "/a.txt", "content": "x\n"})
        read = session.call("read", {"file_path": "/a.txt"})
    assert not created.is_error
    assert "1: x" in read.text


def _constructors(cls: type) -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(getattr(cls, name))
        for name, attribute in vars(cls).items()
        if isinstance(attribute, classmethod)
    }


def _shape(signature: inspect.Signature) -> list[tuple[str, object, object]]:
    return [(p.name, p.kind, p.default) for p in signature.parameters.values()]


def test_every_workspace_constructor_has_a_synchronous_twin_with_the_same_parameters() -> None:
    async_constructors = _constructors(Workspace)
    sync_constructors = _constructors(SyncWorkspace)
    assert set(async_constructors) == {"local", "sandbox", "remote"}
    assert set(sync_constructors) == set(async_constructors)
    for name, signature in async_constructors.items():
        assert _shape(sync_constructors[name]) == _shape(signature), name


def test_a_call_on_a_closed_sync_workspace_is_aborted_like_an_async_one(tmp_path: Path) -> None:
    ws = SyncWorkspace.local(str(tmp_path))
    session = ws.session()
    ws.close()
    result = session.call("write", {"file_path": "new.txt", "content": "x"})
    assert (result.code, result.text) == (
        "FS_ABORTED",
        "Error: cannot run write: the workspace is closed",
    )
    assert not (tmp_path / "new.txt").exists()


def test_sync_workspaces_offer_the_tools_they_are_given_and_grep_blocks_until_done(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.txt").write_text("needle\n", encoding="utf-8")
    with SyncWorkspace.local(str(tmp_path), tools=("read", "grep")) as ws:
        assert [t["name"] for t in ws.tool_schemas()] == ["read", "grep"]
        found = ws.session().call("grep", {"pattern": "needle"})
        assert found.text == "Found 1 match\n\na.txt\nLine 1: needle"
    with SyncWorkspace.sandbox(str(tmp_path), tools=("list",)) as ws:
        assert [t["name"] for t in ws.tool_schemas()] == ["list"]
