"""Shared test configuration: anyio backend, hypothesis profiles, and a home of the suite's
own, with a check that the user's own places are left as they were."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

from dsh_fs import _platform

settings.register_profile(
    "default",
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "fuzz",
    max_examples=5000,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

_XDG = {
    "XDG_STATE_HOME": (".local", "state"),
    "XDG_DATA_HOME": (".local", "share"),
    "XDG_CONFIG_HOME": (".config",),
    "XDG_CACHE_HOME": (".cache",),
}
"""The XDG base directories and their defaults under a home."""

Snapshot = dict[str, tuple[int, int, int]]
"""Every entry at a place, by its path relative to the place: (mode, size, mtime in ns)."""

_SUITE_HOME = pytest.StashKey[str]()
_BEFORE = pytest.StashKey[dict[str, Snapshot]]()


def _user_places(environ: dict[str, str]) -> list[str]:
    """Where dsh-fs keeps things of the user's, as the user's environment names them: the
    journal store's state directory, the other XDG directories' dsh-fs folders, and what
    `make install` puts in the home."""
    home = environ.get("HOME") or os.path.expanduser("~")
    places = [
        os.path.join(environ.get(name) or os.path.join(home, *default), "dsh-fs")
        for name, default in _XDG.items()
    ]
    return [*places, os.path.join(home, ".local", "bin", "dsh-fs")]


def _snapshot(place: str) -> Snapshot:
    """What is at `place` now (nothing when it does not exist)."""
    found: Snapshot = {}
    try:
        info = os.lstat(place)
    except FileNotFoundError:
        return found
    found["."] = (info.st_mode, info.st_size, info.st_mtime_ns)
    for folder, dirs, files in os.walk(place):
        for name in (*dirs, *files):
            path = os.path.join(folder, name)
            try:
                info = os.lstat(path)
            except FileNotFoundError:  # removed while we looked: that is a change too
                continue
            found[os.path.relpath(path, place)] = (info.st_mode, info.st_size, info.st_mtime_ns)
    return found


def _changes(place: str, before: Snapshot, after: Snapshot) -> list[str]:
    """One line per entry added, removed or changed at `place` (its path in full)."""
    changed = [
        (verb, os.path.normpath(os.path.join(place, entry)))
        for entry in sorted(before.keys() | after.keys())
        if (verb := _verb(before.get(entry), after.get(entry)))
    ]
    return [f"{verb} {path}" for verb, path in changed]


def _verb(before: tuple[int, int, int] | None, after: tuple[int, int, int] | None) -> str | None:
    if before is None:
        return "added"
    if after is None:
        return "removed"
    return "changed" if before != after else None


def pytest_configure(config: pytest.Config) -> None:
    """Before any test, fixture or child process: the suite gets a home of its own (with the
    XDG directories under it), and the user's own places are noted.

    Set here, not in a fixture: a module-scoped fixture starts its server before any
    function-scoped fixture runs, and the MCP SDK's stdio client passes a server only HOME,
    PATH and a few others (no XDG_STATE_HOME), so only a HOME of the suite's own keeps every
    child's journal store out of the user's. xdist's workers inherit it from the controller.
    """
    # Hypothesis keeps what it learns (the examples that failed, to replay them first; the
    # constants it found in the code) in `.hypothesis` of the working directory: in pytest's
    # own cache folder instead, beside the npm cache below. Read at its first use, in every
    # worker too (each process sets it for itself).
    if (cache := getattr(config, "cache", None)) is not None:
        os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = str(cache.mkdir("hypothesis"))
    if hasattr(config, "workerinput"):
        return
    config.stash[_BEFORE] = {place: _snapshot(place) for place in _user_places(dict(os.environ))}
    home = tempfile.mkdtemp(prefix="dsh-fs-tests-home-")
    config.stash[_SUITE_HOME] = home
    os.environ["HOME"] = home
    for name, default in _XDG.items():
        os.environ[name] = os.path.join(home, *default)
        # Made now, as a lived-in home has them: the workers share this home, and a test
        # that watches it (the differential's home guard) must not see another test's first
        # use of ~/.config or ~/.cache as a new entry.
        os.makedirs(os.environ[name], exist_ok=True)
    # npx keeps what it fetches (the MCP Inspector a test runs, ~16,000 files) in npm's
    # cache, ~/.npm: pytest's cache folder in the checkout keeps it between runs instead.
    if (cache := getattr(config, "cache", None)) is not None:
        os.environ["NPM_CONFIG_CACHE"] = str(cache.mkdir("npm"))


def pytest_unconfigure(config: pytest.Config) -> None:
    if home := config.stash.get(_SUITE_HOME, None):
        shutil.rmtree(home, ignore_errors=True)


class _Leak:
    """A change to the user's places, as an entry of the terminal's stats: pytest counts the
    entries of a key of its own in the closing line ("N leaked"), and plugins read each
    entry's ``__dict__`` as if it were a report."""

    def __init__(self, change: str) -> None:
        self.change = change


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Fails the run when the user's own places changed while it ran (a test wrote outside
    its temporary folders)."""
    before = session.config.stash.get(_BEFORE, None)
    if before is None:  # an xdist worker: the controller compares
        return
    changes = [
        change
        for place, snapshot in before.items()
        for change in _changes(place, snapshot, _snapshot(place))
    ]
    if changes:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.stats.setdefault("leaked", []).extend(_Leak(c) for c in changes)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    leaks = terminalreporter.stats.get("leaked", [])
    if not leaks:
        return
    terminalreporter.write_sep("=", "changed outside the temporary folders", red=True)
    # A dsh-fs of the user's own that journals meanwhile shows here too: say so.
    terminalreporter.write_line(
        "a test wrote into the user's own dsh-fs places (or a dsh-fs of yours ran meanwhile):"
    )
    for leak in leaks:
        terminalreporter.write_line(leak.change)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def portable() -> Iterator[None]:
    """The portable code paths (what macOS and other systems take): no ``/proc``, no
    ``renameat2``, no ``O_PATH``, no kernel copies (`dsh_fs._platform.PORTABLE`)."""
    with _platform.force(_platform.PORTABLE):
        yield


@pytest.fixture(params=["native", "portable"])
def platform_paths(request: pytest.FixtureRequest) -> Iterator[str]:
    """Runs a test twice: with this system's calls, and with the portable ones forced."""
    chosen = _platform.NATIVE if request.param == "native" else _platform.PORTABLE
    with _platform.force(chosen):
        yield str(request.param)
