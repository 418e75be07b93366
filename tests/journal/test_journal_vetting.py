"""A store's contents are vetted before use (SPEC §9.1): a record or pre-image that is not a
regular file, is larger than the bound, or carries an impossible field is reported by `log`
as damaged and never opened, followed or applied. One test per finding of the red team."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from dsh_fs import Workspace
from dsh_fs.providers._journal_records import RECORD_LIMIT, new_entry_id

_DSH_FS = str(Path(sys.executable).with_name("dsh-fs"))


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(tmp_path / "home"), "XDG_STATE_HOME": str(tmp_path / "xdg")}


def _sub_store(store: Path) -> Path:
    (sub,) = [p for p in store.iterdir() if p.is_dir()]
    return sub


def _one_write(root: Path, store: Path) -> Path:
    """A journaled write of ``a.txt`` (``mine`` → ``agent``); its record's path."""
    root.mkdir()
    (root / "a.txt").write_text("mine\n", encoding="utf-8")

    async def write() -> None:
        async with Workspace.sandbox(root, journal=store) as ws:
            s = ws.session(label="agent")
            await s.call("read", {"file_path": "a.txt"})
            await s.call("write", {"file_path": "a.txt", "content": "agent\n"})

    anyio.run(write)
    (record,) = [p for p in _sub_store(store).iterdir() if p.suffix == ".json"]
    return record


def _tamper(record: Path, **fields: object) -> None:
    data = json.loads(record.read_text(encoding="utf-8"))
    data.update(fields)
    record.write_text(json.dumps(data), encoding="utf-8")


def _undo_everything(root: Path, store: Path) -> list[str]:
    """Undo the agent's session; the results, and the damaged records `log` would show."""

    async def undo() -> list[str]:
        async with Workspace.sandbox(root, journal=store) as ws:
            assert ws.journal is not None
            with anyio.fail_after(30):
                results = await ws.journal.undo(session="agent")
                _, problems = await ws.journal.read()
        return [r.result for r in results] + [f"{p.name}: {p.reason}" for p in problems]

    return anyio.run(undo)


