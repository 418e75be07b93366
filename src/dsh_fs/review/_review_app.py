"""The review page's ASGI app (SPEC §11.1): pages and fragments to read (GET), one action
endpoint that undoes (POST), and the guard in front of both.

The guard is the HTTP MCP server's: the same allowed ``Host``/``Origin`` values
(`dsh_fs.mcp.http.http_security`) checked by the SDK's `TransportSecurityMiddleware`,
then the token, compared in constant time. A page is opened from the URL the command
printed (the token in its query); the page's script sends the token in a header. An action
needs all of it and more: POST only, JSON only (a cross-site form can't send it, and a
cross-site script is stopped by the preflight), an ``Origin`` that is this server's, and the
token in the header, never in the URL. Nothing changes state on a GET.
"""

from __future__ import annotations

import hmac
import inspect
import math
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any, Final

import anyio
from anyio import to_thread
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from dsh_fs.fs import JournalEntry
from dsh_fs.journal import Journal, UndoResult

from ._approvals import (
    PendingItem,
    answer_pending,
    pending_items,
    pending_rows,
    pending_section,
    pending_version,
)
from ._diff_view import DiffView, parse_diff
from ._html import (
    change_items,
    damaged_section,
    diff_chunk,
    document,
    page_nav,
    refusal_page,
    session_body,
    session_facts,
    session_rows,
    sessions_body,
)
from ._sessions import SessionSummary, StoreSnapshot, session_changes, sessions

__all__ = ["TOKEN_HEADER", "Review", "ReviewSource", "review_app"]

TOKEN_HEADER: Final = "X-Dsh-Fs-Token"
"""The header the page's script sends the token in."""

PAGE_SIZE: Final = 50
"""Sessions on one page of the list."""

_FRESH: Final = 0.5
"""Seconds a reading of the stores is reused (every open tab polls; one reading serves
them all)."""

_SECURITY_HEADERS: Final = [
    # The page runs only its own script: an injected inline script or handler can't run,
    # whatever got past the escaping.
    (
        b"content-security-policy",
        b"default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        b"img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    ),
    (b"referrer-policy", b"no-referrer"),  # the token in the URL never leaves in a Referer
    (b"x-content-type-options", b"nosniff"),
    (b"cache-control", b"no-store"),
]

_ASSETS: Final = {"/static/review.js": "text/javascript", "/static/review.css": "text/css"}


@dataclass(frozen=True, slots=True, kw_only=True)
class ReviewSource:
    """One served ROOT and its journal."""

    root: str
    """The folder (as given, absolute)."""
    journal: Journal
    """Its journal (the store the servers of that folder write)."""
    inside: tuple[str, ...] = ()
    """The served roots its changes are shown (and undone) inside, as `log` and `undo` take
    another root's sub-store (SPEC §9.1); empty: every change of the store, and its damaged
    records."""

    def shows(self, entry: JournalEntry) -> bool:
        """Whether `entry` is shown: a change inside the served roots (a move's either
        side), or any change of a store shown whole."""
        if not self.inside:
            return True
        roots = tuple(root.rstrip("/") + "/" for root in self.inside)
        return any(
            path is not None and (path + "/").startswith(roots)
            for path in (entry.path, entry.source)
        )


