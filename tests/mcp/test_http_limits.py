"""The HTTP server's default limits are the numbers SECURITY.md states."""

from __future__ import annotations

import resource

import pytest

from dsh_fs.mcp import HttpLimits
from dsh_fs.mcp.http._connections import waiting_cap


def test_the_default_limits_are_the_numbers_security_md_states() -> None:
    limits = HttpLimits()
    assert limits.request_timeout == 30.0
    assert limits.max_sessions == 100
    assert limits.session_idle_timeout == 300.0
    assert limits.max_body == 4 * 1024 * 1024


@pytest.mark.parametrize(
    ("soft", "cap"),
    [(40, 16), (1024, 256), (8192, 1000), (resource.RLIM_INFINITY, 1000)],
)
def test_a_quarter_of_the_fd_limit_may_wait_for_a_request_between_16_and_1000(
    monkeypatch: pytest.MonkeyPatch, soft: int, cap: int
) -> None:
    monkeypatch.setattr(resource, "getrlimit", lambda _: (soft, resource.RLIM_INFINITY))
    assert waiting_cap(HttpLimits()) == cap
    assert waiting_cap(HttpLimits(waiting_connections=5)) == 5
