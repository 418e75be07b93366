"""The review page's HTML, rendered on the server. File names, session labels and diff lines
are chosen by models: every one of them passes `_e` (HTML-escaped, quotes included) on its
way into the page, whether as text or inside an attribute. Pure: values in, text out."""

from __future__ import annotations

import html
from collections.abc import Sequence
from urllib.parse import urlencode

from dsh_fs.fs import JournalEntry

from ._diff_view import CHUNK_ROWS, DiffRow, DiffView
from ._sessions import ChangeSetView, ChangeView, SessionSummary, StoreSnapshot, grouped

__all__ = [
    "change_items",
    "damaged_section",
    "diff_chunk",
    "document",
    "page_nav",
    "refusal_page",
    "session_body",
    "session_facts",
    "session_rows",
    "sessions_body",
]


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _href(path: str, token: str, **params: object) -> str:
    """A link to `path` with the token (escaped for an attribute)."""
    query = urlencode({"token": token, **{k: str(v) for k, v in params.items()}})
    return _e(f"{path}?{query}")


def _time(stamp: str) -> str:
    """An RFC 3339 time as ``<time>``: the date and the second, UTC."""
    shown = stamp[:19].replace("T", " ") if len(stamp) >= 19 else stamp
    return f'<time datetime="{_e(stamp)}">{_e(shown)}</time>'


def _counts(added: int | None, removed: int | None) -> str:
    if added is None or removed is None:
        return '<span class="counts">–</span>'
    return (
        f'<span class="counts"><span class="plus">+{added}</span> '
        f'<span class="minus">−{removed}</span></span>'
    )


def document(*, title: str, token: str, roots: Sequence[str], body: str) -> str:
    """A whole page: the header (the served ROOTs, the live indicator, the status line the
    actions report in) around `body`."""
    served = "".join(f"<li><code>{_e(root)}</code></li>" for root in roots)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="dsh-fs-token" content="{_e(token)}">'
        f"<title>{_e(title)} · dsh-fs review</title>"
        '<link rel="stylesheet" href="/static/review.css">'
        '<script src="/static/review.js" defer></script>'
        "</head><body>"
        '<header><h1><a href="' + _href("/", token) + '">dsh-fs review</a></h1>'
        f'<ul class="roots" aria-label="Served folders">{served}</ul>'
        '<p class="live" id="live" aria-live="off">live</p></header>'
        '<div id="status" role="status" aria-live="polite"></div>'
        f"<main>{body}</main></body></html>\n"
    )