class Review:
    """What the page reads and does: the stores' entries (read at most every half second,
    whoever asks), the diffs (a few kept parsed), the actions (one at a time).

    Args:
        sources: The served ROOTs with their journals, in the order given (then the other
            roots' sub-stores `log` reads too).
        roots: The served ROOTs as the page names them (default: the sources' roots).
    """

    def __init__(
        self, sources: Sequence[ReviewSource], *, roots: Sequence[str] | None = None
    ) -> None:
        self.sources = tuple(sources)
        self._roots = list(roots) if roots is not None else None
        self._snapshots: tuple[StoreSnapshot, ...] = ()
        self._read_at = -math.inf
        self._dropped = 0
        self._reading = anyio.Lock()
        self._acting = anyio.Lock()
        self._diffs: OrderedDict[tuple[int, str, str], DiffView] = OrderedDict()
        self._summed: tuple[str, list[SessionSummary]] | None = None

    @property
    def roots(self) -> list[str]:
        """The served ROOTs."""
        if self._roots is not None:
            return list(self._roots)
        return [source.root for source in self.sources]

    async def snapshots(self, *, fresh: bool = False) -> tuple[StoreSnapshot, ...]:
        """Every store as read within the last half second (now, with `fresh`)."""
        async with self._reading:
            if fresh or time.monotonic() - self._read_at > _FRESH:
                dropped = self._dropped
                read = []
                for index, source in enumerate(self.sources):
                    entries, problems = await source.journal.read()
                    read.append(
                        StoreSnapshot(
                            index=index,
                            root=source.root,
                            location=source.journal.location,
                            entries=tuple(e for e in entries if source.shows(e)),
                            # Another root's sub-store: its damage is that root's (as `log`).
                            problems=tuple(problems) if not source.inside else (),
                        )
                    )
                self._snapshots = tuple(read)
                # An action that ended while this reading ran may have written after the
                # reading passed its store: reused, it would hide the action's entries (the
                # page's refresh right after the action among them) for the next half second.
                self._read_at = time.monotonic() if self._dropped == dropped else -math.inf
            return self._snapshots

    async def summaries(self) -> list[SessionSummary]:
        """Every session of every store, newest first (summed up again only when a store
        changed: every open tab asks, and 10,000 entries take a while to sum)."""
        snapshots = await self.snapshots()
        version = "/".join(snapshot.fingerprint for snapshot in snapshots)
        if self._summed is None or self._summed[0] != version:
            self._summed = (version, sessions(snapshots))
        return self._summed[1]

    async def version(self) -> str:
        """A token that changes whenever a store does, or a pending approval comes or goes
        (the page polls it)."""
        stores = "/".join(snapshot.fingerprint for snapshot in await self.snapshots())
        return f"{stores}|{pending_version(await self.pending())}"

    async def pending(self) -> list[PendingItem]:
        """The proposals waiting for an approval in the stores' queues (SPEC §11.2)."""
        return await pending_items([source.journal for source in self.sources])

    async def diff(self, store: int, entry_id: str) -> DiffView:
        """The parsed diff of one change (a few are kept: the page loads a large one in
        chunks, one request each).

        Raises:
            KeyError: no such entry.
        """
        # The last reading will do to tell the diff's cached rows apart: each chunk of a
        # large diff is a request, and reading a large store again for each costs more than
        # the chunk.
        snapshots = self._snapshots or await self.snapshots()
        key = (store, entry_id, snapshots[store].fingerprint)
        view = self._diffs.get(key)
        if view is None:
            text = await self.sources[store].journal.diff(entry_id)
            view = await to_thread.run_sync(parse_diff, text)  # the event loop keeps serving
            self._diffs[key] = view
            while len(self._diffs) > 8:
                self._diffs.popitem(last=False)
        self._diffs.move_to_end(key)
        return view

    async def act(self, action: str, store: int, arguments: dict[str, Any]) -> dict[str, Any]:
        """Run one action (``undo-session``, ``undo-change``, ``revert-hunk``) as the CLI
        would, journaled under the label ``review``; returns ``{message, results}``. One
        action runs at a time here; the journal's guards settle races with other processes
        (a second undo of a change is refused: already undone)."""
        source = self.sources[store]
        journal = source.journal
        if action in ("approve", "reject"):
            # An answer changes no file here: the waiting server publishes, or not.
            note = arguments.get("note")
            message = await answer_pending(
                journal,
                arguments["id"],
                approved=action == "approve",
                note=note if isinstance(note, str) else None,
            )
            return {"message": message, "results": []}
        async with self._acting:
            try:
                if action == "undo-session":
                    ids = await _session_in_force(source, arguments["label"])
                    results = await journal.undo(ids=ids, label="review") if ids else []
                elif action == "undo-change":
                    results = await journal.undo(ids=[arguments["id"]], label="review")
                else:
                    reverted = await _revert_hunk(journal, arguments["id"], arguments["hunk"])
                    if isinstance(reverted, str):
                        return {"message": reverted, "results": []}
                    results = reverted
            except KeyError as exc:
                return {
                    "message": f"Refused: no change {exc.args[0]} is recorded any more "
                    "(pruned or removed from the journal); nothing changed.",
                    "results": [],
                }
            except ValueError as exc:
                return {"message": f"Refused: {exc}; nothing changed.", "results": []}
            finally:
                # The page shows the action's entries at once: the last reading is not reused,
                # nor is one still running (it may have read the store before the action).
                self._read_at = -math.inf
                self._dropped += 1
        return {"message": _summary(results), "results": [r.to_json() for r in results]}


async def _session_in_force(source: ReviewSource, label: str) -> list[str]:
    """The changes an undo of session `label` takes back (the §9.1 selection): its changes
    still in force, not undos themselves, read now. The label matches exactly: the CLI's
    prefix rule would also take a session whose client named itself ``<label>-x``."""
    entries, _ = await source.journal.read()
    undone = {entry.undoes for entry in entries if entry.undoes is not None}
    return [
        entry.id
        for entry in entries
        if entry.session == label
        and entry.undoes is None
        and entry.id not in undone
        and source.shows(entry)
    ]


