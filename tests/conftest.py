"""Shared test configuration: anyio backend, hypothesis profiles."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

from dsh_fs import _platform

settings.register_profile(
    "default", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "fuzz", max_examples=5000, deadline=None, suppress_health_check=list(HealthCheck)
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _journal_state_home(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The CLI and the MCP server journal by default: their store goes under a temporary
    state home, never the user's (child processes inherit it)."""
    os.environ["XDG_STATE_HOME"] = str(tmp_path_factory.getbasetemp() / "state-home")


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
