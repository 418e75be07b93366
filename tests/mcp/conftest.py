"""Fixtures of the MCP server tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def no_serving(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make an in-process ``main([...])`` fail at once instead of serving for ever, should
    a command line that must be refused get as far as serving."""

    async def refuse_to_serve(*args: object, **kwargs: object) -> None:
        raise AssertionError("the command line was accepted and the server started")

    monkeypatch.setattr("dsh_fs.mcp.serve_http", refuse_to_serve)
