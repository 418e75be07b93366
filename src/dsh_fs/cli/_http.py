"""`dsh-fs mcp --http`: the token, the address checks, the banner, and `--print-config`.

A server on HTTP answers whoever can reach its port, so by default every request must carry
a bearer token: from ``--token-file``, else ``DSH_FS_MCP_TOKEN``, else one generated for the
run and printed once on stderr with the client entries to paste. ``--no-auth`` turns that
off, on a loopback address only; any other address needs ``--allow-remote``.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import re
import secrets
import shlex
import stat
import sys
from typing import TYPE_CHECKING, Final

from ._client_roots import client_roots_mode
from ._config import (
    HOSTS,
    Host,
    claude_http_command,
    http_host_config,
    inspector_http_command,
)
from ._running import run_until_interrupted
from ._usage import UsageError

if TYPE_CHECKING:
    from dsh_fs.workspace import Workspace

__all__ = ["TOKEN_ENV", "print_http_config", "run_http"]

TOKEN_ENV: Final = "DSH_FS_MCP_TOKEN"
"""The environment variable a token is read from when there is no ``--token-file``."""

_MIN_TOKEN: Final = 16
"""Characters a token needs at least (a generated one has 43)."""

_TOKEN_CHARS: Final = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
"""RFC 6750's ``b64token``: what an ``Authorization: Bearer`` header can carry as is."""

_HTTP_ONLY: Final = ("token_file", "tokens", "no_auth", "allow_remote", "allowed_host")


def check_http_flags(args: argparse.Namespace) -> None:
    """Refuse the HTTP flags without ``--http``, and contradictory ones.

    Raises:
        UsageError: they don't fit together.
    """
    if args.http is None:
        for name in _HTTP_ONLY:
            if getattr(args, name):
                flag = "--" + name.replace("_", "-")
                raise UsageError(f"dsh-fs mcp: {flag} applies to --http only")
    if args.no_auth and args.token_file is not None:
        raise UsageError("dsh-fs mcp: --no-auth and --token-file contradict each other")
    if args.tokens is not None and (args.no_auth or args.token_file is not None):
        other = "--no-auth" if args.no_auth else "--token-file"
        raise UsageError(f"dsh-fs mcp: --tokens and {other} contradict each other")


def _checked_token(token: str, source: str) -> str:
    token = token.strip()
    if len(token) < _MIN_TOKEN or not _TOKEN_CHARS.fullmatch(token):
        raise UsageError(
            f"dsh-fs mcp: the token from {source} must be at least {_MIN_TOKEN} characters of "
            "A-Z a-z 0-9 - . _ ~ + / (then '=' padding); make one with: python3 -c "
            "'import secrets; print(secrets.token_urlsafe(32))'"
        )
    return token


def _read_token_file(path: str) -> str:
    return _checked_token(_read_token_file_text(path, "--token-file"), path)


def _read_token_file_text(path: str, flag: str) -> str:
    try:
        with open(path, encoding="utf-8") as file:
            mode = os.fstat(file.fileno()).st_mode
            text = file.read()
    except (OSError, UnicodeDecodeError) as exc:
        detail = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise UsageError(f"dsh-fs mcp: {flag} {path}: {detail}") from None
    if mode & (stat.S_IRGRP | stat.S_IROTH):
        print(
            f"dsh-fs: warning: {path} is readable by other users, who could then use the "
            f"server; make it private: chmod 600 {path}",
            file=sys.stderr,
        )
    return text


def _read_tokens(path: str) -> dict[str, str]:
    """``--tokens FILE``: one ``TOKEN NAME`` per line (blank lines and ``#`` comments
    skipped), each token one agent (SPEC §14)."""
    text = _read_token_file_text(path, "--tokens")
    tokens: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        where = f"--tokens {path} line {number}"
        if len(words) != 2:
            raise UsageError(f"dsh-fs mcp: {where}: expected 'TOKEN NAME'")
        token = _checked_token(words[0], where)
        if token in tokens:
            raise UsageError(f"dsh-fs mcp: {where}: the token is already {tokens[token]!r}'s")
        tokens[token] = words[1]
    if not tokens:
        raise UsageError(f"dsh-fs mcp: --tokens {path}: no 'TOKEN NAME' line")
    return tokens


def resolve_token(args: argparse.Namespace) -> tuple[str | dict[str, str] | None, str]:
    """The token clients must send (or, with ``--tokens``, each agent's), and where it came
    from (``--token-file PATH``, ``--tokens PATH``, ``DSH_FS_MCP_TOKEN``, ``generated``, or
    ``--no-auth`` for none).

    Raises:
        UsageError: the token file can't be read, or a token is too weak to use.
    """
    if args.no_auth:
        return None, "--no-auth"
    if args.tokens is not None:
        return _read_tokens(args.tokens), f"--tokens {args.tokens}"
    if args.token_file is not None:
        return _read_token_file(args.token_file), f"--token-file {args.token_file}"
    from_env = os.environ.get(TOKEN_ENV, "")
    if from_env.strip():
        return _checked_token(from_env, TOKEN_ENV), TOKEN_ENV
    return secrets.token_urlsafe(32), "generated"