async def _revert_hunk(journal: Journal, entry_id: str, hunk: int) -> list[UndoResult] | str:
    """`Journal.undo(ids=[id], hunks=[n])`, or why this build can't (the journal without
    the hunk revert of SPEC §9.1)."""
    if "hunks" not in inspect.signature(journal.undo).parameters:
        return "Refused: this dsh-fs can't revert a single hunk yet; nothing changed."
    undo: Any = journal.undo
    results: list[UndoResult] = await undo(ids=[entry_id], hunks=[hunk], label="review")
    return results


def _summary(results: Sequence[UndoResult]) -> str:
    """One line for the status region: what was undone, what was refused and why."""
    if not results:
        return "Nothing to undo: every change selected is already undone."
    parts = []
    for result in results:
        hunks = getattr(result, "hunks", None) or []
        notes = [
            f"hunk {h['n']} {h['result']}" + (f" ({h['reason']})" if h.get("reason") else "")
            for h in (item if isinstance(item, dict) else _as_dict(item) for item in hunks)
        ]
        detail = f": {result.reason}" if result.reason else ""
        extra = f" [{'; '.join(notes)}]" if notes else ""
        parts.append(f"{result.result} {result.path}{detail}{extra}")
    undone = sum(1 for result in results if result.result == "undone")
    head = f"{undone} of {len(results)} undone"
    return f"{head}. " + "; ".join(parts)


def _as_dict(item: object) -> dict[str, Any]:
    to_json = getattr(item, "to_json", None)
    if callable(to_json):
        value = to_json()
        if isinstance(value, dict):
            return value
    return {
        "n": getattr(item, "n", "?"),
        "result": getattr(item, "result", "?"),
        "reason": getattr(item, "reason", None),
    }


class ReviewGuard:
    """An ASGI app that lets a request through to `app` only with an allowed ``Host`` (and
    ``Origin``, when sent; always, for a POST) and the token; adds the security headers to
    every answer."""

    __slots__ = ("_app", "_security", "_token")

    def __init__(self, app: ASGIApp, *, security: TransportSecuritySettings, token: str) -> None:
        self._app = app
        self._security = TransportSecurityMiddleware(security)
        self._token = token.encode("utf-8")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {
                    **message,
                    "headers": [*message.get("headers", ()), *_SECURITY_HEADERS],
                }
            await send(message)

        request = Request(scope, receive)
        post = scope["method"] == "POST"
        refusal = await self._security.validate_request(request, is_post=post)
        if refusal is None and post and not request.headers.get("origin"):
            # Browsers send Origin with every POST: one without it is not the page's.
            refusal = Response("An action needs an Origin header", status_code=403)
        public = scope["path"] in _ASSETS or scope["path"] == "/favicon.ico"
        if refusal is None and not public and not self._valid(request, post):
            refusal = HTMLResponse(
                refusal_page(
                    401,
                    "This page needs the link with its token that 'dsh-fs review' printed.",
                ),
                status_code=401,
            )
        if refusal is not None:
            await refusal(scope, receive, secured)
            return
        await self._app(scope, receive, secured)

    def _valid(self, request: Request, post: bool) -> bool:
        """Whether the request carries the token: in the header, or (to open a page, never
        for an action) in the query."""
        given = request.headers.get(TOKEN_HEADER)
        if given is None and not post:
            given = request.query_params.get("token")
        if given is None:
            return False
        return hmac.compare_digest(given.encode("utf-8", "surrogateescape"), self._token)


def _summary_of(
    summaries: Sequence[SessionSummary], snapshot: StoreSnapshot, label: str
) -> SessionSummary | None:
    return next((s for s in summaries if s.store == snapshot.index and s.label == label), None)


def _int(value: str | None, default: int) -> int:
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default


