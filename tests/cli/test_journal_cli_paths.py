"""`dsh-fs log ROOT PATH` with PATHs as a user types them (relative to the current directory),
the note when the store holds changes but none matches, a short id judged among the served
ROOTs' changes only, and `diff`'s paths relative to the ROOT that holds the file (SPEC §9,
§9.1)."""

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


def _cli(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_DSH_FS, *args], capture_output=True, text=True, env=env, cwd=cwd, check=False, timeout=120
    )


async def _move(root: Path, store: Path) -> None:
    """An agent moves a.txt to b.txt under `root`."""
    (root / "a.txt").write_text("a\n")
    async with Workspace.sandbox(root, journal=store) as ws:
        s = ws.session(label="agent")
        await s.call("read", {"file_path": "a.txt"})
        moved = await s.call("move", {"source_path": "a.txt", "destination_path": "b.txt"})
        assert not moved.is_error, moved.text


def _logged(done: subprocess.CompletedProcess[str]) -> list[str]:
    assert done.returncode == 0, done.stderr
    return [entry["tool"] for entry in json.loads(done.stdout)]


@pytest.mark.anyio
async def test_log_finds_a_path_given_relative_to_the_current_directory(
    tmp_path: Path, env: dict[str, str]
) -> None:
    root, store = tmp_path / "proj", tmp_path / "store"
    root.mkdir()
    await _move(root, store)
    above = _cli("log", "proj", "proj/b.txt", "--journal", "store", "--json", env=env, cwd=tmp_path)
    assert _logged(above) == ["move"]
    inside = _cli("log", ".", "b.txt", "--journal", "../store", "--json", env=env, cwd=root)
    assert _logged(inside) == ["move"]


@pytest.mark.anyio
async def test_log_lists_a_move_under_its_source_given_relatively(
    tmp_path: Path, env: dict[str, str]
) -> None:
    root, store = tmp_path / "proj", tmp_path / "store"
    root.mkdir()
    await _move(root, store)
    inside = _cli("log", ".", "a.txt", "--journal", "../store", "--json", env=env, cwd=root)
    assert _logged(inside) == ["move"]
    above = _cli("log", "proj", "proj/a.txt", "--journal", "store", "--json", env=env, cwd=tmp_path)
    assert _logged(above) == ["move"]


@pytest.mark.anyio
async def test_log_still_takes_a_path_relative_to_the_root_from_elsewhere(
    tmp_path: Path, env: dict[str, str]
) -> None:
    root, store, elsewhere = tmp_path / "proj", tmp_path / "store", tmp_path / "elsewhere"
    root.mkdir()
    elsewhere.mkdir()
    await _move(root, store)
    done = _cli(
        "log", str(root), "b.txt", "--journal", str(store), "--json", env=env, cwd=elsewhere
    )
    assert _logged(done) == ["move"]


@pytest.mark.anyio
async def test_a_path_beside_the_root_whose_name_starts_like_it_is_outside_it(
    tmp_path: Path, env: dict[str, str]
) -> None:
    # From tmp_path, "proj-b/b.txt" lies beside proj, not in it (its name merely starts
    # with "proj"): taken relative to the ROOT, as any path outside it is.
    root, store = tmp_path / "proj", tmp_path / "store"
    (root / "proj-b").mkdir(parents=True)
    (root / "proj-b" / "a.txt").write_text("a\n")
    async with Workspace.sandbox(root, journal=store) as ws:
        s = ws.session(label="agent")
        await s.call("read", {"file_path": "proj-b/a.txt"})
        moved = await s.call(
            "move", {"source_path": "proj-b/a.txt", "destination_path": "proj-b/b.txt"}
        )
        assert not moved.is_error, moved.text
    done = _cli(
        "log", str(root), "proj-b/b.txt", "--journal", str(store), "--json", env=env, cwd=tmp_path
    )
    assert _logged(done) == ["move"]


