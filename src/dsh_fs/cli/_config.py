"""`dsh-fs mcp --print-config HOST`: the server entry an MCP host needs, ready to paste.

Hosts start a stdio server with their own environment, where `dsh-fs` is often not on
`PATH`, and with another `HOME` or without the user's `XDG_STATE_HOME`; the entry therefore
names the running launcher, the roots and the journal's store by absolute path.
"""

from __future__ import annotations

import os
import shlex
import sys
from typing import Any, Final, Literal

__all__ = [
    "HOSTS",
    "INSPECTOR",
    "SERVER_NAME",
    "TOKEN_INPUT",
    "Host",
    "claude_http_command",
    "host_config",
    "http_host_config",
    "inspector_http_command",
    "launcher",
    "paste_hint",
    "pin_journal",
    "store_line",
]

Host = Literal["claude", "cursor", "vscode"]
HOSTS: Final[tuple[Host, ...]] = ("claude", "cursor", "vscode")
"""The hosts `--print-config` knows (VS Code's format differs from the other two)."""

SERVER_NAME: Final = "dsh-fs"
"""The key of the server in the printed configuration."""

INSPECTOR: Final = "@modelcontextprotocol/inspector@2.12.0"
"""The MCP Inspector the printed command runs, pinned: unpinned, npx on Node 20 picks 0.15.0
(the newest release that declares no `engines`), whose CLI has no ``--header``; every
release with it declares Node 22, yet this one runs on Node 20 too (npm only warns)."""

TOKEN_INPUT: Final = "dsh-fs-token"
"""The id of VS Code's password prompt for the token (``${input:dsh-fs-token}``)."""


def launcher() -> list[str]:
    """The command that starts this dsh-fs, by absolute path: the `dsh-fs` script that is
    running (a venv's, pipx's or ``pip --user``'s), else this interpreter with
    ``-m dsh_fs``. Symlinks are kept, so a pipx upgrade keeps the entry valid."""
    script = sys.argv[0] if sys.argv else ""
    if os.path.basename(script) == "dsh-fs" and os.path.isfile(script):
        return [os.path.abspath(script)]
    return [sys.executable, "-m", "dsh_fs"]


def pin_journal(flags: list[str]) -> list[str]:
    """The journal options `flags` with the store pinned (SPEC §9.1): ``--journal`` and the
    absolute path of the store this user's `dsh-fs log` reads, when none is named, so that a
    host's environment can't move it. Unchanged with ``--no-journal``."""
    if "--no-journal" in flags or "--journal" in flags:
        return flags
    from dsh_fs.providers import default_journal_location

    return ["--journal", default_journal_location(), *flags]


def store_line(location: str | None) -> str:
    """What a server writes to stderr at start: where it journals (None: it does not)."""
    if location is None:
        return "dsh-fs: not journaling (--no-journal)"
    return f"dsh-fs: journal store {location}"


def host_config(host: Host, command: list[str]) -> dict[str, Any]:
    """The configuration file content that makes `host` start `command` over stdio:
    ``{"mcpServers": …}`` for Claude (Code and Desktop) and Cursor, ``{"servers": …}``
    with an explicit ``type`` for VS Code."""
    entry: dict[str, Any] = {"command": command[0], "args": command[1:]}
    if host == "vscode":
        return {"servers": {SERVER_NAME: {"type": "stdio", **entry}}}
    if host == "claude":
        return {"mcpServers": {SERVER_NAME: {"type": "stdio", **entry}}}
    return {"mcpServers": {SERVER_NAME: entry}}


def paste_hint(host: Host, command: list[str]) -> str:
    """One line for stderr: where the printed configuration goes (and, for Claude Code,
    the command that adds it instead)."""
    if host == "claude":
        added = shlex.join(["claude", "mcp", "add", SERVER_NAME, "--", *command])
        return (
            "dsh-fs: paste into .mcp.json (Claude Code, this project) or "
            f"claude_desktop_config.json (Claude Desktop), or run: {added}"
        )
    if host == "cursor":
        return "dsh-fs: paste into .cursor/mcp.json (this project) or ~/.cursor/mcp.json"
    return "dsh-fs: paste into .vscode/mcp.json (this workspace) or your user mcp.json"


def http_host_config(host: Host, url: str, authorization: str | None) -> dict[str, Any]:
    """The configuration file content that connects `host` to the HTTP server at `url`,
    sending `authorization` as the ``Authorization`` header (None: no header). For VS Code,
    an ``${input:dsh-fs-token}`` in it is declared as a password prompt."""
    headers: dict[str, Any] = {}
    if authorization is not None:
        headers["headers"] = {"Authorization": authorization}
    if host == "vscode":
        config: dict[str, Any] = {"servers": {SERVER_NAME: {"type": "http", "url": url, **headers}}}
        if authorization is not None and f"${{input:{TOKEN_INPUT}}}" in authorization:
            config["inputs"] = [
                {
                    "type": "promptString",
                    "id": TOKEN_INPUT,
                    "description": "dsh-fs MCP server token",
                    "password": True,
                }
            ]
        return config
    if host == "claude":
        return {"mcpServers": {SERVER_NAME: {"type": "http", "url": url, **headers}}}
    return {"mcpServers": {SERVER_NAME: {"url": url, **headers}}}


def claude_http_command(url: str, authorization: str) -> str:
    """The Claude Code command that adds the HTTP server at `url` with that header."""
    header = f"Authorization: {authorization}"
    return shlex.join(
        ["claude", "mcp", "add", "--transport", "http", SERVER_NAME, url, "--header", header]
    )


def inspector_http_command(url: str, authorization: str) -> str:
    """The MCP Inspector command (its CLI mode) that lists the tools of the server at `url`."""
    header = f"Authorization: {authorization}"
    inspector = ["npx", INSPECTOR, "--cli", url, "--transport", "http"]
    return shlex.join([*inspector, "--header", header, "--method", "tools/list"])
