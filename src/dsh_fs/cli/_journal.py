"""`dsh-fs log`, `diff`, `undo` and `journal prune` (SPEC §9), and the journal options the
commands and `dsh-fs mcp` share."""

from __future__ import annotations

import argparse
import json
import os
import re
import stat
import sys
from typing import TYPE_CHECKING

import anyio

from ._remote import is_url, open_remote
from ._usage import size_type

if TYPE_CHECKING:
    from dsh_fs.fs import JournalEntry, JournalUsage
    from dsh_fs.journal import Journal, JournalConfig, UndoResult
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
        location=_location(args.journal) if args.journal else None,
        max_bytes=args.journal_max_bytes,
        max_age_seconds=args.journal_max_age,
    )


def _location(journal: str) -> str:
    """`--journal` as the store's location: a URL as given (a remote ROOT's store, on the
    same storage), a folder made absolute."""
    return journal if is_url(journal) else os.path.abspath(journal)


def journal_flags(args: argparse.Namespace) -> list[str]:
    """The journal options of `dsh-fs mcp` as given (for `--print-config`): the store, the
    switch and the bounds that differ from the defaults."""
    if getattr(args, "no_journal", False):
        return ["--no-journal"]
    flags = ["--journal", _location(args.journal)] if args.journal else []
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
    log.add_argument("paths", nargs="*", metavar="[ROOT ...] [PATH ...]")
    log.add_argument("--json", action="store_true", help="one JSON array of entries")
    log.add_argument("--session", help="only this session's changes")
    log.add_argument("--since", help="only changes since TIME (RFC 3339, or 90s, 10m, 2h, 1d)")
    add_journal_options(log, switch=False)

    diff = commands.add_parser(
        "diff",
        help="show one recorded change as a unified diff",
        description="Print the unified diff of change ID under ROOT (several ROOTs: the "
        "changes under any of them, as 'dsh-fs mcp' serves several).",
    )
    diff.add_argument("operands", nargs="+", metavar="ROOT [ROOT ...] ID")
    add_journal_options(diff, switch=False)

    undo = commands.add_parser(
        "undo",
        help="undo recorded changes, each only if its file is still as the change left it",
        description="Undo the chosen changes under ROOT (or several ROOTs), newest first. A "
        "file changed since (by you, another agent) is refused with the reason, and nothing "
        "of it changes. --session and --since put each file back as it was before the "
        "earliest chosen change still in force, and find nothing the second time. An ID "
        "may be a change set's GROUP_ID (edit_files): all its files, or none. "
        "Exit 0: all undone; 1: something refused; 2: usage, or no such entry.",
    )
    undo.add_argument("operands", nargs="+", metavar="ROOT [ROOT ...] [ID ...]")
    undo.add_argument("--session", help="every change of this session")
    undo.add_argument("--since", help="every change since TIME (RFC 3339, or 10m, 2h, 1d)")
    undo.add_argument(
        "--hunk",
        action="append",
        type=int,
        default=[],
        metavar="N",
        help="revert only hunk N of change ID (from 1, as 'dsh-fs diff' numbers them; "
        "repeatable), in the file as it is now",
    )
    undo.add_argument(
        "--merge",
        action="store_true",
        help="revert every hunk of change ID that is still as the change left it; the file "
        "keeps the others (each refused with the reason)",
    )
    undo.add_argument(
        "--dry-run", action="store_true", help="say what would happen; change nothing"
    )
    undo.add_argument(
        "--json",
        action="store_true",
        help="[{id, path, result, reason}] (and hunks: [{n, result, reason}] with --hunk or "
        "--merge)",
    )
    add_journal_options(undo, switch=False)

    journal = commands.add_parser("journal", help="maintain the journal store")
    actions = journal.add_subparsers(dest="action", metavar="ACTION", required=True)
    prune = actions.add_parser(
        "prune", help="apply the bounds now (--journal-max-bytes, --journal-max-age)"
    )
    prune.add_argument("root", nargs="?", metavar="ROOT")
    add_journal_options(prune, switch=False)


