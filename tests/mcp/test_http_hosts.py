"""Loopback is all of 127.0.0.0/8 and ::1; Host and Origin are checked on every address."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import httpx2
import pytest

from dsh_fs.cli import main
from dsh_fs.mcp import is_loopback
from dsh_fs.mcp.http._serving import http_security

from .http_testing import SIX_TOOLS, TIMEOUT, TOKEN, HttpServer, client, headers, http_server
from .mcp_testing import make_root

pytestmark = pytest.mark.anyio


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_root(tmp_path)


@pytest.fixture
async def second_loopback(root: Path) -> AsyncIterator[HttpServer]:
    async with http_server(root, "--allowed-host", "named.test", address="127.0.0.2:0") as server:
        yield server


async def status_for(url: str, token: str | None = TOKEN, **sent: str) -> int:
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    with anyio.fail_after(TIMEOUT):
        async with httpx2.AsyncClient() as http:
            response = await http.post(url, json=ping, headers=headers(token, **sent))
    return int(response.status_code)


@pytest.mark.parametrize(
    ("address", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("127.255.255.254", True),
        ("::1", True),
        ("[::1]", True),
        ("::ffff:127.0.0.3", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.0.2.2", False),
        ("::ffff:192.0.2.2", False),
        ("localhost", False),
    ],
)
def test_loopback_is_127_slash_8_and_ipv6_one(address: str, loopback: bool) -> None:
    assert is_loopback(address) is loopback


def test_the_allowed_hosts_are_the_bound_address_its_loopback_name_and_the_names_given() -> None:
    assert http_security("127.0.0.1", 8000).allowed_hosts == ["127.0.0.1:8000", "localhost:8000"]
    assert http_security("::1", 8000).allowed_hosts == ["[::1]:8000", "localhost:8000"]
    assert http_security("127.0.0.2", 8000).allowed_hosts == ["127.0.0.2:8000"]
    assert http_security("0.0.0.0", 80, ["box.lan"]).allowed_hosts == [
        "127.0.0.1:80",
        "127.0.0.1",
        "localhost:80",
        "localhost",
        "[::1]:80",
        "[::1]",
        "box.lan:80",
        "box.lan",
    ]
    extra = http_security("192.0.2.2", 9, ["proxy.example:443", "any.example:*", "fd00::2"])
    assert extra.allowed_hosts == [
        "192.0.2.2:9",
        "proxy.example:443",
        "any.example:*",
        "[fd00::2]:9",
        "[fd00::2]",
    ]
    assert "https://proxy.example:443" in extra.allowed_origins
    assert "http://192.0.2.2:9" in extra.allowed_origins
    assert extra.enable_dns_rebinding_protection


async def test_a_server_on_127_0_0_2_is_loopback_and_checks_host_and_origin(
    second_loopback: HttpServer,
) -> None:
    server = second_loopback
    assert server.url.startswith("http://127.0.0.2:")
    assert "(streamable HTTP; loopback: this machine only)" in server.stderr
    assert "not loopback" not in server.stderr
    port = server.port
    past_the_checks = 400  # no session: the request got as far as the MCP transport
    assert await status_for(server.url) == past_the_checks
    assert await status_for(server.url, host=f"named.test:{port}") == past_the_checks
    assert await status_for(server.url, host=f"evil.example:{port}") == 421
    assert await status_for(server.url, host=f"localhost:{port}") == 421
    assert await status_for(server.url, host=f"127.0.0.2:{port + 1}") == 421
    assert await status_for(server.url, origin="http://evil.example") == 403
    assert await status_for(server.url, origin="null") == 403
    assert await status_for(server.url, origin=f"http://127.0.0.2:{port}") == past_the_checks
    with anyio.fail_after(TIMEOUT):
        async with client(server.url, Host=f"named.test:{port}") as mcp:
            listing = await mcp.list_tools()
    assert [tool.name for tool in listing.tools] == SIX_TOOLS


async def test_a_foreign_host_is_refused_before_the_token_is_even_looked_at(
    second_loopback: HttpServer,
) -> None:
    port = second_loopback.port
    assert await status_for(second_loopback.url, host=f"evil.example:{port}", token=None) == 421


def _network_address() -> str | None:
    """An address of this machine that other machines may reach, if it has one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # no packet is sent: this only picks a route
        except OSError:
            return None
        address: str = probe.getsockname()[0]
    return None if is_loopback(address) else address


@pytest.mark.usefixtures("no_serving")
def test_a_network_address_needs_allow_remote(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    address = _network_address() or "0.0.0.0"
    assert main(["mcp", "--http", f"{address}:0", str(root)]) == 2
    assert f"{address} is not a loopback address" in capsys.readouterr().err


async def test_a_network_address_with_allow_remote_needs_the_token(root: Path) -> None:
    address = _network_address()
    if address is None:
        pytest.skip("this machine has no non-loopback IPv4 address")
    async with http_server(root, "--allow-remote", address=f"{address}:0") as server:
        assert server.url.startswith(f"http://{address}:")
        assert "reachable from the network, unencrypted" in server.stderr
        assert await status_for(server.url, token=None) == 401
        assert await status_for(server.url, host=f"localhost:{server.port}") == 421
        with anyio.fail_after(TIMEOUT):
            async with client(server.url, TOKEN) as mcp:
                listing = await mcp.list_tools()
        assert [tool.name for tool in listing.tools] == SIX_TOOLS


@pytest.mark.usefixtures("no_serving")
def test_every_address_needs_the_host_clients_will_name(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["mcp", "--http", "0.0.0.0:0", "--allow-remote", str(root)]
    assert main(argv) == 2
    assert "listens on every address; name the host" in capsys.readouterr().err
