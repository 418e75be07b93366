"""`dsh-fs`: the command line (``mcp``, ``schema``, the journal's commands, ``review``,
``demo``).

Argument errors are one line on stderr and exit status 2, never a traceback. Heavy
imports (the MCP SDK, uvicorn) happen only in the subcommand that needs them.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shlex
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, NoReturn

import anyio

from dsh_fs._version import __version__

from ._client_roots import client_roots_mode
from ._config import HOSTS, host_config, launcher, paste_hint, pin_journal, store_line
from ._journal import (
    JournalUsageError,
    add_journal_commands,
    add_journal_options,
    journal_config,
    journal_flags,
    run_journal,
)
from ._observations import DEFAULT_TTL, duration_type, observation_ledger
from ._plugins import load_plugin
from ._remote import open_remote, remote_root
from ._review_command import add_review_command, run_review
from ._running import run_until_interrupted
from ._usage import UsageError, size_type

DEFAULT_APPROVE_TIMEOUT = 600.0
"""`--approve-timeout`'s default, in seconds (`dsh_fs.tools.DEFAULT_APPROVE_TIMEOUT`, not
imported: the tools are loaded only by the subcommand that serves them)."""

if TYPE_CHECKING:
    from dsh_fs.workspace import Workspace

__all__ = ["main"]

_LOG_LEVELS = ("debug", "info", "warning", "error")

_DEFAULT_MESSAGE_SIZE = 32 << 20
_DEFAULT_IMAGE_SIZE = 5 << 20
"""`dsh_fs.mcp`'s default (not imported here: the parser is built before any subcommand)."""


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (`UsageError`), not usage + exit."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message} (see '{self.prog} --help')")


_INTERMIXED = ("log", "diff", "undo")
"""Commands whose options may come anywhere among their positional arguments (SPEC §9:
``dsh-fs undo ws --journal j ID``)."""


def _parse(parser: _Parser, argv: list[str]) -> argparse.Namespace:
    """The command line parsed; a journal command's by its own parser, intermixed (argparse
    consumes a run of positionals once: an ID after an option was "unrecognized")."""
    if argv and argv[0] in _INTERMIXED:
        subparsers = next(
            action for action in parser._actions if isinstance(action, argparse._SubParsersAction)
        )
        args: argparse.Namespace = subparsers.choices[argv[0]].parse_intermixed_args(argv[1:])
        args.command = argv[0]
        return args
    return parser.parse_args(argv)