def _workspace(roots: list[str], args: argparse.Namespace) -> Workspace:
    """A sandbox over `roots` (default: the current directory) with the journal the options
    name."""
    from dsh_fs.workspace import Workspace

    if roots and is_url(roots[0]):
        # No policy: these commands read the journal and undo through it, never as a model.
        return open_remote(args.command, roots[0], policy=False, journal=journal_config(args))
    paths = [os.path.abspath(root) for root in roots] or [os.getcwd()]
    for path in paths:
        if not os.path.isdir(path):
            raise JournalUsageError(f"dsh-fs {args.command}: {path}: not a directory")
    try:
        return Workspace.sandbox(paths[0], *paths[1:], journal=journal_config(args))
    except ValueError as exc:
        raise JournalUsageError(f"dsh-fs {args.command}: {exc}") from exc


def _leading_roots(operands: list[str]) -> tuple[list[str], list[str]]:
    """The leading operands that are folders (each outside the ones before it: a folder
    inside a ROOT is a PATH), and the rest."""
    if operands and is_url(operands[0]):
        # A remote ROOT is served alone (as `dsh-fs mcp` serves it); the rest are PATHs or
        # IDs, relative to it.
        return operands[:1], operands[1:]
    roots: list[str] = []
    for index, operand in enumerate(operands):
        real = os.path.realpath(operand)
        inside = any(
            real == r or real.startswith(r.rstrip("/") + "/") for r in map(os.path.realpath, roots)
        )
        if not os.path.isdir(operand) or inside:
            return roots, operands[index:]
        roots.append(operand)
    return roots, []


def _check_since(args: argparse.Namespace, command: str) -> None:
    """Refuse a ``--since`` that does not parse, in the words of ``dsh-fs <command>``."""
    from dsh_fs.journal import parse_since

    if args.since is not None:
        try:
            parse_since(args.since)
        except ValueError as exc:
            raise JournalUsageError(f"dsh-fs {command}: {exc}") from exc


def _journals(workspace: Workspace) -> list[Journal]:
    """The workspace's journal, then the journal of every other root kept in the same store
    directory (a server with several ROOTs records under its first, one with client roots
    under the folder it started in): their entries count only inside the served roots."""
    from dsh_fs.journal import Journal
    from dsh_fs.providers import LocalJournalStore

    primary = workspace.journal
    assert primary is not None
    journals = [primary]
    if not isinstance(primary.store, LocalJournalStore):
        return journals  # a remote root's store is its own, on its storage
    base = os.path.dirname(primary.store.location)
    try:
        names = sorted(os.listdir(base))
    except OSError:
        return journals
    for name in names:
        sub = os.path.join(base, name)
        root = _sub_store_root(sub)
        if sub == primary.store.location or root is None:
            continue
        try:
            store = LocalJournalStore(base, root)
        except OSError:
            continue
        if store.location != sub:  # a root file that does not name its sub-store
            store.close()
            continue
        journals.append(
            Journal(
                workspace.fs,
                store,
                max_bytes=primary.max_bytes,
                max_age_seconds=primary.max_age_seconds,
            )
        )
    return journals


