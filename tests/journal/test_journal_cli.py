"""`dsh-fs log`, `diff` and `undo` as a user runs them, over changes a real MCP server made
(it journals by default): exit statuses, JSON shapes, a refused undo, bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

_DSH_FS = str(Path(sys.executable).with_name("dsh-fs"))


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_DSH_FS, *args], capture_output=True, text=True, env=env, check=False, timeout=120
    )


def _serve(root: Path, env: dict[str, str], *extra: str) -> None:
    """One MCP client session over stdio: initialize, read, edit, write a new file."""
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "tester", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "read", "arguments": {"file_path": "app.py"}},
        },
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {
                "name": "edit",
                "arguments": {"file_path": "app.py", "old_string": "hello", "new_string": "hi"},
            },
        },
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {
                "name": "write",
                "arguments": {"file_path": "notes.md", "content": "# notes\n"},
            },
        },
    ]
    done = subprocess.run(
        [_DSH_FS, "mcp", str(root), *extra],
        input="".join(json.dumps(m) + "\n" for m in messages),
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=120,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert not any(a.get("result", {}).get("isError") for a in answers), answers


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}


def test_the_mcp_server_journals_by_default_and_log_diff_and_undo_review_and_revert_it(
    tmp_path: Path, env: dict[str, str]
) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "app.py").write_text('print("hello")\n')
    _serve(root, env)
    log = _cli("log", str(root), "--json", env=env)
    assert log.returncode == 0, log.stderr
    entries = json.loads(log.stdout)
    # The server runs the queued edit and write (two files) concurrently: either may be first.
    assert sorted(e["tool"] for e in entries) == ["edit", "write"]
    assert entries[0]["id"] > entries[1]["id"]  # newest first
    by_tool = {e["tool"]: e for e in entries}
    assert set(entries[0]) == {
        "id",
        "time",
        "session",
        "tool",
        "path",
        "from",
        "before",
        "after",
        "added",
        "removed",
        "undoable",
        "undoes",
    }
    assert by_tool["edit"]["session"].startswith("tester-")
    text = _cli("log", str(root), env=env)
    assert "holds 2 entries" in text.stdout
    assert "app.py" in text.stdout
    diff = _cli("diff", str(root), by_tool["edit"]["id"], env=env)
    assert diff.returncode == 0
    assert diff.stdout.splitlines()[:2] == ["--- a/app.py", "+++ b/app.py"]
    assert '-print("hello")' in diff.stdout
    assert '+print("hi")' in diff.stdout
    create = _cli("diff", str(root), by_tool["write"]["id"], env=env)
    assert create.stdout.startswith("--- /dev/null\n+++ b/notes.md\n")

    (root / "app.py").write_text('print("the user\'s own edit")\n')
    dry = _cli("undo", str(root), "--session", "tester", "--dry-run", "--json", env=env)
    assert dry.returncode == 1
    dry_results = {Path(r["path"]).name: r["result"] for r in json.loads(dry.stdout)}
    assert dry_results == {"notes.md": "undone", "app.py": "refused"}
    assert (root / "notes.md").exists()
    undo = _cli("undo", str(root), "--session", "tester", "--json", env=env)
    assert undo.returncode == 1
    results = {Path(r["path"]).name: r for r in json.loads(undo.stdout)}
    assert {p: r["result"] for p, r in results.items()} == {
        "notes.md": "undone",
        "app.py": "refused",
    }
    assert results["notes.md"]["reason"] is None
    assert "changed since" in results["app.py"]["reason"]
    assert not (root / "notes.md").exists()
    assert (root / "app.py").read_text() == 'print("the user\'s own edit")\n'
    again = _cli("undo", str(root), by_tool["write"]["id"], env=env)
    assert again.returncode == 1
    assert "already undone" in again.stdout


def test_no_journal_records_nothing(tmp_path: Path, env: dict[str, str]) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "app.py").write_text('print("hello")\n')
    _serve(root, env, "--no-journal")
    log = _cli("log", str(root), "--json", env=env)
    assert (log.returncode, log.stdout.strip()) == (0, "[]")
    text = _cli("log", str(root), env=env)
    assert text.stdout.startswith("No changes are recorded")


def test_bad_input_is_a_usage_error_or_no_such_entry(tmp_path: Path, env: dict[str, str]) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    unknown = _cli("undo", str(root), "20261201T000000.000000Z-00000000", env=env)
    assert unknown.returncode == 2
    assert "no change" in unknown.stderr
    assert _cli("diff", str(root), "nope", env=env).returncode == 2
    since = _cli("log", str(root), "--since", "last tuesday", env=env)
    assert since.returncode == 2
    assert "--since" in since.stderr
    assert _cli("undo", str(root), env=env).returncode == 2
    inside = _cli("mcp", str(root), "--journal", str(root / "j"), env=env)
    assert inside.returncode == 2
    assert "inside a served root" in inside.stderr


def test_dsh_fs_diff_shows_a_change_of_a_file_in_a_declared_codec_as_its_text(
    tmp_path: Path, env: dict[str, str]
) -> None:
    # SPEC §12: the entry records the codec; `diff` decodes both sides in it (no rule given).
    root = tmp_path / "proj"
    root.mkdir()
    (root / "app.py").write_bytes('print("Grüße, hello")\r\n'.encode("cp1252"))
    _serve(root, env, "--encoding", "*.py=cp1252")
    (entry,) = [
        e
        for e in json.loads(_cli("log", str(root), "--json", env=env).stdout)
        if e["tool"] == "edit"
    ]
    assert (entry["added"], entry["removed"]) == (1, 1)
    diff = _cli("diff", str(root), entry["id"], env=env)
    assert diff.returncode == 0, diff.stderr
    # (text mode reads the diff's CRLF line ends as \n)
    assert '-print("Grüße, hello")\n+print("Grüße, hi")\n' in diff.stdout
    assert (root / "app.py").read_bytes() == 'print("Grüße, hi")\r\n'.encode("cp1252")
