"""`dsh-fs review`: the journal in a browser (SPEC §11.1). Reads the stores `log` reads
(the first ROOT's, then every other root's sub-store, its changes inside the ROOTs), binds
loopback (unless ``--allow-remote``), prints the URL with a new token and opens a browser
(unless ``--no-open``)."""

from __future__ import annotations

import argparse
import os
import secrets
import sys
import threading
import webbrowser
from typing import TYPE_CHECKING

from ._journal import _close, _journals, add_journal_options, journal_config
from ._remote import is_url, open_remote
from ._running import run_until_interrupted
from ._usage import UsageError

if TYPE_CHECKING:
    from dsh_fs.journal import Journal

__all__ = ["add_review_command", "run_review"]


def add_review_command(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """The ``review`` command."""
    review = commands.add_parser(
        "review",
        help="see and undo the recorded changes in a browser",
        description="Serve a page over the journal of each ROOT (default: the current "
        "directory): every agent session, newest first, its changes with their diffs, and "
        "buttons that undo a session, a change or one hunk (each the guarded undo of "
        "'dsh-fs undo'). Prints the page's URL (with a token made for this run) and opens it.",
    )
    review.add_argument("roots", nargs="*", metavar="ROOT")
    review.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default: %(default)s)"
    )
    review.add_argument("--port", type=int, default=0, help="port to bind (default: 0, a free one)")
    review.add_argument("--no-open", action="store_true", help="print the URL; open no browser")
    review.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow an address other machines can reach (the token is still required)",
    )
    add_journal_options(review, switch=False)


def run_review(args: argparse.Namespace) -> int:
    """Serve the page until interrupted; returns the exit status.

    Raises:
        UsageError: a ROOT is not a folder, a store can't be opened, or the address can't
            be bound or is not allowed.
    """
    from dsh_fs.mcp.http import bind_socket, is_loopback
    from dsh_fs.review import Review, ReviewSource, review_url, serve_review
    from dsh_fs.workspace import Workspace

    if not 0 <= args.port <= 65535:
        raise UsageError(f"dsh-fs review: --port {args.port} is out of range")
    roots = args.roots or [os.getcwd()]
    if any(is_url(root) for root in roots):
        if len(roots) > 1:
            url = next(root for root in roots if is_url(root))
            raise UsageError(
                f"dsh-fs review: {url}: a remote ROOT is reviewed alone; name only one ROOT"
            )
        # A remote root's journal is on its storage: the page shows every replica's
        # changes, from any machine (SPEC §14).
        paths = list(roots)
        workspace = open_remote("review", roots[0], policy=False, journal=journal_config(args))
    else:
        paths = [os.path.abspath(root) for root in roots]
        for path in paths:
            if not os.path.isdir(path):
                raise UsageError(f"dsh-fs review: {path}: not a directory")
        try:
            # One workspace over every ROOT, as `log` opens it: the first ROOT's store, then
            # every other root's sub-store in the same directory (a server with several
            # ROOTs records under its first), their changes shown inside the served ROOTs.
            workspace = Workspace.sandbox(paths[0], *paths[1:], journal=journal_config(args))
        except ValueError as exc:
            raise UsageError(f"dsh-fs review: {exc}") from exc
    journals = _journals(workspace)
    served = tuple(workspace.fs.roots)
    sources = [
        ReviewSource(
            root=str(workspace.cwd) if index == 0 else _root_of(journal),
            journal=journal,
            inside=() if index == 0 else served,
        )
        for index, journal in enumerate(journals)
    ]
    try:
        sock = bind_socket(args.host, args.port)
    except OSError as exc:
        raise UsageError(
            f"dsh-fs review: cannot listen on {args.host}:{args.port}: {exc.strerror}"
        ) from None
    token = secrets.token_urlsafe(32)
    with sock:
        bound = sock.getsockname()[0]
        if not is_loopback(bound) and not args.allow_remote:
            raise UsageError(
                f"dsh-fs review: {bound} is not a loopback address, so other machines could "
                "reach the page; pass --allow-remote to mean it"
            )
        url = review_url(sock, token)

        def ready() -> None:
            stores = ", ".join(source.journal.location for source in sources[:1])
            print(f"dsh-fs review: journal {stores}", file=sys.stderr)
            print(f"dsh-fs review: open {url}", file=sys.stderr, flush=True)
            if not args.no_open:
                # A browser may take its time to start: the server doesn't wait for it.
                threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()

        async def serve() -> None:
            async with workspace:
                await serve_review(
                    Review(sources, roots=paths),
                    sock,
                    token=token,
                    allow_remote=args.allow_remote,
                    on_ready=ready,
                )

        try:
            run_until_interrupted(serve)
        finally:
            _close(journals)
    return 0


def _root_of(journal: Journal) -> str:
    """The root another sub-store records (its location, should it not say)."""
    root = getattr(journal.store, "root", None)
    return root if isinstance(root, str) else journal.location