def _sub_store_root(sub: str) -> str | None:
    """The canonical root a sub-store records (its ``root`` file: a small regular file,
    never followed through a link), or None."""
    try:
        fd = os.open(os.path.join(sub, "root"), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > 64 * 1024:
            return None
        data = os.read(fd, 64 * 1024)
    except OSError:
        return None
    finally:
        os.close(fd)
    root = os.fsdecode(data.rstrip(b"\n"))
    return root if root.startswith("/") and "\0" not in root and "\n" not in root else None


def _close(journals: list[Journal]) -> None:
    """Close the stores `_journals` opened (the workspace closes its own)."""
    for journal in journals[1:]:
        journal.store.close()


def _listed(workspace: Workspace, entry: JournalEntry, primary: bool) -> bool:
    """Whether `entry`, read from the first ROOT's sub-store (`primary`) or another one,
    is listed: a change inside the ROOTs named. The first ROOT's own changes are those with
    a relative `rel` (whatever spelling of the ROOT the server was started with); a server
    with several ROOTs recorded the others' changes there too, absolute."""
    if primary and not entry.rel.startswith("/"):
        return True
    return _served(workspace, entry)


def _served(workspace: Workspace, entry: JournalEntry) -> bool:
    """Whether `entry` changed a file inside the workspace's roots."""
    roots = [root.rstrip("/") + "/" for root in workspace.fs.roots]
    return any(
        path is not None and (path + "/").startswith(tuple(roots))
        for path in (entry.path, entry.source)
    )


def _human(size: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024  # type: ignore[assignment]
    return str(size)


def run_journal(args: argparse.Namespace) -> int:
    """Run `log`, `diff`, `undo` or `journal prune`; returns the exit status."""
    if args.command == "log":
        roots, paths = _leading_roots(list(args.paths))
        return anyio.run(_log, _workspace(roots, args), args, paths)
    if args.command == "diff":
        if len(args.operands) < 2:
            raise JournalUsageError("dsh-fs diff: name a ROOT and the change's ID")
        args.id = args.operands[-1]
        return anyio.run(_diff, _workspace(args.operands[:-1], args), args)
    if args.command == "undo":
        roots, args.ids = _leading_roots(list(args.operands))
        if not roots:
            raise JournalUsageError(f"dsh-fs undo: {args.operands[0]}: not a directory")
        if not args.ids and args.session is None and args.since is None:
            raise JournalUsageError(
                "dsh-fs undo: name the changes to undo: IDs, --session S or --since TIME"
            )
        if (args.hunk or args.merge) and (
            len(args.ids) != 1 or args.session is not None or args.since is not None
        ):
            raise JournalUsageError(
                "dsh-fs undo: --hunk and --merge revert one change: name its ID"
            )
        return anyio.run(_undo, _workspace(roots, args), args)
    return anyio.run(_prune, _workspace([args.root] if args.root else [], args))


async def _log(workspace: Workspace, args: argparse.Namespace, paths: list[str]) -> int:
    from dsh_fs.journal import printable

    async with workspace:
        journal = workspace.journal
        assert journal is not None
        _check_since(args, "log")
        wanted = _wanted(workspace, paths)
        journals = _journals(workspace)
        recorded = 0  # the changes under the ROOTs, whatever the PATHs and options select
        usages: list[JournalUsage] = []  # of each sub-store a listed change comes from
        holders: list[JournalUsage] = []  # of each sub-store holding changes under the ROOTs
        try:
            entries: list[JournalEntry] = []
            for index, one in enumerate(journals):
                # Each sub-store read once: what the selection lists, and what it holds.
                every, problems = await one.read()
                found = await one.entries(
                    session=args.session, since=args.since, paths=wanted, entries=every
                )
                # Every sub-store, the first ROOT's too (a server with several ROOTs records
                # under its first), lists only the changes inside the ROOTs named.
                listed = [e for e in found if _listed(workspace, e, index == 0)]
                entries += listed
                if listed:
                    usages.append(await one.usage())
                held = sum(_listed(workspace, e, index == 0) for e in every)
                recorded += held
                if held:
                    holders.append(usages[-1] if listed else await one.usage())
                for problem in problems if index == 0 else ():
                    print(
                        f"dsh-fs log: damaged record {printable(problem.name)}: "
                        f"{printable(problem.reason)}",
                        file=sys.stderr,
                    )
        finally:
            _close(journals)
        entries.sort(key=lambda entry: entry.id, reverse=True)
        selected = _selected(args, paths)
        if not entries and (not recorded or not selected):
            # The store it read, so a store elsewhere is found (SPEC §9.1).
            print(
                f"dsh-fs log: no changes in the journal store {printable(journal.location)}",
                file=sys.stderr,
            )
        elif not entries:
            # The store holds changes under the ROOTs: "no changes" would send the user
            # looking for another store when only the selection matched none.
            print(
                f"dsh-fs log: no change matches {selected} in the journal store "
                f"{printable(_summed(holders, journal.location).location)} (it holds {recorded} "
                f"change{'s' if recorded != 1 else ''} under the ROOTs)",
                file=sys.stderr,
            )
        if args.json:
            print(json.dumps([entry.to_json() for entry in entries], indent=2))
            return 0
        if usages or holders:
            usage = _summed(usages or holders, journal.location)
        else:
            usage = await journal.usage()
        if not entries and recorded and selected:
            print(
                f"No change recorded for {printable(str(workspace.cwd))} matches {selected} "
                f"(journal: {printable(usage.location)})."
            )
            return 0
        if not entries:
            print(
                f"No changes are recorded for {printable(str(workspace.cwd))} "
                f"(journal: {printable(usage.location)})."
            )
            return 0
        print(
            f"{len(entries)} change{'s' if len(entries) != 1 else ''} shown; the journal at "
            f"{printable(usage.location)} holds {usage.entries} entries and "
            f"{usage.pre_images} pre-images ({_human(usage.bytes)})"
        )
        for entry in entries:
            if entry.directory or entry.link:
                counts = "dir" if entry.directory else "link"
            elif entry.added is not None and entry.removed is not None:
                counts = f"+{entry.added} -{entry.removed}"
            else:
                counts = "-"  # not text, too big to count, or a move (no content change)
            moved = f" (from {printable(entry.source)})" if entry.source else ""
            notes = "" if entry.undoable else "  [not undoable]"
            undoes = f"  [undoes {printable(entry.undoes)}]" if entry.undoes else ""
            group = f"  [set {printable(entry.group)}]" if entry.group else ""
            print(
                f"{printable(entry.id)}  {printable(entry.time[:19])}Z  "
                f"{printable(entry.session)}  {printable(entry.tool):<6} "
                f"{counts:>9}  {printable(_shown(workspace, entry))}{moved}{undoes}{group}"
                f"{notes}"
            )
        return 0


def _summed(usages: list[JournalUsage], primary: str) -> JournalUsage:
    """What the sub-stores the listed changes come from hold: the one's own usage, or for
    several (a server with several ROOTs, client roots) their sum, located at the store
    directory that holds them."""
    from dsh_fs.fs import JournalUsage

    if len(usages) == 1:
        return usages[0]
    return JournalUsage(
        location=f"{os.path.dirname(primary)} ({len(usages)} sub-stores)",
        entries=sum(u.entries for u in usages),
        pre_images=sum(u.pre_images for u in usages),
        bytes=sum(u.bytes for u in usages),
    )


def _shown(workspace: Workspace, entry: JournalEntry) -> str:
    """The entry's path as `log` lists it: relative to the first ROOT when inside it, else
    absolute (a change recorded under another root)."""
    root = (workspace.cwd or "").rstrip("/") + "/"
    if entry.path.startswith(root):
        return entry.path[len(root) :]
    return entry.rel if not os.path.isabs(entry.rel) and entry.path == entry.rel else entry.path


def _selected(args: argparse.Namespace, paths: list[str]) -> str:
    """What `log`'s PATHs and options select, in words (empty: everything)."""
    from dsh_fs.journal import printable

    parts = [f"PATH {printable(path)}" for path in paths]
    if args.session is not None:
        parts.append(f"--session {printable(args.session)}")
    if args.since is not None:
        parts.append(f"--since {printable(args.since)}")
    return ", ".join(parts)


def _wanted(workspace: Workspace, paths: list[str]) -> list[str]:
    """The PATHs of `log` as the entries may name them: relative to the first ROOT, and
    absolute (a change recorded under another root)."""
    if is_url(workspace.fs.roots[0]):
        return paths  # a remote root's PATHs: relative to it, or URLs under it
    relative = [_relative(workspace, path) for path in paths]
    # Also as absolute paths under the first ROOT: a change recorded in another ROOT's
    # sub-store (a server that served several) names its file by its absolute path.
    root = os.path.realpath(workspace.cwd or os.getcwd())
    under = [os.path.join(root, path) for path in relative if not os.path.isabs(path)]
    return relative + [os.path.abspath(p) for p in paths] + under


def _relative(workspace: Workspace, path: str) -> str:
    """`path` relative to the first ROOT when it lies inside it (a sibling whose name
    starts with the ROOT's, ``proj2`` beside ``proj``, does not), else as given."""
    root = workspace.cwd or os.getcwd()
    full = os.path.realpath(os.path.abspath(path))
    real_root = os.path.realpath(root)
    inside = full == real_root or full.startswith(real_root.rstrip("/") + "/")
    return os.path.relpath(full, real_root) if inside else path


async def _diff(workspace: Workspace, args: argparse.Namespace) -> int:
    async with workspace:
        journals = _journals(workspace)
        try:
            found = await _owner(workspace, journals, args.id)
            if isinstance(found, KeyError):
                print(_no_such("diff", found, workspace), file=sys.stderr)
                return 2
            owner, entry_id = found
            # Paths relative to the ROOT that holds the file (SPEC §9), also for a change
            # recorded under another root's store, whose `rel` is absolute.
            sys.stdout.write(await owner.diff(entry_id, roots=workspace.fs.roots))
        finally:
            _close(journals)
        return 0


async def _owner(
    workspace: Workspace,
    journals: list[Journal],
    entry_id: str,
    readings: list[list[JournalEntry]] | None = None,
) -> tuple[Journal, str] | KeyError:
    """The journal that holds the change `entry_id` names (inside the served roots) and the
    change's whole id (a change set's id as given), or why none does (no such change; a
    prefix too short, or naming several changes). `readings`: each journal's listed entries
    (`_listed`), when read already."""
    owners: list[tuple[Journal, str]] = []
    refusal: KeyError | None = None
    for index, journal in enumerate(journals):
        # Changes outside the served roots are not listed (a server with several ROOTs
        # records them under its first), so they neither name a change nor make a prefix
        # ambiguous.
        reading = (
            readings[index]
            if readings is not None
            else [e for e in (await journal.read())[0] if _listed(workspace, e, index == 0)]
        )
        try:
            entry = await journal.entry(entry_id, entries=reading)
        except KeyError as exc:
            refusal = exc if len(exc.args) > 1 else refusal
            continue
        owners.append((journal, entry_id if entry.group == entry_id else entry.id))
    if len(owners) == 1 and refusal is None:
        return owners[0]
    if len(owners) > 1:
        return KeyError(entry_id, f"{entry_id!r} names changes in {len(owners)} journals")
    return refusal or KeyError(entry_id)


def _no_such(command: str, exc: KeyError, workspace: Workspace) -> str:
    """The line for an id that names no entry (or too many)."""
    from dsh_fs.journal import printable

    if len(exc.args) > 1:
        return f"dsh-fs {command}: {printable(str(exc.args[1]))}"
    return (
        f"dsh-fs {command}: no change {printable(repr(exc.args[0]))} is recorded for "
        f"{printable(str(workspace.cwd))}"
    )


async def _undo(workspace: Workspace, args: argparse.Namespace) -> int:
    from dsh_fs.journal import printable

    async with workspace:
        journal = workspace.journal
        assert journal is not None
        _check_since(args, "undo")
        journals = _journals(workspace)
        try:
            results = await _undo_in(workspace, journals, args)
        except KeyError as exc:
            print(_no_such("undo", exc, workspace), file=sys.stderr)
            return 2
        except ValueError as exc:
            raise JournalUsageError(f"dsh-fs undo: {exc}") from exc
        finally:
            _close(journals)
        if args.json:
            print(json.dumps([result.to_json() for result in results], indent=2))
        elif not results:
            print("Nothing to undo.")
        for result in results if not args.json else ():
            verb = "would undo" if args.dry_run and result.result == "undone" else result.result
            reason = f": {printable(result.reason)}" if result.reason else ""
            print(f"{verb} {result.id} {printable(result.path)}{reason}")
            for hunk in result.hunks or ():
                outcome = hunk.result
                if args.dry_run and outcome == "reverted":
                    outcome = "would revert"
                why = f": {printable(hunk.reason)}" if hunk.reason else ""
                print(f"  hunk {hunk.n}: {outcome}{why}")
        refused = any(
            result.result == "refused"
            or any(hunk.result == "refused" for hunk in result.hunks or ())
            for result in results
        )
        return 1 if refused else 0


async def _undo_in(
    workspace: Workspace, journals: list[Journal], args: argparse.Namespace
) -> list[UndoResult]:
    """The undo the command asks for, in each journal that holds some of it: ids where they
    are, a selection in every journal, over the changes `log` lists (`_listed`).
    Each journal's store is read once: the ids are found, and every undo and refusal
    decided, from that one reading (issue 35).

    Raises:
        KeyError: an id names no change (or too many).
        ValueError: a bad selection or hunk.
    """
    stored = [await journal.read() for journal in journals]
    readings = [
        [entry for entry in entries if _listed(workspace, entry, index == 0)]
        for index, (entries, _) in enumerate(stored)
    ]
    by_journal: dict[int, list[str]] = {}
    for entry_id in args.ids:
        found = await _owner(workspace, journals, entry_id, readings)
        if isinstance(found, KeyError):
            raise found
        owner, whole = found
        # The whole id: the journal judges a prefix among all its entries again.
        by_journal.setdefault(journals.index(owner), []).append(whole)
    selection = args.session is not None or args.since is not None
    served = list(workspace.fs.roots)
    results: list[UndoResult] = []
    for index, journal in enumerate(journals):
        ids = by_journal.get(index, [])
        if not ids and not selection:
            continue
        # The ids and the selection in one undo: what the ids undo, the selection skips.
        results += await journal.undo(
            ids=ids,
            session=args.session,
            since=args.since,
            paths=() if index == 0 or not selection else served,
            dry_run=args.dry_run,
            label="cli",
            hunks=args.hunk,
            merge=args.merge,
            entries=readings[index],
            problems=stored[index][1],
        )
    return results


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
