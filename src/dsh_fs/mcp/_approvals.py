"""Asking an MCP client to approve a change (SPEC §11.2), by elicitation.

What both servers share: the form (a boolean ``approve``, an optional ``note``), the message
(the proposal's diff, bounded: a longer one is cut and points at the review page), reading
the client's answer (anything malformed is no answer: `FS_NOT_APPROVED`, never an internal
error), and the progress a waiting call reports so the client keeps it alive. Each server
supplies how the ``elicitation/create`` request is sent and its answer awaited.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeAlias

import anyio

from dsh_fs.runtime import ProgressReporter
from dsh_fs.tools import Approval, Approver, Proposal

__all__ = [
    "APPROVE_SCHEMA",
    "MESSAGE_LIMIT",
    "WAIT_PROGRESS_SECONDS",
    "Elicit",
    "approval_of",
    "elicitation_params",
    "eliciting",
]

MESSAGE_LIMIT: Final = 16 * 1024
"""The most UTF-8 bytes of diff an elicitation message carries; past it the diff is cut at
a line and the message says where the whole of it is (the review page)."""

WAIT_PROGRESS_SECONDS: Final = 5.0
"""How often, at most, a call waiting for an answer reports progress (seconds waited of the
timeout), so a client whose request timeout progress resets keeps the call alive; a short
timeout reports 20 times over it."""

APPROVE_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "approve": {
            "type": "boolean",
            "title": "Approve",
            "description": "Let this exact change land",
        },
        "note": {
            "type": "string",
            "title": "Note",
            "description": "Optional: what the agent should know (a rejection's reason)",
        },
    },
    "required": ["approve"],
}
"""The form the client shows: flat, primitive fields only, as elicitation requires."""

Elicit: TypeAlias = Callable[[dict[str, Any]], Awaitable[object]]
"""Sends ``elicitation/create`` with these params and returns the client's result (any
JSON; None or an exception's absence of a result: no answer)."""


def elicitation_params(proposal: Proposal) -> dict[str, Any]:
    """The ``elicitation/create`` params (form mode) for `proposal`."""
    paths = ", ".join(proposal.paths)
    head = f"{proposal.tool} wants to change {paths}. Approve this exact change?\n\n"
    return {
        "mode": "form",
        "message": head + _bounded(proposal.diff),
        "requestedSchema": APPROVE_SCHEMA,
    }


def _bounded(diff: str) -> str:
    data = diff.encode("utf-8", "surrogatepass")
    if len(data) <= MESSAGE_LIMIT:
        return diff
    cut = data[:MESSAGE_LIMIT].decode("utf-8", "ignore")
    cut = cut[: cut.rfind("\n") + 1]
    left = diff.count("\n") - cut.count("\n")
    return (
        cut + f"… the diff goes on for {left} more lines ({len(data)} bytes in all); the "
        "whole of it is on the review page (dsh-fs review)\n"
    )


def approval_of(result: object) -> Approval | None:
    """The client's answer: ``accept`` with a boolean ``approve`` (and a string ``note`` or
    none) is the person's answer, ``decline`` a rejection; anything else (``cancel``, a
    malformed form) is no answer."""
    if not isinstance(result, dict):
        return None
    action = result.get("action")
    if action == "decline":
        return Approval(approved=False, by="elicitation")
    if action != "accept":
        return None
    content = result.get("content")
    if not isinstance(content, dict):
        return None
    approve, note = content.get("approve"), content.get("note")
    if not isinstance(approve, bool) or (note is not None and not isinstance(note, str)):
        return None
    return Approval(approved=approve, note=note or None, by="elicitation")


def eliciting(elicit: Elicit, progress: ProgressReporter | None, timeout: float) -> Approver:
    """The approver of one call: asks the client by `elicit`, reporting progress while it
    waits (the gate bounds the wait by `timeout`)."""

    async def ask(proposal: Proposal) -> Approval | None:
        answer: object = None
        async with anyio.create_task_group() as waiting:
            if progress is not None:
                waiting.start_soon(
                    _heartbeat, progress, timeout, min(WAIT_PROGRESS_SECONDS, timeout / 20)
                )
            try:
                answer = await elicit(elicitation_params(proposal))
            finally:
                waiting.cancel_scope.cancel()
        return approval_of(answer)

    return ask


async def _heartbeat(progress: ProgressReporter, total: float, every: float) -> None:
    """Report the seconds waited of `total`, `every` so many seconds (the gate, not this
    task, ends the wait)."""
    started = anyio.current_time()
    while True:
        await anyio.sleep(every)
        waited = anyio.current_time() - started
        await progress(min(waited, total), total, "waiting for the user's approval")