def review_app(review: Review, *, security: TransportSecuritySettings, token: str) -> ASGIApp:
    """The guarded app serving `review`.

    Args:
        review: The stores and what the page does with them.
        security: The allowed ``Host``/``Origin`` values (`dsh_fs.mcp.http.http_security`).
        token: What every request must carry.
    """

    def bad(reason: str) -> JSONResponse:
        return JSONResponse({"error": reason}, status_code=400)

    def store_of(request: Request) -> int | None:
        store = _int(request.query_params.get("store"), -1)
        return store if 0 <= store < len(review.sources) else None

    async def page_list(page: int) -> tuple[list[SessionSummary], int, int]:
        summaries = await review.summaries()
        pages = max(1, -(-len(summaries) // PAGE_SIZE))
        page = min(max(page, 1), pages)
        return summaries[(page - 1) * PAGE_SIZE : page * PAGE_SIZE], page, pages

    async def home(request: Request) -> Response:
        shown, page, pages = await page_list(_int(request.query_params.get("page"), 1))
        body = sessions_body(shown, await review.snapshots(), token=token, page=page, pages=pages)
        body = pending_section(await review.pending()) + body
        return HTMLResponse(document(title="Sessions", token=token, roots=review.roots, body=body))

    async def session(request: Request) -> Response:
        store = store_of(request)
        label = request.query_params.get("label")
        if store is None or label is None:
            return HTMLResponse(refusal_page(404, "No such session."), status_code=404)
        snapshot = (await review.snapshots())[store]
        changes = session_changes(snapshot, label)
        summary = _summary_of(await review.summaries(), snapshot, label)
        body = session_body(snapshot, summary, label, changes, token)
        title = f"Session {label}"
        return HTMLResponse(document(title=title, token=token, roots=review.roots, body=body))

    async def rows(request: Request) -> Response:
        shown, _, _ = await page_list(_int(request.query_params.get("page"), 1))
        return HTMLResponse(session_rows(shown, token))

    async def listing(request: Request) -> Response:
        # What the list's live update replaces: the rows, the pages (more sessions make
        # more pages) and the damaged records.
        shown, page, pages = await page_list(_int(request.query_params.get("page"), 1))
        return JSONResponse(
            {
                "rows": session_rows(shown, token),
                "pages": page_nav(token, page, pages),
                "page": page,
                "damaged": damaged_section(await review.snapshots()),
            }
        )

    async def changes(request: Request) -> Response:
        store = store_of(request)
        label = request.query_params.get("label")
        if store is None or label is None:
            return bad("name a store and a session label")
        snapshot = (await review.snapshots())[store]
        return JSONResponse(
            {
                "facts": session_facts(
                    snapshot, _summary_of(await review.summaries(), snapshot, label)
                ),
                "items": change_items(session_changes(snapshot, label), token),
                "damaged": damaged_section([snapshot]),
            }
        )

    async def version(request: Request) -> Response:
        return JSONResponse({"version": await review.version()})

    async def pending(request: Request) -> Response:
        return HTMLResponse(pending_rows(await review.pending()))

    async def diff(request: Request) -> Response:
        store = store_of(request)
        entry_id = request.query_params.get("id", "")
        if store is None or not entry_id:
            return bad("name a store and a change")
        try:
            view = await review.diff(store, entry_id)
        except KeyError:
            return JSONResponse(
                {"error": f"no change {entry_id} is recorded any more"}, status_code=404
            )
        number = _int(request.query_params.get("chunk"), 0)
        return JSONResponse(
            {
                "old": view.old_name,
                "new": view.new_name,
                "hunks": view.hunks,
                "rows": view.count,
                "html": diff_chunk(view, number, store, entry_id),
            }
        )

    async def action(request: Request) -> Response:
        try:
            payload = await request.json()
        except ValueError:
            return bad("the body is not JSON")
        if not isinstance(payload, dict):
            return bad("the body is not a JSON object")
        kind = payload.get("action")
        store = payload.get("store")
        if not isinstance(store, int) or not 0 <= store < len(review.sources):
            return bad("no such store")
        needs = {
            "undo-session": ("label",),
            "undo-change": ("id",),
            "revert-hunk": ("id",),
            "approve": ("id",),
            "reject": ("id",),
        }
        if kind not in needs:
            return bad("action is undo-session, undo-change, revert-hunk, approve or reject")
        for name in needs[kind]:
            if not isinstance(payload.get(name), str) or not payload[name]:
                return bad(f"{kind} needs {name}")
        hunk = payload.get("hunk")
        if kind == "revert-hunk" and (not isinstance(hunk, int) or hunk < 1):
            return bad("revert-hunk needs hunk (a number from 1)")
        return JSONResponse(await review.act(kind, store, payload))

    static = resources.files("dsh_fs.review").joinpath("static")
    assets = {
        path: static.joinpath(path.rsplit("/", 1)[1]).read_text(encoding="utf-8")
        for path in _ASSETS
    }

    async def asset(request: Request) -> Response:
        path = request.url.path
        return Response(assets[path], media_type=_ASSETS[path])

    app = Starlette(
        routes=[
            Route("/", home),
            Route("/session", session),
            Route("/fragment/sessions", rows),
            Route("/fragment/list", listing),
            Route("/fragment/changes", changes),
            Route("/fragment/pending", pending),
            Route("/api/version", version),
            Route("/api/diff", diff),
            Route("/api/action", action, methods=["POST"]),
            *(Route(path, asset) for path in _ASSETS),
            Route("/favicon.ico", lambda request: Response(status_code=204)),
        ]
    )
    return ReviewGuard(app, security=security, token=token)