@pytest.mark.anyio
async def test_log_says_no_change_matches_when_the_store_holds_others(
    tmp_path: Path, env: dict[str, str]
) -> None:
    root, store = tmp_path / "proj", tmp_path / "store"
    root.mkdir()
    await _move(root, store)
    (sub,) = [p for p in store.iterdir() if p.is_dir()]
    done = _cli("log", "proj", "proj/c.txt", "--journal", "store", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr == (
        f"dsh-fs log: no change matches PATH proj/c.txt in the journal store {sub} "
        "(it holds 1 change under the ROOTs)\n"
    )
    assert done.stdout == (
        f"No change recorded for {root} matches PATH proj/c.txt (journal: {sub}).\n"
    )
    nobody = _cli("log", "proj", "--session", "nobody", "--journal", "store", env=env, cwd=tmp_path)
    assert "no change matches --session nobody in the journal store" in nobody.stderr


@pytest.mark.anyio
async def test_a_prefix_unique_under_the_root_is_not_ambiguous_for_another_roots_changes(
    tmp_path: Path, env: dict[str, str]
) -> None:
    mine, other, store = tmp_path / "mine", tmp_path / "other", tmp_path / "store"
    mine.mkdir()
    other.mkdir()
    for root, names in ((mine, ["m.txt"]), (other, ["q1.txt", "q2.txt"])):
        async with Workspace.sandbox(root, journal=store) as ws:
            s = ws.session(label="agent")
            for name in names:
                assert not (await s.call("write", {"file_path": name, "content": "x\n"})).is_error
    logs = [
        json.loads(
            _cli("log", str(r), "--journal", str(store), "--json", env=env, cwd=tmp_path).stdout
        )
        for r in (mine, other)
    ]
    (mine_id,) = [entry["id"] for entry in logs[0]]
    ids = [mine_id, *(entry["id"] for entry in logs[1])]
    shared = next(n for n in range(len(mine_id)) if len({i[: n + 1] for i in ids}) > 1)
    prefix = mine_id[:shared]  # what all three ids begin with
    if len(prefix) < 8:
        pytest.skip("the changes straddle a day boundary: their ids share no 8 characters")
    diff = _cli("diff", str(mine), prefix, "--journal", str(store), env=env, cwd=tmp_path)
    assert (diff.returncode, diff.stderr) == (0, "")
    assert diff.stdout.startswith("--- /dev/null\n+++ b/m.txt\n")
    undo = _cli("undo", str(mine), prefix, "--journal", str(store), env=env, cwd=tmp_path)
    assert (undo.returncode, undo.stderr) == (0, "")
    assert undo.stdout == f"undone {mine_id} {mine / 'm.txt'}\n"
    assert not (mine / "m.txt").exists()
    assert sorted(p.name for p in other.iterdir()) == ["q1.txt", "q2.txt"]
    both = _cli("diff", str(other), prefix, "--journal", str(store), env=env, cwd=tmp_path)
    assert both.returncode == 2
    assert f"dsh-fs diff: {prefix!r} names 2 changes (" in both.stderr


@pytest.mark.anyio
async def test_diff_names_a_file_under_a_second_root_relative_to_that_root(
    tmp_path: Path, env: dict[str, str]
) -> None:
    proj, other, store = tmp_path / "proj", tmp_path / "other", tmp_path / "store"
    proj.mkdir()
    (other / "sub").mkdir(parents=True)
    (other / "sub" / "o.txt").write_text("old\n")
    async with Workspace.sandbox(proj, other, journal=store) as ws:  # as `dsh-fs mcp proj other`
        s = ws.session(label="agent")
        await s.call("read", {"file_path": str(other / "sub" / "o.txt")})
        wrote = await s.call(
            "write", {"file_path": str(other / "sub" / "o.txt"), "content": "new\n"}
        )
        assert not wrote.is_error, wrote.text
    log = _cli("log", str(other), "--journal", str(store), "--json", env=env, cwd=tmp_path)
    (entry,) = json.loads(log.stdout)
    expected = "--- a/sub/o.txt\n+++ b/sub/o.txt\n@@ -1 +1 @@\n-old\n+new\n"
    for roots in ([other], [proj, other]):
        diff = _cli(
            "diff", *map(str, roots), entry["id"], "--journal", str(store), env=env, cwd=tmp_path
        )
        assert (diff.returncode, diff.stderr, diff.stdout) == (0, "", expected)


@pytest.mark.anyio
async def test_log_of_a_second_root_counts_the_sub_stores_its_changes_are_in(
    tmp_path: Path, env: dict[str, str]
) -> None:
    # A server with two ROOTs records under the first's sub-store: `log` of the second
    # named the second's own sub-store, holding "0 entries and 0 pre-images", above the
    # change it listed.
    proj, other, store = tmp_path / "proj", tmp_path / "other", tmp_path / "store"
    proj.mkdir()
    other.mkdir()
    (other / "o.txt").write_text("old\n")
    (proj / "p.txt").write_text("old\n")
    async with Workspace.sandbox(proj, other, journal=store) as ws:  # `dsh-fs mcp proj other`
        s = ws.session(label="agent")
        for path in (other / "o.txt", proj / "p.txt"):
            await s.call("read", {"file_path": str(path)})
            wrote = await s.call("write", {"file_path": str(path), "content": "new\n"})
            assert not wrote.is_error, wrote.text
    async with Workspace.sandbox(other, journal=store) as ws:  # `dsh-fs mcp other`
        s = ws.session(label="agent")
        wrote = await s.call("write", {"file_path": "n.txt", "content": "new\n"})
        assert not wrote.is_error, wrote.text
    (sub_proj,) = [p for p in store.iterdir() if (p / "root").read_text() == f"{proj}\n"]
    (sub_other,) = [p for p in store.iterdir() if (p / "root").read_text() == f"{other}\n"]
    alone = _cli("log", str(proj), "--journal", str(store), env=env, cwd=tmp_path)
    first = alone.stdout.splitlines()[0]
    assert first.startswith(f"1 change shown; the journal at {sub_proj} holds 2 entries and ")
    both = _cli("log", str(other), "--journal", str(store), env=env, cwd=tmp_path)
    first = both.stdout.splitlines()[0]
    assert first.startswith(
        f"2 changes shown; the journal at {store} (2 sub-stores) holds 3 entries and 2 "
    ), both.stdout
    assert str(sub_other) not in both.stdout


@pytest.mark.anyio
async def test_a_path_relative_to_a_root_finds_changes_another_roots_sub_store_holds(
    tmp_path: Path, env: dict[str, str]
) -> None:
    # g.txt under other/ was changed by a server serving proj and other: recorded in proj's
    # sub-store, by its absolute path. `log other g.txt` (from outside other/: relative to
    # the ROOT) matched only other's own sub-store, and its "no change matches" named that
    # sub-store while counting the changes of both.
    proj, other, store = tmp_path / "proj", tmp_path / "other", tmp_path / "store"
    proj.mkdir()
    (other / "dir").mkdir(parents=True)
    for name in ("g.txt", "f.txt", "dir/m.txt"):
        (other / name).write_text("old\n")
    async with Workspace.sandbox(proj, other, journal=store) as ws:  # `dsh-fs mcp proj other`
        s = ws.session(label="agent")
        await s.call("read", {"file_path": str(other / "g.txt")})
        wrote = await s.call("write", {"file_path": str(other / "g.txt"), "content": "new\n"})
        assert not wrote.is_error, wrote.text
        await s.call("read", {"file_path": str(other / "dir" / "m.txt")})
        moved = await s.call(
            "move",
            {"source_path": str(other / "dir" / "m.txt"), "destination_path": str(proj / "m.txt")},
        )
        assert not moved.is_error, moved.text
    async with Workspace.sandbox(other, journal=store) as ws:  # `dsh-fs mcp other`
        s = ws.session(label="agent")
        await s.call("read", {"file_path": "f.txt"})
        wrote = await s.call("write", {"file_path": "f.txt", "content": "new\n"})
        assert not wrote.is_error, wrote.text
    for path, tools in (("g.txt", ["write"]), ("dir", ["move"]), ("f.txt", ["write"])):
        done = _cli(
            "log", str(other), path, "--journal", str(store), "--json", env=env, cwd=tmp_path
        )
        assert _logged(done) == tools, (path, done.stdout, done.stderr)
    none = _cli("log", str(other), "nothing.txt", "--journal", str(store), env=env, cwd=tmp_path)
    assert f"in the journal store {store} (2 sub-stores) (it holds 3 changes" in none.stderr