def _build_parser() -> _Parser:
    parser = _Parser(
        prog="dsh-fs",
        description="Safe file tools for LLM agents (read, write, edit, glob, grep, list, "
        "move, delete, mkdir): "
        "edits and overwrites are refused when the file changed since the agent read it.",
        epilog="Run 'dsh-fs COMMAND --help' for a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"dsh-fs {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    mcp = commands.add_parser(
        "mcp",
        help="serve the file tools over MCP (stdio, or streamable HTTP)",
        description="Serve the file tools (by default read, write, edit, glob, grep, list, "
        "move, delete and mkdir) "
        "to an MCP client. Paths are fenced "
        "to the given folders (the sandbox); each client session owns its observations, so an "
        "edit is refused if the file changed since that session read it.",
        epilog="To add it to an MCP host, print its configuration entry with absolute paths, "
        "e.g. 'dsh-fs mcp --print-config claude /path/to/project', and paste it where the "
        "note on stderr says.",
    )
    mcp.add_argument(
        "roots",
        nargs="*",
        metavar="ROOT",
        help="folders to serve (default: the current directory); the first one is the base "
        "for relative paths. Or one storage URL (s3://bucket/prefix, any installed fsspec "
        "backend), its journal on the same storage; S3 settings from the AWS environment "
        "(AWS_ENDPOINT_URL, the credentials chain)",
    )
    mode = mcp.add_mutually_exclusive_group()
    mode.add_argument(
        "--read-only", action="store_true", help="refuse every write and edit (sandbox mode)"
    )
    mode.add_argument(
        "--full-access",
        action="store_true",
        help="UNSAFE: no sandbox fence; read and write anywhere this user can",
    )
    mcp.add_argument(
        "--read-anywhere",
        action="store_true",
        help="let read see files outside the roots (writes and edits stay fenced)",
    )
    mcp.add_argument(
        "--no-policy",
        action="store_true",
        help="UNSAFE for agents: no observation policy, so writes and edits need no prior read "
        "and stale edits are not refused",
    )
    mcp.add_argument(
        "--allow-placeholders",
        action="store_true",
        help="let a write or edit replace lines with a placeholder such as "
        "'// ... existing code ...' or '...[truncated]' (refused by default: FS_PLACEHOLDER)",
    )
    _add_tools_option(mcp)
    mcp.add_argument(
        "--deny",
        action="append",
        default=[],
        metavar="PATTERN",
        help="hide paths matching PATTERN (gitignore syntax, relative to each root; "
        "repeatable): no tool can read, find or change them",
    )
    mcp.add_argument(
        "--protect",
        action="append",
        default=[],
        metavar="PATTERN",
        help="keep paths matching PATTERN unchanged (gitignore syntax; repeatable): readable "
        "and findable, never written, moved or deleted (.git/ is protected by default)",
    )
    mcp.add_argument(
        "--no-default-rules",
        action="store_true",
        help="drop the default rule (protect .git/)",
    )
    mcp.add_argument(
        "--encoding",
        action="append",
        default=[],
        metavar="PATTERN=CODEC",
        help="read and edit files matching PATTERN (gitignore syntax, relative to each root; "
        "repeatable, the last match wins) in CODEC (a Python codec name: cp1252, gbk, "
        "shift_jis, utf-16-le, ...), byte for byte; BOMs are recognised without it",
    )
    mcp.add_argument(
        "--editorconfig",
        action="store_true",
        help="honour charset in .editorconfig files under the roots (on with any --encoding "
        "or --encoding-fallback; an --encoding rule wins)",
    )
    mcp.add_argument(
        "--encoding-fallback",
        default=None,
        metavar="CODEC[,CODEC...]",
        help="codecs to try, in order, for a file that is not valid UTF-8 and that no "
        "--encoding names (each only if the whole file round-trips through it)",
    )
    mcp.add_argument(
        "--approve",
        choices=("none", "destructive", "changes"),
        default="none",
        help="which changes wait for a person's approval (the MCP client by elicitation, "
        "else the review page): destructive = delete, move, a write over an existing file "
        "and any --approve-path; changes = every change (default: %(default)s)",
    )
    mcp.add_argument(
        "--approve-path",
        action="append",
        default=[],
        metavar="PATTERN",
        help="every change to a path matching PATTERN (gitignore syntax, relative to each "
        "root; repeatable) waits for an approval",
    )
    mcp.add_argument(
        "--approve-timeout",
        metavar="DURATION",
        type=duration_type,
        default=DEFAULT_APPROVE_TIMEOUT,
        help="how long a change waits for an approval, in seconds or with an s, m, h or d "
        "suffix; then it fails FS_NOT_APPROVED (default: 600s)",
    )
    mcp.add_argument(
        "--client-roots",
        choices=("strict", "off"),
        help="what the MCP roots a client sends do: by default roots that overlap the ROOTs "
        "narrow them and others leave them in force (with no ROOT, the client's roots are "
        "the fence); strict: only the overlap is served, none refusing every path; off: "
        "ignored",
    )
    mcp.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="MODULE:ATTR",
        help="also serve the tools of this plugin (a dsh_fs Plugin instance or class in an "
        "importable module; repeatable), e.g. count_lines:CountLinesPlugin",
    )
    mcp.add_argument(
        "--observations",
        metavar="URL",
        help="where the observation policy keeps who read what: 'memory' (default: this "
        "process) or redis://HOST:PORT/DB, a ledger every replica of a fleet shares; a replica "
        "that can't reach it refuses mutations and keeps serving reads",
    )
    mcp.add_argument(
        "--observation-ttl",
        metavar="DURATION",
        type=duration_type,
        default=DEFAULT_TTL,
        help="how long an observation lives, in seconds or with an s, m, h or d suffix "
        "(default: 24h)",
    )
    mcp.add_argument(
        "--http",
        metavar="HOST:PORT",
        help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio "
        "(HOST defaults to 127.0.0.1; PORT 0 picks a free port)",
    )
    mcp.add_argument(
        "--token-file",
        metavar="PATH",
        help="with --http: the bearer token clients must send is in PATH (default: "
        "$DSH_FS_MCP_TOKEN, else one generated and printed at start)",
    )
    mcp.add_argument(
        "--tokens",
        metavar="FILE",
        help="with --http: one agent per line, 'TOKEN NAME'; a request's token names its agent, "
        "and two agents never share observations",
    )
    mcp.add_argument(
        "--no-auth",
        action="store_true",
        help="with --http on a loopback address: accept requests without a token",
    )
    mcp.add_argument(
        "--allow-remote",
        action="store_true",
        help="with --http: allow an address other machines can reach (a token is required)",
    )
    mcp.add_argument(
        "--allowed-host",
        action="append",
        metavar="HOST",
        help="with --http: also accept requests whose Host header names HOST (HOST, "
        "HOST:PORT or HOST:*; repeatable); the bound address is always accepted",
    )
    mcp.add_argument(
        "--structured",
        action="store_true",
        help="also return each result's canonical value as structuredContent",
    )
    mcp.add_argument(
        "--max-message-size",
        metavar="SIZE",
        type=size_type("1048576, 512K, 32M", at_least=1024),
        default=_DEFAULT_MESSAGE_SIZE,
        help="largest message read over stdio, in bytes or with a K, M or G suffix (KiB, MiB, "
        "GiB); a longer one is refused without being read whole (default: 32M)",
    )
    mcp.add_argument(
        "--max-image-size",
        metavar="SIZE",
        type=size_type("1048576, 512K, 5M"),
        default=_DEFAULT_IMAGE_SIZE,
        help="largest image (PNG, JPEG, GIF, WebP) read returns, in bytes or with a K, M or G "
        "suffix; a larger one is refused (default: 5M)",
    )
    mcp.add_argument(
        "--log-level",
        choices=_LOG_LEVELS,
        default="warning",
        help="logging threshold; logs always go to stderr (default: %(default)s)",
    )
    mcp.add_argument(
        "--print-config",
        choices=HOSTS,
        metavar="HOST",
        help="print the JSON that makes HOST (claude, cursor or vscode) start this server "
        "with these options, by absolute paths, instead of serving",
    )

    schema = commands.add_parser(
        "schema",
        help="print the tool definitions as JSON",
        description="Print the tool definitions in one ecosystem's exact shape.",
    )
    schema.add_argument(
        "--format",
        choices=("openai", "anthropic", "mcp"),
        default="mcp",
        help="openai: Chat Completions 'tools'; anthropic: Messages 'tools'; "
        "mcp: tools/list 'tools' (default: %(default)s)",
    )
    _add_tools_option(schema)

    add_journal_options(mcp, switch=True)
    add_journal_commands(commands)
    add_review_command(commands)

    commands.add_parser(
        "demo",
        help="run a short agent session against the MCP server and print the transcript",
        description="Start 'dsh-fs mcp' on a temporary folder over stdio, drive it with the MCP "
        "client SDK and print what an agent sees: a read, an edit, a stale edit refused after "
        "another process changed the file, the recovery, and a write outside the workspace "
        "refused. Leaves nothing behind.",
    )
    return parser


def _add_tools_option(command: argparse.ArgumentParser) -> None:
    from dsh_fs.workspace import ALL_TOOLS

    command.add_argument(
        "--tools",
        metavar="NAMES",
        default=",".join(ALL_TOOLS),
        help="comma-separated tools to offer (default: %(default)s)",
    )


def _tools(command: str, value: str) -> tuple[str, ...]:
    from dsh_fs.workspace import ALL_TOOLS

    names = tuple(name.strip() for name in value.split(",") if name.strip())
    unknown = [name for name in names if name not in ALL_TOOLS]
    if unknown or not names:
        shown = ", ".join(unknown) if unknown else "(none)"
        raise UsageError(
            f"dsh-fs {command}: --tools: unknown tool {shown}; choose from {','.join(ALL_TOOLS)}"
        )
    return names


def _parse_http(value: str) -> tuple[str, int]:
    host, sep, port_text = value.rpartition(":")
    if not sep:
        host, port_text = "", value
    host = host.strip("[]") or "127.0.0.1"
    try:
        port = int(port_text)
    except ValueError:
        raise UsageError(f"dsh-fs mcp: --http: invalid port {port_text!r} in {value!r}") from None
    if not 0 <= port <= 65535:
        raise UsageError(f"dsh-fs mcp: --http: port {port} is out of range")
    return host, port


def _mcp_roots(args: argparse.Namespace) -> list[str]:
    url = remote_root(args)
    if url is not None:
        return [url]
    roots = [os.path.abspath(root) for root in (args.roots or [os.getcwd()])]
    for root in roots:
        if not os.path.exists(root):
            raise UsageError(f"dsh-fs mcp: {root}: does not exist")
        if not os.path.isdir(root):
            raise UsageError(f"dsh-fs mcp: {root}: not a directory")
        try:
            with os.scandir(root) as entries:
                next(entries, None)
        except PermissionError:
            # Refused now, not on every call the model makes: the host shows this line.
            raise UsageError(
                f"dsh-fs mcp: {root}: permission denied (this user cannot list the folder)"
            ) from None
    return roots


def _print_config(args: argparse.Namespace) -> int:
    if args.http is not None:
        from ._http import print_http_config

        serve = [*launcher(), "mcp", *_server_flags(args), *_mcp_roots(args)]
        return print_http_config(args, *_parse_http(args.http), serve=serve)
    command = [*launcher(), "mcp", *_server_flags(args), *_mcp_roots(args)]
    print(json.dumps(host_config(args.print_config, command), indent=2, ensure_ascii=False))
    print(paste_hint(args.print_config, command), file=sys.stderr)
    return 0


def _server_flags(args: argparse.Namespace) -> list[str]:
    """The flags of this command line that change what the server offers (not --http's)."""
    from dsh_fs.workspace import ALL_TOOLS

    flags = [
        flag
        for flag, on in (
            ("--read-only", args.read_only),
            ("--full-access", args.full_access),
            ("--read-anywhere", args.read_anywhere),
            ("--no-policy", args.no_policy),
            ("--allow-placeholders", args.allow_placeholders),
            ("--structured", args.structured),
            ("--no-default-rules", args.no_default_rules),
            ("--editorconfig", args.editorconfig),
        )
        if on
    ]
    if args.client_roots is not None:
        flags += ["--client-roots", args.client_roots]
    for pattern in args.deny:
        flags += ["--deny", pattern]
    for pattern in args.protect:
        flags += ["--protect", pattern]
    _encodings(args)  # an unknown codec fails here, not when the host starts the server
    for rule in args.encoding:
        flags += ["--encoding", rule]
    if args.encoding_fallback:
        flags += ["--encoding-fallback", args.encoding_fallback]
    if args.approve != "none":
        flags += ["--approve", args.approve]
    for pattern in args.approve_path:
        flags += ["--approve-path", pattern]
    if args.approve_timeout != DEFAULT_APPROVE_TIMEOUT:
        flags += ["--approve-timeout", f"{args.approve_timeout:g}"]
    if args.observations is not None:
        flags += ["--observations", args.observations]
    if args.observation_ttl != DEFAULT_TTL:
        flags += ["--observation-ttl", f"{args.observation_ttl:g}"]
    if args.max_message_size != _DEFAULT_MESSAGE_SIZE:
        flags += ["--max-message-size", str(args.max_message_size)]
    if args.max_image_size != _DEFAULT_IMAGE_SIZE:
        flags += ["--max-image-size", str(args.max_image_size)]
    if args.log_level != "warning":
        flags += ["--log-level", args.log_level]
    # A remote root's default store is on its storage, where the environment can't move it.
    journal = journal_flags(args)
    flags += journal if remote_root(args) is not None else pin_journal(journal)
    tools = _tools("mcp", args.tools)
    if tools != ALL_TOOLS:
        flags += ["--tools", ",".join(tools)]
    for spec in args.plugin:
        load_plugin(spec)  # a typo fails here, not when the host starts the server
        flags += ["--plugin", spec]
    return flags


def _encodings(args: argparse.Namespace) -> tuple[list[tuple[str, str]], tuple[str, ...]]:
    """``--encoding`` rules as (pattern, codec) pairs and ``--encoding-fallback``'s codecs.

    Raises:
        UsageError: a rule without ``=``, or an unknown codec (named).
    """
    from dsh_fs.fs import canonical_codec

    pairs: list[tuple[str, str]] = []
    for rule in args.encoding:
        pattern, sep, codec = rule.rpartition("=")
        if not sep or not pattern or not codec:
            raise UsageError(f"dsh-fs mcp: --encoding {rule!r}: expected PATTERN=CODEC")
        pairs.append((pattern, codec))
    fallback = tuple(c.strip() for c in (args.encoding_fallback or "").split(",") if c.strip())
    for codec in (*(codec for _, codec in pairs), *fallback):
        try:
            canonical_codec(codec)
        except ValueError as exc:
            raise UsageError(f"dsh-fs mcp: {exc}") from None
    return pairs, fallback


def _mcp_workspace(args: argparse.Namespace) -> Workspace:
    from dsh_fs.fs import Encodings, Rules
    from dsh_fs.workspace import Workspace

    url = remote_root(args)
    roots = _mcp_roots(args)
    mode: Literal["read-only", "workspace-write", "full-access"] = (
        "read-only" if args.read_only else "full-access" if args.full_access else "workspace-write"
    )
    plugins = [load_plugin(spec) for spec in args.plugin]
    encodings, fallback = _encodings(args)
    options: dict[str, Any] = {
        "policy": not args.no_policy,
        "tools": _tools("mcp", args.tools),
        "max_image_bytes": args.max_image_size,
        "rules": Rules(
            deny=tuple(args.deny),
            protect=tuple(args.protect),
            default_rules=not args.no_default_rules,
        ),
        "journal": journal_config(args),
        "encodings": Encodings(rules=encodings) if encodings else None,
        "encoding_fallback": fallback,
        "placeholders": not args.allow_placeholders,
        "observations": (
            None if args.no_policy else observation_ledger(args.observations, args.observation_ttl)
        ),
        "approve": args.approve,
        "approve_paths": tuple(args.approve_path),
        "approve_timeout": args.approve_timeout,
    }
    if url is not None:
        workspace = open_remote("mcp", url, **options)
    else:
        try:
            workspace = Workspace.sandbox(
                roots[0],
                *roots[1:],
                mode=mode,
                confine_reads=not (args.read_anywhere or args.full_access),
                editorconfig=args.editorconfig,
                **options,
            )
        except ValueError as exc:
            raise UsageError(f"dsh-fs mcp: {exc}") from exc
    for plugin in plugins:
        workspace.use(plugin, None)
    return workspace


def _run_mcp(args: argparse.Namespace) -> int:
    from ._http import check_http_flags

    check_http_flags(args)
    if args.print_config is not None:
        return _print_config(args)
    address = _parse_http(args.http) if args.http is not None else None
    logging.basicConfig(
        stream=sys.stderr,
        level=args.log_level.upper(),
        format="dsh-fs %(levelname)s %(name)s: %(message)s",
    )
    workspace = _mcp_workspace(args)
    # The store is fixed now, whatever environment the host gave: said where a person looks.
    store = workspace.journal.location if workspace.journal is not None else None
    print(store_line(store), file=sys.stderr, flush=True)
    if address is None:
        from dsh_fs.mcp import serve_stdio

        async def stdio() -> None:
            async with workspace:
                await serve_stdio(
                    workspace,
                    structured=args.structured,
                    max_message_size=args.max_message_size,
                    client_roots=client_roots_mode(args),
                )

        run_until_interrupted(stdio)
        return 0

    from ._http import run_http

    return run_http(args, workspace, *address)


def _run_schema(args: argparse.Namespace) -> int:
    from dsh_fs.workspace import Workspace

    workspace = Workspace.local(tools=_tools("schema", args.tools))
    tools: list[Any]
    if args.format == "openai":
        from dsh_fs.adapters import openai_tools

        tools = list(openai_tools(workspace))
    elif args.format == "anthropic":
        from dsh_fs.adapters import anthropic_tools

        tools = list(anthropic_tools(workspace))
    else:
        from dsh_fs.mcp import mcp_tools

        tools = [t.model_dump(by_alias=True, exclude_none=True) for t in mcp_tools(workspace)]
    anyio.run(workspace.aclose)
    print(json.dumps(tools, indent=2, ensure_ascii=False))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (2 for a bad command line)."""
    parser = _build_parser()
    try:
        args = _parse(parser, list(sys.argv[1:] if argv is None else argv))
        if args.command is None:
            parser.print_help()
            return 0
        if args.command == "mcp":
            return _run_mcp(args)
        if args.command == "schema":
            return _run_schema(args)
        if args.command in ("log", "diff", "undo", "journal"):
            return run_journal(args)
        if args.command == "review":
            return run_review(args)
        from ._demo import run_demo

        return run_demo()
    except (UsageError, JournalUsageError) as exc:
        print(exc, file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] not in ("mcp", "mcp_types", "uvicorn"):
            raise
        print(
            f"dsh-fs: this command needs the MCP SDK ({exc}); install it into this "
            f"environment with: {shlex.quote(sys.executable)} -m pip install 'mcp>=2.3,<3' "
            "(from a dsh-fs checkout, 'pip install .[mcp]' or 'make install' brings it too)",
            file=sys.stderr,
        )
        return 1
    except SystemExit as exc:  # --help and --version exit through argparse
        return exc.code if isinstance(exc.code, int) else 0
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`dsh-fs schema | head`): stop quietly, like other CLI tools.
        # Point stdout at devnull so the interpreter's final flush doesn't raise again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