def _is_wildcard(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_unspecified
    except ValueError:
        return False


def _check_address(args: argparse.Namespace, bound: str, loopback: bool) -> None:
    if loopback:
        return
    if not args.allow_remote:
        raise UsageError(
            f"dsh-fs mcp: --http: {bound} is not a loopback address, so other machines could "
            "reach the server; pass --allow-remote to mean it (a token is then required)"
        )
    if args.no_auth:
        raise UsageError(
            f"dsh-fs mcp: --no-auth is allowed on a loopback address only, not on {bound}"
        )
    if _is_wildcard(bound) and not args.allowed_host:
        raise UsageError(
            f"dsh-fs mcp: --http: {bound} listens on every address; name the host or address "
            "clients will use with --allowed-host HOST (requests naming another are refused)"
        )


def _url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/mcp"


def _banner(url: str, token: str | dict[str, str] | None, source: str, loopback: bool) -> list[str]:
    lines: list[str] = []
    if token is None:
        lines.append(
            "dsh-fs: warning: no authentication (--no-auth): every process on this machine "
            "can read and edit the served folders through this server"
        )
    elif isinstance(token, dict):
        lines.append(
            f"dsh-fs: clients must send \"Authorization: Bearer <their agent's token from "
            f'{source}>" ({len(token)} agents; each owns its observations)'
        )
    elif source == "generated":
        header = f"Authorization: Bearer {token}"
        lines += [
            "dsh-fs: clients must send this header (the token is new for this run; to keep "
            f"one, pass --token-file PATH or set {TOKEN_ENV}):",
            f"  {header}",
            f"dsh-fs: Claude Code: {claude_http_command(url, f'Bearer {token}')}",
        ]
        places: tuple[tuple[Host, str], ...] = (
            ("cursor", "Cursor (.cursor/mcp.json)"),
            ("vscode", "VS Code (.vscode/mcp.json)"),
        )
        for host, place in places:
            entry = json.dumps(http_host_config(host, url, f"Bearer {token}"))
            lines.append(f"dsh-fs: {place}: {entry}")
        lines.append(f"dsh-fs: MCP Inspector: {inspector_http_command(url, f'Bearer {token}')}")
    else:
        lines.append(
            f'dsh-fs: clients must send "Authorization: Bearer <the token from {source}>"; '
            "'dsh-fs mcp --http HOST:PORT --print-config HOST' prints a host's entry"
        )
    reach = (
        "loopback: this machine only"
        if loopback
        else "reachable from the network, unencrypted: put TLS in front of it"
    )
    lines.append(f"dsh-fs: serving MCP (streamable HTTP; {reach}) at {url}")
    return lines


def run_http(args: argparse.Namespace, workspace: Workspace, host: str, port: int) -> int:
    """Bind ``--http``'s address, check it against the flags, print the banner and serve.

    Raises:
        UsageError: the address can't be bound, or the flags don't allow it.
    """
    from dsh_fs.mcp import bind_socket, is_loopback, serve_http

    token, source = resolve_token(args)
    try:
        sock = bind_socket(host, port)
    except OSError as exc:
        raise UsageError(
            f"dsh-fs mcp: --http: cannot listen on {host}:{port}: {exc.strerror}"
        ) from None
    with sock:
        bound, bound_port = sock.getsockname()[:2]
        loopback = is_loopback(bound)
        _check_address(args, bound, loopback)
        banner = _banner(_url(bound, bound_port), token, source, loopback)

        def ready() -> None:
            print("\n".join(banner), file=sys.stderr, flush=True)

        async def http() -> None:
            async with workspace:
                await serve_http(
                    workspace,
                    sock,
                    token=token,
                    allow_remote=args.allow_remote,
                    allowed_hosts=args.allowed_host or (),
                    structured=args.structured,
                    log_level=args.log_level,
                    on_ready=ready,
                    # A client's MCP roots fence its own session (SPEC §10.1).
                    client_roots=client_roots_mode(args),
                )

        run_until_interrupted(http)
    return 0


def print_http_config(args: argparse.Namespace, host: str, port: int, *, serve: list[str]) -> int:
    """``--print-config HOST`` with ``--http``: the entry that connects HOST to the server
    at that address. The token is referenced from ``DSH_FS_MCP_TOKEN`` (the entry may go
    into a shared project file), never written out. The hint's start command is `serve`
    (the launcher, ``mcp``, the flags and the absolute roots) with the address added, so it
    serves the same folders wherever it is run.

    Raises:
        UsageError: the port is 0 (unknown until the server starts).
    """
    if port == 0:
        raise UsageError(
            "dsh-fs mcp: --print-config needs the port clients will use: pass --http "
            "HOST:PORT with a port other than 0, and start the server with the same one"
        )
    target: Host = args.print_config
    assert target in HOSTS
    url = _url(host, port)
    authorization = None if args.no_auth else _env_authorization(target)
    print(json.dumps(http_host_config(target, url, authorization), indent=2))
    after_mcp = serve.index("mcp") + 1
    address = ["--http", _url(host, port).split("/")[2]]
    if authorization is None:
        start = shlex.join([*serve[:after_mcp], *address, "--no-auth", *serve[after_mcp:]])
        print(f"dsh-fs: start the server with: {start}", file=sys.stderr)
        return 0
    claude = (
        f"claude mcp add --transport http dsh-fs {url} "
        f'--header "Authorization: Bearer ${TOKEN_ENV}"'
    )
    where = {
        "claude": f".mcp.json (the host reads ${TOKEN_ENV} from its environment), or run: {claude}",
        "cursor": f".cursor/mcp.json or ~/.cursor/mcp.json (Cursor reads ${TOKEN_ENV})",
        "vscode": ".vscode/mcp.json (VS Code asks for the token once)",
    }[target]
    print(
        f"dsh-fs: paste into {where}; start the server with the same token: "
        f"{TOKEN_ENV}=<token> {shlex.join([*serve[:after_mcp], *address, *serve[after_mcp:]])}",
        file=sys.stderr,
    )
    return 0


def _env_authorization(host: Host) -> str:
    if host == "claude":
        return f"Bearer ${{{TOKEN_ENV}}}"
    if host == "cursor":
        return f"Bearer ${{env:{TOKEN_ENV}}}"
    return "Bearer ${input:dsh-fs-token}"
