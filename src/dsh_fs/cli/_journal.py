"""`dsh-fs log`, `diff`, `undo` and `journal prune` (SPEC §9), and the journal options the
commands and `dsh-fs mcp` share."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from typing import TYPE_CHECKING

import anyio

from ._usage import size_type

if TYPE_CHECKING:
    from dsh_fs.journal import JournalConfig
    from dsh_fs.workspace import Workspace

__all__ = [
    "JournalUsageError",
    "add_journal_commands",
    "add_journal_options",
    "journal_config",
    "journal_flags",
    "run_journal",
]

_AGE = re.compile(r"\A([0-9]+)([smhd])\Z")
_AGE_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_MAX_BYTES = 1 << 30
_MAX_AGE = 14 * 86400.0


class JournalUsageError(Exception):
    """A bad command line (exit 2)."""


def _age(value: str) -> float:
    match = _AGE.match(value.strip())
    if not match:
        raise argparse.ArgumentTypeError(f"{value!r} is not a duration like 12h or 14d")
    return float(int(match.group(1)) * _AGE_UNITS[match.group(2)])


def add_journal_options(command: argparse.ArgumentParser, *, switch: bool) -> None:
    """`--journal DIR`, the bounds, and (for `mcp`) `--no-journal`."""
    command.add_argument(
        "--journal",
        metavar="DIR",
        help="the journal store (one sub-store per root inside; default "
        "$XDG_STATE_HOME/dsh-fs/journal, else ~/.local/state/dsh-fs/journal)",
    )
    command.add_argument(
        "--journal-max-bytes",
        type=size_type("500M, 1G"),
        default=_MAX_BYTES,
        metavar="SIZE",
        help="most bytes of pre-images kept per root, oldest out first (default 1G)",
    )
    command.add_argument(
        "--journal-max-age",
        type=_age,
        default=_MAX_AGE,
        metavar="AGE",
        help="oldest pre-image kept (default 14d)",
    )
    if switch:
        command.add_argument(
            "--no-journal",
            action="store_true",
            help="do not record changes (no log, diff or undo of this server's changes)",
        )


def journal_config(args: argparse.Namespace) -> JournalConfig | None:
    """The journal the options ask for (None with `--no-journal`)."""
    from dsh_fs.journal import JournalConfig

    if getattr(args, "no_journal", False):
        return None
    return JournalConfig(
        location=os.path.abspath(args.journal) if args.journal else None,
        max_bytes=args.journal_max_bytes,
        max_age_seconds=args.journal_max_age,
    )


def journal_flags(args: argparse.Namespace) -> list[str]:
    """The journal options of `dsh-fs mcp` as given (for `--print-config`): the store, the
    switch and the bounds that differ from the defaults."""
    if getattr(args, "no_journal", False):
        return ["--no-journal"]
    flags = ["--journal", os.path.abspath(args.journal)] if args.journal else []
    if args.journal_max_bytes != _MAX_BYTES:
        flags += ["--journal-max-bytes", str(args.journal_max_bytes)]
    if args.journal_max_age != _MAX_AGE:
        seconds = int(args.journal_max_age)
        unit = next(u for u in ("d", "h", "m", "s") if seconds % _AGE_UNITS[u] == 0)
        flags += ["--journal-max-age", f"{seconds // _AGE_UNITS[unit]}{unit}"]
    return flags


def add_journal_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """The four commands."""
    log = commands.add_parser(
        "log",
        help="list the changes recorded for a folder, newest first",
        description="List the changes the journal recorded under ROOT (default: the current "
        "directory), newest first: id, time, session, tool, +/- lines, path.",
    )
    log.add_argument("paths", nargs="*", metavar="[ROOT] [PATH ...]")
    log.add_argument("--json", action="store_true", help="one JSON array of entries")
    log.add_argument("--session", help="only this session's changes")
    log.add_argument("--since", help="only changes since TIME (RFC 3339, or 90s, 10m, 2h, 1d)")
    add_journal_options(log, switch=False)

    diff = commands.add_parser(
        "diff",
        help="show one recorded change as a unified diff",
        description="Print the unified diff of change ID under ROOT.",
    )
    diff.add_argument("root", metavar="ROOT")
    diff.add_argument("id", metavar="ID")
    add_journal_options(diff, switch=False)

    undo = commands.add_parser(
        "undo",
        help="undo recorded changes, each only if its file is still as the change left it",
        description="Undo the chosen changes under ROOT, newest first. A file changed since "
        "(by you, another agent) is refused with the reason, and nothing of it changes. "
        "Exit 0: all undone; 1: something refused; 2: usage, or no such entry.",
    )
    undo.add_argument("root", metavar="ROOT")
    undo.add_argument("ids", nargs="*", metavar="ID")
    undo.add_argument("--session", help="every change of this session")
    undo.add_argument("--since", help="every change since TIME (RFC 3339, or 10m, 2h, 1d)")
    undo.add_argument(
        "--dry-run", action="store_true", help="say what would happen; change nothing"
    )
    undo.add_argument("--json", action="store_true", help="[{id, path, result, reason}]")
    add_journal_options(undo, switch=False)

    journal = commands.add_parser("journal", help="maintain the journal store")
    actions = journal.add_subparsers(dest="action", metavar="ACTION", required=True)
    prune = actions.add_parser(
        "prune", help="apply the bounds now (--journal-max-bytes, --journal-max-age)"
    )
    prune.add_argument("root", nargs="?", metavar="ROOT")
    add_journal_options(prune, switch=False)


def _workspace(root: str | None, args: argparse.Namespace) -> Workspace:
    from dsh_fs.workspace import Workspace

    path = os.path.abspath(root or os.getcwd())
    if not os.path.isdir(path):
        raise JournalUsageError(f"dsh-fs {args.command}: {path}: not a directory")
    try:
        return Workspace.sandbox(path, journal=journal_config(args))
    except ValueError as exc:
        raise JournalUsageError(f"dsh-fs {args.command}: {exc}") from exc


def _human(size: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024  # type: ignore[assignment]
    return str(size)


def run_journal(args: argparse.Namespace) -> int:
    """Run `log`, `diff`, `undo` or `journal prune`; returns the exit status."""
    if args.command == "log":
        positional = list(args.paths)
        root = None
        if positional and os.path.isdir(positional[0]):
            root = positional.pop(0)
        workspace = _workspace(root, args)
        return anyio.run(_log, workspace, args, positional)
    if args.command == "diff":
        return anyio.run(_diff, _workspace(args.root, args), args)
    if args.command == "undo":
        if not args.ids and args.session is None and args.since is None:
            raise JournalUsageError(
                "dsh-fs undo: name the changes to undo: IDs, --session S or --since TIME"
            )
        return anyio.run(_undo, _workspace(args.root, args), args)
    return anyio.run(_prune, _workspace(args.root, args))


async def _log(workspace: Workspace, args: argparse.Namespace, paths: list[str]) -> int:
    from dsh_fs.journal import parse_since

    async with workspace:
        journal = workspace.journal
        assert journal is not None
        if args.since is not None:
            try:
                parse_since(args.since)
            except ValueError as exc:
                raise JournalUsageError(f"dsh-fs log: {exc}") from exc
        wanted = [_relative(workspace, path) for path in paths]
        entries = await journal.entries(session=args.session, since=args.since, paths=wanted)
        _, problems = await journal.read()
        for problem in problems:
            print(f"dsh-fs log: damaged record {problem.name}: {problem.reason}", file=sys.stderr)
        if not entries:  # the store it read, so a store elsewhere is found (SPEC §9.1)
            print(
                f"dsh-fs log: no changes in the journal store {journal.location}", file=sys.stderr
            )
        if args.json:
            print(json.dumps([entry.to_json() for entry in entries], indent=2))
            return 0
        usage = await journal.usage()
        if not entries:
            print(f"No changes are recorded for {workspace.cwd} (journal: {usage.location}).")
            return 0
        print(
            f"{len(entries)} change{'s' if len(entries) != 1 else ''} shown; the journal at "
            f"{usage.location} holds {usage.entries} entries and {usage.pre_images} "
            f"pre-images ({_human(usage.bytes)})"
        )
        for entry in entries:
            if entry.directory or entry.link:
                counts = "dir" if entry.directory else "link"
            elif entry.added is not None and entry.removed is not None:
                counts = f"+{entry.added} -{entry.removed}"
            else:
                counts = "-"  # not text, too big to count, or a move (no content change)
            moved = f" (from {entry.source})" if entry.source else ""
            notes = "" if entry.undoable else "  [not undoable]"
            undoes = f"  [undoes {entry.undoes}]" if entry.undoes else ""
            print(
                f"{entry.id}  {entry.time[:19]}Z  {entry.session}  {entry.tool:<6} "
                f"{counts:>9}  {entry.rel}{moved}{undoes}{notes}"
            )
        return 0


def _relative(workspace: Workspace, path: str) -> str:
    root = workspace.cwd or os.getcwd()
    full = os.path.realpath(os.path.abspath(path))
    real_root = os.path.realpath(root)
    return os.path.relpath(full, real_root) if full.startswith(real_root) else path


async def _diff(workspace: Workspace, args: argparse.Namespace) -> int:
    async with workspace:
        journal = workspace.journal
        assert journal is not None
        try:
            sys.stdout.write(await journal.diff(args.id))
        except KeyError:
            print(
                f"dsh-fs diff: no change {args.id!r} is recorded for {workspace.cwd}",
                file=sys.stderr,
            )
            return 2
        return 0


async def _undo(workspace: Workspace, args: argparse.Namespace) -> int:
    from dsh_fs.journal import parse_since

    async with workspace:
        journal = workspace.journal
        assert journal is not None
        if args.since is not None:
            try:
                parse_since(args.since)
            except ValueError as exc:
                raise JournalUsageError(f"dsh-fs undo: {exc}") from exc
        try:
            results = await journal.undo(
                ids=args.ids,
                session=args.session,
                since=args.since,
                dry_run=args.dry_run,
                label="cli",
            )
        except KeyError as exc:
            print(
                f"dsh-fs undo: no change {exc.args[0]!r} is recorded for {workspace.cwd}",
                file=sys.stderr,
            )
            return 2
        if args.json:
            print(json.dumps([result.to_json() for result in results], indent=2))
        elif not results:
            print("Nothing to undo.")
        for result in results if not args.json else ():
            verb = "would undo" if args.dry_run and result.result == "undone" else result.result
            reason = f": {result.reason}" if result.reason else ""
            print(f"{verb} {result.id} {result.path}{reason}")
        return 1 if any(result.result == "refused" for result in results) else 0


async def _prune(workspace: Workspace) -> int:
    async with workspace:
        journal = workspace.journal
        assert journal is not None
        pruned = await journal.prune()
        usage = await journal.usage()
        print(
            f"Pruned {pruned} pre-image{'s' if pruned != 1 else ''}; the journal at "
            f"{usage.location} holds {usage.entries} entries ({_human(usage.bytes)})."
        )
        return 0
