"""`dsh-fs log`, `diff` and `undo` as SPEC §9.1 amends them: options anywhere, short ids,
output safe to print, `--hunk` / `--merge`, and a selection that finds nothing the second
time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dsh_fs import Workspace

_DSH_FS = str(Path(sys.executable).with_name("dsh-fs"))


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "HOME": str(tmp_path)}


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_DSH_FS, *args], capture_output=True, text=True, env=env, check=False, timeout=120
    )


async def _agent_writes(
    root: Path, store: Path, files: dict[str, str], label: str = "agent"
) -> None:
    async with Workspace.sandbox(root, journal=store) as ws:
        s = ws.session(label=label)
        for name, content in files.items():
            await s.call("read", {"file_path": name})
            result = await s.call("write", {"file_path": name, "content": content})
            assert not result.is_error, result.text


def _ids(root: Path, store: Path, env: dict[str, str]) -> list[str]:
    log = _cli("log", str(root), "--journal", str(store), "--json", env=env)
    assert log.returncode == 0, log.stderr
    return [entry["id"] for entry in json.loads(log.stdout)]


@pytest.mark.anyio
async def test_options_may_come_anywhere_among_the_arguments(
    tmp_path: Path, env: dict[str, str]
) -> None:
    root, store = tmp_path / "ws", tmp_path / "j"
    root.mkdir()
    (root / "a.txt").write_text("a0\n")
    await _agent_writes(root, store, {"a.txt": "a1\n", "b.txt": "b1\n"})
    log = _cli("log", str(root), "--journal", str(store), "--json", str(root / "a.txt"), env=env)
    assert log.returncode == 0, log.stderr
    (entry,) = json.loads(log.stdout)
    assert entry["path"].endswith("a.txt")
    diff = _cli("diff", str(root), "--journal", str(store), entry["id"], env=env)
    assert diff.returncode == 0, diff.stderr
    assert "+a1" in diff.stdout
    undo = _cli("undo", str(root), "--journal", str(store), entry["id"], "--json", env=env)
    assert undo.returncode == 0, undo.stderr
    assert [r["result"] for r in json.loads(undo.stdout)] == ["undone"]
    assert (root / "a.txt").read_text() == "a0\n"


@pytest.mark.anyio
async def test_a_unique_prefix_of_eight_characters_names_a_change_and_an_ambiguous_one_is_refused(
    tmp_path: Path, env: dict[str, str]
) -> None:
    root, store = tmp_path / "ws", tmp_path / "j"
    root.mkdir()
    await _agent_writes(root, store, {"a.txt": "a\n", "b.txt": "b\n"})
    newest, oldest = _ids(root, store, env)
    common = newest[
        : next(i for i, (a, b) in enumerate(zip(newest, oldest, strict=True)) if a != b)
    ]
    unique = newest[: max(len(common) + 1, 8)]
    diff = _cli("diff", str(root), unique, "--journal", str(store), env=env)
    assert diff.returncode == 0, diff.stderr
    assert diff.stdout.startswith("--- /dev/null\n+++ b/b.txt\n")
    ambiguous = _cli("undo", str(root), common[:9], "--journal", str(store), env=env)
    assert ambiguous.returncode == 2
    assert f"'{common[:9]}' names 2 changes" in ambiguous.stderr
    short = _cli("diff", str(root), newest[:5], "--journal", str(store), env=env)
    assert short.returncode == 2
    assert "too short: give at least 8 characters" in short.stderr
    undo = _cli("undo", str(root), unique, "--journal", str(store), env=env)
    assert undo.returncode == 0, undo.stdout
    assert not (root / "b.txt").exists()


@pytest.mark.anyio
async def test_names_and_labels_with_line_breaks_and_escapes_are_printed_escaped(
    tmp_path: Path, env: dict[str, str]
) -> None:
    root, store = tmp_path / "ws", tmp_path / "j"
    root.mkdir()
    name = "evil\n20990101T000000.000000Z-00000000  forged\x1b[31m.txt"
    await _agent_writes(root, store, {name: "x\n"}, label="bad\nlabel\x1b]0;")
    log = _cli("log", str(root), "--journal", str(store), env=env)
    assert log.returncode == 0, log.stderr
    assert "\x1b" not in log.stdout
    (line,) = [line for line in log.stdout.splitlines() if "evil" in line]
    assert "evil\\n20990101T000000.000000Z-00000000  forged\\x1b[31m.txt" in line
    assert "bad\\nlabel\\x1b]0;-" in line
    (entry_id,) = _ids(root, store, env)
    diff = _cli("diff", str(root), entry_id, "--journal", str(store), env=env)
    assert (
        diff.stdout.splitlines()[1]
        == "+++ b/evil\\n20990101T000000.000000Z-00000000  forged\\x1b[31m.txt"
    )
    undo = _cli("undo", str(root), entry_id, "--journal", str(store), "--dry-run", env=env)
    assert "\x1b" not in undo.stdout
    assert len(undo.stdout.splitlines()) == 1


@pytest.mark.anyio
async def test_undo_by_hunk_and_merge_from_the_command_line(
    tmp_path: Path, env: dict[str, str]
) -> None:
    root, store = tmp_path / "ws", tmp_path / "j"
    root.mkdir()
    lines = [f"line {n}\n" for n in range(1, 31)]
    (root / "f.txt").write_text("".join(lines))
    changed = list(lines)
    changed[4], changed[24] = "FIVE\n", "TWENTY-FIVE\n"
    await _agent_writes(root, store, {"f.txt": "".join(changed)})
    (entry_id,) = _ids(root, store, env)
    user = list(changed)
    user[3] = "four, the user's\n"
    (root / "f.txt").write_text("".join(user))
    dry = _cli(
        "undo", str(root), entry_id, "--merge", "--dry-run", "--journal", str(store), env=env
    )
    assert dry.returncode == 1
    assert dry.stdout.splitlines() == [
        f"would undo {entry_id} {root / 'f.txt'}",
        "  hunk 1: refused: line 4 changed since; this hunk was kept",
        "  hunk 2: would revert",
    ]
    bad = _cli("undo", str(root), entry_id, "--hunk", "3", "--journal", str(store), env=env)
    assert bad.returncode == 2
    assert "no hunk 3" in bad.stderr
    one = _cli(
        "undo", str(root), entry_id, "--hunk", "2", "--json", "--journal", str(store), env=env
    )
    assert one.returncode == 0, one.stdout + one.stderr
    (item,) = json.loads(one.stdout)
    assert item["hunks"] == [{"n": 2, "result": "reverted", "reason": None}]
    expected = list(user)
    expected[24] = "line 25\n"
    assert (root / "f.txt").read_text() == "".join(expected)
    mixed = _cli(
        "undo", str(root), "--session", "agent", "--merge", "--journal", str(store), env=env
    )
    assert mixed.returncode == 2


@pytest.mark.anyio
async def test_undo_since_run_twice_finds_nothing_the_second_time(
    tmp_path: Path, env: dict[str, str]
) -> None:
    root, store = tmp_path / "ws", tmp_path / "j"
    root.mkdir()
    (root / "a.txt").write_text("mine\n")
    await _agent_writes(root, store, {"a.txt": "agent\n", "b.txt": "new\n"})
    first = _cli("undo", str(root), "--since", "1h", "--journal", str(store), env=env)
    assert first.returncode == 0, first.stdout
    assert (root / "a.txt").read_text() == "mine\n"
    again = _cli("undo", str(root), "--since", "1h", "--journal", str(store), env=env)
    assert (again.returncode, again.stdout) == (0, "Nothing to undo.\n")
    assert (root / "a.txt").read_text() == "mine\n"
    assert not (root / "b.txt").exists()


@pytest.mark.anyio
async def test_every_root_of_a_server_with_several_can_be_listed_and_undone_on_its_own(
    tmp_path: Path, env: dict[str, str]
) -> None:
    one, two, store = tmp_path / "one", tmp_path / "two", tmp_path / "j"
    one.mkdir()
    two.mkdir()
    async with Workspace.sandbox(one, two, journal=store) as ws:  # as `dsh-fs mcp one two`
        s = ws.session(label="agent")
        assert not (
            await s.call("write", {"file_path": str(one / "a.txt"), "content": "1\n"})
        ).is_error
        assert not (
            await s.call("write", {"file_path": str(two / "b.txt"), "content": "2\n"})
        ).is_error
    both = _cli("log", str(one), str(two), "--journal", str(store), "--json", env=env)
    assert [Path(e["path"]).name for e in json.loads(both.stdout)] == ["b.txt", "a.txt"]
    alone = _cli("log", str(two), "--journal", str(store), env=env)
    assert alone.returncode == 0, alone.stderr
    (line,) = alone.stdout.splitlines()[1:]
    assert line.endswith("  b.txt")
    undo = _cli("undo", str(two), "--session", "agent", "--journal", str(store), env=env)
    assert undo.returncode == 0, undo.stdout + undo.stderr
    assert not (two / "b.txt").exists()
    assert (one / "a.txt").exists()


@pytest.mark.anyio
async def test_changes_made_under_a_clients_roots_are_undone_with_those_roots_named(
    tmp_path: Path, env: dict[str, str]
) -> None:
    started, client, store = tmp_path / "started-in", tmp_path / "client", tmp_path / "j"
    started.mkdir()
    client.mkdir()
    (client / "c.txt").write_text("mine\n")
    # A server with no ROOT (started in `started`) whose client's roots are the fence.
    async with Workspace.sandbox(started, journal=store) as ws:
        s = ws.session(label="claude")
        s.set_roots([str(client)], replace=True)
        await s.call("read", {"file_path": str(client / "c.txt")})
        written = await s.call("write", {"file_path": str(client / "c.txt"), "content": "x\n"})
        assert not written.is_error, written.text
    log = _cli("log", str(client), "--journal", str(store), "--json", env=env)
    (entry,) = json.loads(log.stdout)
    assert entry["path"] == str(client / "c.txt")
    diff = _cli("diff", str(client), entry["id"], "--journal", str(store), env=env)
    assert "-mine" in diff.stdout
    undo = _cli("undo", str(client), "--session", "claude", "--journal", str(store), env=env)
    assert undo.returncode == 0, undo.stdout + undo.stderr
    assert (client / "c.txt").read_text() == "mine\n"