def refusal_page(status: int, reason: str) -> str:
    """The page a refused request gets (no token, a wrong one): the reason only."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{status} · dsh-fs review</title></head><body>"
        f"<h1>dsh-fs review: refused</h1><p>{_e(reason)}</p></body></html>\n"
    )


def damaged_section(snapshots: Sequence[StoreSnapshot]) -> str:
    """The damaged records of `snapshots` (empty when there are none); the page replaces
    it in place as the stores change."""
    return f'<div id="damaged">{_problems(snapshots)}</div>'


def _problems(snapshots: Sequence[StoreSnapshot]) -> str:
    items = [
        f"<li><code>{_e(problem.name)}</code>: {_e(problem.reason)} "
        f"<span class=muted>(in {_e(snapshot.location)})</span></li>"
        for snapshot in snapshots
        for problem in snapshot.problems
    ]
    if not items:
        return ""
    return (
        '<section class="damaged" aria-labelledby="damaged-title">'
        '<h2 id="damaged-title">Damaged records (never opened nor applied)</h2>'
        f"<ul>{''.join(items)}</ul></section>"
    )


def session_rows(summaries: Sequence[SessionSummary], token: str) -> str:
    """The rows of the sessions table."""
    if not summaries:
        return '<tr><td colspan="7">No changes are recorded yet.</td></tr>'
    rows = []
    for summary in summaries:
        link = _href("/session", token, store=summary.store, label=summary.label)
        rows.append(
            f'<tr data-key="{_e(summary.store)}:{_e(summary.label)}">'
            f'<th scope="row"><a href="{link}">{_e(summary.label)}</a></th>'
            f"<td>{_time(summary.first)}</td><td>{_time(summary.last)}</td>"
            f"<td>{summary.files}</td><td>{_counts(summary.added, summary.removed)}</td>"
            f"<td>{summary.in_force} of {summary.changes}</td>"
            f"<td>{_session_button(summary.store, summary.label)}</td></tr>"
        )
    return "".join(rows)


def _session_button(store: int, label: str) -> str:
    return (
        f'<button type="button" class="act" data-action="undo-session" data-store="{store}" '
        f'data-label="{_e(label)}" aria-label="Undo session {_e(label)}">Undo session</button>'
    )


def sessions_body(
    summaries: Sequence[SessionSummary],
    snapshots: Sequence[StoreSnapshot],
    *,
    token: str,
    page: int,
    pages: int,
) -> str:
    """The list of sessions (one page of it), newest first, and the damaged records."""
    return (
        '<h2 id="sessions-title">Sessions, newest first</h2>'
        f'<table class="sessions" aria-labelledby="sessions-title" data-page="{page}">'
        "<thead><tr><th scope=col>Session</th><th scope=col>First change</th>"
        "<th scope=col>Last change</th><th scope=col>Files</th><th scope=col>Lines</th>"
        "<th scope=col>In force</th><th scope=col>Actions</th></tr></thead>"
        f'<tbody id="sessions-body">{session_rows(summaries, token)}</tbody></table>'
        f'<nav class="pages" id="pages" aria-label="Pages">{page_nav(token, page, pages)}</nav>'
        + damaged_section(snapshots)
    )


def page_nav(token: str, page: int, pages: int) -> str:
    """The links to the newer and older pages of sessions, and where this one is."""
    nav = []
    if page > 1:
        nav.append(f'<a rel="prev" href="{_href("/", token, page=page - 1)}">Newer sessions</a>')
    nav.append(f"<span>Page {page} of {pages}</span>")
    if page < pages:
        nav.append(f'<a rel="next" href="{_href("/", token, page=page + 1)}">Older sessions</a>')
    return " ".join(nav)


def _status(change: ChangeView, token: str) -> str:
    entry, parts = change.entry, []
    if change.undone_by is not None:
        undo = change.undone_by
        link = _href("/session", token, store=change.store, label=undo.session)
        parts.append(
            f'<span class="undone-by">undone by <a href="{link}#change-{change.store}-'
            f'{_e(undo.id)}">{_e(undo.id)}</a> ({_e(undo.session)}, {_time(undo.time)})</span>'
        )
    if entry.undoes is not None:
        parts.append(f'<span class="undoes">undoes {_e(entry.undoes)}</span>')
    if not entry.undoable:
        parts.append('<span class="pruned">pre-image pruned: not undoable</span>')
    return f'<span class="state">{" ".join(parts)}</span>' if parts else ""


def _change_head(change: ChangeView, token: str, in_set: bool = False) -> str:
    entry = change.entry
    moved = ""
    if entry.source:
        moved = f' <span class="from">from <code>{_e(entry.source)}</code></span>'
    if entry.directory or entry.link:
        counts = f'<span class="counts">{"directory" if entry.directory else "link"}</span>'
    else:
        counts = _counts(entry.added, entry.removed)
    # A change of a set is undone with its set, all or none: it has no button of its own.
    button = (
        ""
        if in_set
        else f' <button type="button" class="act" data-action="undo-change" '
        f'data-store="{change.store}" data-id="{_e(entry.id)}" '
        f'aria-label="Undo change {_e(entry.id)} to {_e(entry.rel)}">Undo change</button>'
    )
    return (
        f'<div class="change-head">{_time(entry.time)} <span class="tool">{_e(entry.tool)}</span> '
        f'<code class="path">{_e(entry.rel)}</code>{moved} {counts} {_status(change, token)}'
        f"{button}</div>"
    )


def _change_item(change: ChangeView, token: str, in_set: bool = False) -> str:
    entry = change.entry
    anchor = f"{change.store}-{_e(entry.id)}"
    state = " undone" if change.undone_by is not None else ""
    return (
        f'<li class="change{state}" id="change-{anchor}" data-store="{change.store}" '
        f'data-id="{_e(entry.id)}">{_change_head(change, token, in_set)}'
        f'<button type="button" class="toggle" aria-expanded="false" aria-controls="diff-{anchor}"'
        f' data-store="{change.store}" data-id="{_e(entry.id)}">Show diff</button>'
        f'<div class="diff" id="diff-{anchor}" hidden></div></li>'
    )


def _damaged_item(entry: JournalEntry, error: Exception) -> str:
    return (
        f'<li class="change damaged" data-id="{_e(getattr(entry, "id", "?"))}">'
        f"damaged entry {_e(getattr(entry, 'id', '?'))}: {_e(type(error).__name__)}</li>"
    )


def _set_item(changes: ChangeSetView, token: str) -> str:
    """A change set as one change: its files (each with its diff), one button that undoes
    the set, all or none."""
    group, store = changes.group, changes.store
    state = " undone" if changes.undone else ""
    files = len(changes.changes)
    entries = [change.entry for change in changes.changes]
    if any(entry.added is None or entry.removed is None for entry in entries):
        counts = _counts(None, None)
    else:
        counts = _counts(sum(e.added or 0 for e in entries), sum(e.removed or 0 for e in entries))
    return (
        f'<li class="change set{state}" id="set-{store}-{_e(group)}" data-store="{store}" '
        f'data-group="{_e(group)}"><div class="change-head">{_time(entries[0].time)} '
        f'<span class="tool">change set</span> <code class="path">{_e(group)}</code> '
        f"{files} file{'s' if files != 1 else ''} {counts}"
        f"{' <span class=state>undone</span>' if changes.undone else ''} "
        f'<button type="button" class="act" data-action="undo-change" data-store="{store}" '
        f'data-id="{_e(group)}" aria-label="Undo change set {_e(group)} ({files} files)">'
        f'Undo set</button></div><ol class="set-files">'
        + "".join(_one(change, token, in_set=True) for change in changes.changes)
        + "</ol></li>"
    )


def _one(change: ChangeView, token: str, in_set: bool = False) -> str:
    """A change's list item; an entry that can't be shown (a tampered record with
    impossible fields) is listed as damaged."""
    try:
        return _change_item(change, token, in_set)
    except (TypeError, ValueError, AttributeError) as error:
        return _damaged_item(change.entry, error)


def change_items(changes: Sequence[ChangeView], token: str) -> str:
    """The list items of a session's changes, in order, a change set's changes as one item
    (SPEC §13); an entry that can't be shown is listed as damaged."""
    return "".join(
        _set_item(item, token) if isinstance(item, ChangeSetView) else _one(item, token)
        for item in grouped(changes)
    )


