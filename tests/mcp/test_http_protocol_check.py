"""The HTTP connection guard extends uvicorn's h11 protocol (uvicorn internals): a uvicorn
that no longer fits fails when the server starts, naming its version, never as a guard
that silently stops cutting slow clients off."""

from __future__ import annotations

import asyncio
from importlib.metadata import version
from typing import Any

import pytest
from uvicorn.protocols.http.h11_impl import H11Protocol

from dsh_fs.mcp import HttpLimits
from dsh_fs.mcp.http import _connections
from dsh_fs.mcp.http._connections import AcceptLog, check_protocol_fits, guarded_protocol


def test_the_installed_uvicorn_fits_the_connection_guard() -> None:
    check_protocol_fits()
    assert issubclass(guarded_protocol(HttpLimits(), AcceptLog(None)), H11Protocol)


class _NewSignature(H11Protocol):
    """An H11Protocol as a future uvicorn might write it: another constructor."""

    def __init__(self, config: Any, server_state: Any, *, loop: Any = None) -> None:
        raise AssertionError("never built")


class _NoHook(asyncio.Protocol):
    """A protocol without the hook the guard extends after each response."""

    def __init__(self, config: Any, server_state: Any, app_state: Any, _loop: Any = None) -> None:
        raise AssertionError("never built")


@pytest.mark.parametrize(
    ("protocol", "what"),
    [
        (_NewSignature, r"H11Protocol\.__init__"),
        (_NoHook, r"H11Protocol\.on_response_complete is gone"),
    ],
)
def test_a_uvicorn_that_no_longer_fits_fails_at_start_up_naming_its_version(
    monkeypatch: pytest.MonkeyPatch, protocol: type[Any], what: str
) -> None:
    monkeypatch.setattr(_connections, "H11Protocol", protocol)
    installed = version("uvicorn").replace(".", r"\.")
    with pytest.raises(RuntimeError, match=rf"uvicorn {installed} no longer fits it \({what}"):
        guarded_protocol(HttpLimits(), AcceptLog(None))
