"""The review page's pending approvals (SPEC §11.1, §11.2): what the servers of each served
ROOT wait for (read from the journal store's queue, `dsh_fs.providers.PendingApprovals`),
shown at the top of the page with the diff, and the person's Approve / Reject (optional
note), written back for the waiting call.

The page's other actions change files; these only answer: the waiting server publishes the
change, under the proposal's pin, or not.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

import anyio

from dsh_fs.journal import Journal
from dsh_fs.providers import PendingAnswer, PendingApprovals
from dsh_fs.tools import Proposal

__all__ = [
    "PendingItem",
    "answer_pending",
    "pending_items",
    "pending_rows",
    "pending_section",
    "pending_version",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class PendingItem:
    """One proposal waiting for a person, and the store whose queue holds it."""

    store: int
    """The index of the served ROOT's store."""
    proposal: Proposal
    """What waits."""


def _queue(journal: Journal) -> PendingApprovals | None:
    location = journal.location
    return PendingApprovals(location) if "://" not in location else None


async def pending_items(journals: Sequence[Journal]) -> list[PendingItem]:
    """Every proposal waiting in the stores' queues, store by store, oldest first."""

    def read() -> list[PendingItem]:
        items = []
        for index, journal in enumerate(journals):
            queue = _queue(journal)
            for text in queue.pending() if queue is not None else ():
                try:
                    items.append(PendingItem(store=index, proposal=Proposal.from_json(text)))
                except ValueError:
                    continue  # not a proposal: nothing to show or answer
        return items

    return await anyio.to_thread.run_sync(read)


async def answer_pending(
    journal: Journal, proposal_id: str, *, approved: bool, note: str | None
) -> str:
    """Answer the proposal waiting under `proposal_id`; the message the page shows."""
    queue = _queue(journal)
    if queue is None:
        return "Refused: this store has no pending approvals."
    try:
        answered = await anyio.to_thread.run_sync(
            queue.answer, proposal_id, PendingAnswer(approved=approved, note=note or None)
        )
    except ValueError:
        answered = False
    if not answered:
        return "Refused: that change no longer waits (answered, timed out or cancelled)."
    if approved:
        return "Approved: the change lands if its files are still as shown."
    return "Rejected: the agent is told, with your note."


def pending_section(items: Sequence[PendingItem]) -> str:
    """The section at the top of the page (its id lets the page's script refresh it)."""
    return f'<section id="pending" aria-label="Pending approvals">{pending_rows(items)}</section>'


def pending_rows(items: Sequence[PendingItem]) -> str:
    """The section's content: a heading and one entry per waiting proposal (empty when
    nothing waits)."""
    if not items:
        return ""
    parts = [f"<h2>Pending approvals ({len(items)})</h2>"]
    for item in items:
        proposal = item.proposal
        paths = ", ".join(f"<code>{_e(path)}</code>" for path in proposal.paths)
        ident = _e(proposal.id)
        parts.append(
            f'<article class="pending" id="pending-{ident}" data-store="{item.store}">'
            f"<h3>{_e(proposal.tool)} by {_e(proposal.session)}: {paths}</h3>"
            f'<pre class="pending-diff">{_e(proposal.diff)}</pre>'
            f'<label>Note <input type="text" class="approval-note" name="note" '
            f'aria-label="Note for {ident}"></label> '
            f'<button type="button" data-action="approve" data-store="{item.store}" '
            f'data-id="{ident}">Approve</button> '
            f'<button type="button" data-action="reject" data-store="{item.store}" '
            f'data-id="{ident}">Reject</button>'
            "</article>"
        )
    return "".join(parts)


def pending_version(items: Sequence[PendingItem]) -> str:
    """What changes whenever a proposal starts or stops waiting (the page polls it)."""
    return ",".join(item.proposal.id for item in items)


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)
