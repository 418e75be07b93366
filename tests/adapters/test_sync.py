"""The blocking facade: a workspace driven from plain synchronous code."""

from __future__ import annotations

import threading
from pathlib import Path

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
            "glob",
            "grep",
            "list",
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
