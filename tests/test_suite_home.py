"""The suite runs in a home of its own, and a run that changes the user's own dsh-fs places
fails (tests/conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

LEAKING_TEST = """
import os


def test_leaks() -> None:
    os.makedirs(os.environ["LEAK_TO"])
"""


def test_the_suite_runs_with_a_home_and_state_home_of_its_own() -> None:
    home = os.environ["HOME"]
    assert os.path.basename(home).startswith("dsh-fs-tests-home-")
    assert os.environ["XDG_STATE_HOME"] == os.path.join(home, ".local", "state")


def test_hypothesis_keeps_its_storage_in_pytests_cache_folder_not_the_checkout(
    pytestconfig: pytest.Config,
) -> None:
    cache = pytestconfig.cache
    assert cache is not None
    assert os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] == str(cache.mkdir("hypothesis"))


def test_a_run_that_writes_into_the_users_journal_store_fails_and_names_what_it_wrote(
    tmp_path: Path,
) -> None:
    home, temp = tmp_path / "home", tmp_path / "tmp"
    home.mkdir()
    temp.mkdir()
    (tmp_path / "test_leak.py").write_text(LEAKING_TEST, encoding="utf-8")
    journal = home / ".local" / "state" / "dsh-fs" / "journal"
    env = {name: value for name, value in os.environ.items() if not name.startswith("XDG_")}
    env.update(HOME=str(home), TMPDIR=str(temp), LEAK_TO=str(journal))
    done = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"),
            *("-p", "tests.conftest", str(tmp_path / "test_leak.py")),
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"added {journal.parent}\n" in done.stdout
    assert f"added {journal}\n" in done.stdout
    assert done.stdout.rstrip().splitlines()[-1].startswith("1 passed, 2 leaked in ")
    assert list(temp.iterdir()) == []  # the run's own home was removed with it