def session_facts(snapshot: StoreSnapshot, summary: SessionSummary | None) -> str:
    """What a session did, in one sentence."""
    if summary is None:
        return "<p>This session has no changes recorded (any more).</p>"
    return (
        f"<p>{summary.changes} change{'s' if summary.changes != 1 else ''} to "
        f"{summary.files} file{'s' if summary.files != 1 else ''}, "
        f"{_counts(summary.added, summary.removed)}, {summary.in_force} in force; "
        f"from {_time(summary.first)} to {_time(summary.last)}, "
        f"in <code>{_e(snapshot.root)}</code>.</p>"
    )


def session_body(
    snapshot: StoreSnapshot,
    summary: SessionSummary | None,
    label: str,
    changes: Sequence[ChangeView],
    token: str,
) -> str:
    """A session's page: what it did, its changes in order, the button that undoes it."""
    return (
        f'<p><a href="{_href("/", token)}">← All sessions</a></p>'
        f'<h2>Session <span class="label">{_e(label)}</span></h2>'
        f'<div id="session-facts">{session_facts(snapshot, summary)}</div>'
        f"<p>{_session_button(snapshot.index, label)}</p>"
        f'<ol class="changes" id="changes" data-store="{snapshot.index}" '
        f'data-label="{_e(label)}">{change_items(changes, token)}</ol>'
        + damaged_section([snapshot])
    )


def _row(row: DiffRow, store: int, entry_id: str) -> str:
    if row.kind == "hunk":
        return (
            f'<tr class="hunk"><td class="ln" colspan="2">hunk {row.hunk}</td>'
            f"<td><code>{_e(row.text)}</code> "
            f'<button type="button" class="act" data-action="revert-hunk" data-store="{store}" '
            f'data-id="{_e(entry_id)}" data-hunk="{row.hunk}" '
            f'aria-label="Revert hunk {row.hunk} of change {_e(entry_id)}">'
            f"Revert hunk {row.hunk}</button></td></tr>"
        )
    if row.kind in ("note", "marker"):
        return f'<tr class="{row.kind}"><td colspan="2"></td><td>{_e(row.text)}</td></tr>'
    sign = {"added": "+", "removed": "-", "context": " "}[row.kind]
    old = "" if row.old is None else str(row.old)
    new = "" if row.new is None else str(row.new)
    return (
        f'<tr class="{row.kind}"><td class="ln">{old}</td><td class="ln">{new}</td>'
        f'<td class="code" data-sign="{sign}">{_e(row.text)}</td></tr>'
    )


def diff_chunk(view: DiffView, number: int, store: int, entry_id: str) -> str:
    """Chunk `number` of a diff as a ``<tbody>``, then, if more follows, a button that
    loads the next (the page also presses it when it scrolls into view)."""
    rows = "".join(_row(row, store, entry_id) for row in view.chunk(number))
    if number == 0 and not view.count:
        rows = '<tr class="note"><td colspan="2"></td><td>(no content changed)</td></tr>'
    more = ""
    if number + 1 < view.chunks:
        first = (number + 1) * CHUNK_ROWS + 1
        last = min(view.count, (number + 2) * CHUNK_ROWS)
        more = (
            f'<tbody class="more"><tr><td colspan="3"><button type="button" class="more" '
            f'data-store="{store}" data-id="{_e(entry_id)}" data-chunk="{number + 1}">'
            f"Show rows {first}–{last} of {view.count}</button></td></tr></tbody>"
        )
    return f"<tbody>{rows}</tbody>{more}"