def test_a_fifo_where_a_record_is_read_hangs_neither_log_nor_undo_nor_the_server_start(
    tmp_path: Path,
) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    _one_write(root, store)
    fifo = new_entry_id()[0]
    os.mkfifo(_sub_store(store) / f"{fifo}.json")
    os.mkfifo(_sub_store(store) / f"{new_entry_id()[0]}.pending")
    env = _env(tmp_path)
    for args, stdin in (
        (["log", str(root), "--journal", str(store)], None),
        (["undo", str(root), "--journal", str(store), "--session", "agent"], None),
        (["mcp", str(root), "--journal", str(store)], ""),
    ):
        done = subprocess.run(
            [_DSH_FS, *args],
            input=stdin,
            stdin=subprocess.DEVNULL if stdin is None else None,
            capture_output=True,
            text=True,
            env=env,
            check=False,
            timeout=60,
        )
        assert done.returncode == 0, (args, done.stderr)
        assert "Traceback" not in done.stderr
    log = subprocess.run(
        [_DSH_FS, "log", str(root), "--journal", str(store)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=60,
    )
    assert f"dsh-fs log: damaged record {fifo}.json: not a regular file" in log.stderr
    assert (root / "a.txt").read_text(encoding="utf-8") == "mine\n"  # the real entry was undone


def test_a_record_larger_than_the_bound_is_damaged_and_never_read_into_memory(
    tmp_path: Path,
) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    _one_write(root, store)
    huge = _sub_store(store) / f"{new_entry_id()[0]}.json"
    with huge.open("wb") as sparse:  # 3 GiB, sparse: no disk used, no memory if never read
        sparse.truncate(3 << 30)
    assert _undo_everything(root, store) == [
        "undone",
        f"{huge.name}: larger than {RECORD_LIMIT} bytes",
    ]


def test_a_huge_mode_is_damaged_and_never_applied(tmp_path: Path) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    record = _one_write(root, store)
    _tamper(record, mode=2**70)
    assert _undo_everything(root, store) == [
        f"{record.name}: mode 1180591620717411303424 is out of range"
    ]
    assert (root / "a.txt").read_text(encoding="utf-8") == "agent\n"


def test_a_negative_mode_is_damaged_and_never_publishes_the_file_07777(
    tmp_path: Path,
) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    record = _one_write(root, store)
    _tamper(record, mode=-1)
    assert _undo_everything(root, store) == [f"{record.name}: mode -1 is out of range"]
    assert stat.S_IMODE((root / "a.txt").stat().st_mode) == 0o644 & ~_umask()
    assert (root / "a.txt").read_text(encoding="utf-8") == "agent\n"


def test_huge_counts_a_climbing_path_and_an_impossible_owner_are_damaged(tmp_path: Path) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    record = _one_write(root, store)
    _tamper(record, added=10**30)
    assert _undo_everything(root, store) == [
        f"{record.name}: added 1000000000000000000000000000000 is out of range"
    ]
    _tamper(record, added=1, rel="../a.txt")
    assert _undo_everything(root, store) == [
        f"{record.name}: rel climbs out of its root (a '..' segment)"
    ]
    _tamper(record, rel="a.txt", uid=-5)
    assert _undo_everything(root, store) == [f"{record.name}: uid -5 is out of range"]


def test_the_undo_guards_fields_are_read_back_and_impossible_ones_are_damaged(
    tmp_path: Path,
) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    record = _one_write(root, store)
    kept = json.loads(record.read_text(encoding="utf-8"))
    # No digest written: the delta tells what was published (`published_digest`).
    assert "digest" not in kept
    assert kept["delta"] == [0, 0, "agent\n"]
    _tamper(record, digest="not a sha256")
    assert _undo_everything(root, store) == [
        f"{record.name}: digest 'not a sha256' is not a sha256"
    ]
    _tamper(record, digest=None, after_mode=0o10000)
    assert _undo_everything(root, store) == [f"{record.name}: after_mode 4096 is out of range"]
    _tamper(record, after_mode=kept["after_mode"], delta=[0, True, "x"])
    assert _undo_everything(root, store) == [f"{record.name}: delta is not [head, tail, middle]"]
    _tamper(record, delta=[0, 0, "x" * (128 * 1024 + 1)])
    assert _undo_everything(root, store) == [
        f"{record.name}: delta is longer than 131072 characters"
    ]
    assert (root / "a.txt").read_text(encoding="utf-8") == "agent\n"  # never applied
    _tamper(record, delta=kept["delta"])
    assert _undo_everything(root, store) == ["undone"]  # the record as written is sound
    assert (root / "a.txt").read_text(encoding="utf-8") == "mine\n"


def test_a_pre_image_that_is_not_a_regular_file_is_damaged_and_never_opened(
    tmp_path: Path,
) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    record = _one_write(root, store)
    pre = record.with_suffix(".pre")
    pre.unlink()
    os.mkfifo(pre)
    assert _undo_everything(root, store) == [
        "refused",
        f"{pre.name}: not a regular file",
    ]
    assert (root / "a.txt").read_text(encoding="utf-8") == "agent\n"


def test_a_pre_image_of_another_size_than_recorded_is_never_applied(
    tmp_path: Path,
) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    record = _one_write(root, store)
    pre = record.with_suffix(".pre")
    pre.unlink()
    pre.write_text("planted, longer than mine\n", encoding="utf-8")
    assert _undo_everything(root, store) == [
        "refused",
        f"{pre.name}: not of its recorded size",
    ]
    assert (root / "a.txt").read_text(encoding="utf-8") == "agent\n"


def test_a_lock_symlink_in_the_store_is_not_followed_by_prune(tmp_path: Path) -> None:
    root, store = tmp_path / "root", tmp_path / "store"
    _one_write(root, store)
    victim = tmp_path / "victim"
    (_sub_store(store) / "lock").unlink(missing_ok=True)  # made by a prune, if one ran
    (_sub_store(store) / "lock").symlink_to(victim)

    async def prune() -> int:
        async with Workspace.sandbox(root, journal=store) as ws:
            assert ws.journal is not None
            return await ws.journal.prune()

    assert anyio.run(prune) == 0
    assert not victim.exists()
    assert (_sub_store(store) / "lock").is_file()
    assert not (_sub_store(store) / "lock").is_symlink()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@pytest.mark.parametrize("damage", ["truncated", "directory"])
def test_an_undo_names_a_damaged_pre_image_as_damaged(tmp_path: Path, damage: str) -> None:
    # It said "its pre-image was pruned or never kept" while `log` reported it damaged.
    root, store = tmp_path / "root", tmp_path / "store"
    record = _one_write(root, store)
    pre = record.with_suffix(".pre")
    if damage == "truncated":
        pre.write_bytes(b"mi")
        why = "not of its recorded size"
    else:
        pre.unlink()
        pre.mkdir()
        why = "not a regular file"

    async def undo() -> str | None:
        async with Workspace.sandbox(root, journal=store) as ws:
            assert ws.journal is not None
            (result,) = await ws.journal.undo(ids=[record.stem])
            assert result.result == "refused"
            return result.reason

    assert anyio.run(undo) == f"its pre-image is damaged ({why}); it can't be undone"
    assert (root / "a.txt").read_text(encoding="utf-8") == "agent\n"


def test_dsh_fs_undo_names_a_damaged_pre_image_as_damaged(tmp_path: Path) -> None:
    # The CLI hands the journal the entries it read: the damage must come along.
    root, store = tmp_path / "root", tmp_path / "store"
    record = _one_write(root, store)
    record.with_suffix(".pre").write_bytes(b"mi")
    done = subprocess.run(
        [_DSH_FS, "undo", str(root), record.stem, "--journal", str(store)],
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        check=False,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert (
        "its pre-image is damaged (not of its recorded size); it can't be undone" in done.stdout
    ), done.stdout
    assert (root / "a.txt").read_text(encoding="utf-8") == "agent\n"
