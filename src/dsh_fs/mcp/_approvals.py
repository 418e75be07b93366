"""Asking an MCP client to approve a change (SPEC §11.2), by elicitation.

What both servers share: the form (a boolean ``approve``, an optional ``note``), the message
(the proposal's diff, bounded: a longer one is cut and points at the review page), reading
the client's answer (anything malformed is no answer: `FS_NOT_APPROVED`, never an internal
error), and the progress a waiting call reports so the client keeps it alive. Each server
supplies how the ``elicitation/create`` request is sent and its answer awaited.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeAlias

import anyio

from dsh_fs.runtime import ProgressReporter
from dsh_fs.tools import Approval, Approver, Proposal

__all__ = [
    "APPROVE_KEY",
    "APPROVE_SCHEMA",
    "MESSAGE_LIMIT",
    "WAIT_PROGRESS_SECONDS",
    "Elicit",
    "InputNeeded",
    "answering",
    "approval_of",
    "elicitation_params",
    "eliciting",
    "fingerprint",
]

APPROVE_KEY: Final = "dsh-fs/approve"
"""Key of the approval in a 2026-07-28 call's input requests and responses."""

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


class InputNeeded(BaseException):
    """Raised by `answering`'s approver when the 2026-07-28 client must be asked first: it
    leaves the call (a `BaseException`, which the runtime does not turn into a result)
    before anything is published, and the server answers with an input request."""

    def __init__(self, proposal: Proposal) -> None:
        super().__init__(proposal.id)
        self.proposal = proposal


def fingerprint(proposal: Proposal) -> str:
    """What the person is shown, pinned: the tool, and each change's action, paths, base
    version and content digest (not the proposal's id, which a retry computes afresh)."""
    shown = [proposal.tool] + [
        [c.action, c.path, c.source, c.base, c.digest] for c in proposal.changes
    ]
    return hashlib.sha256(json.dumps(shown).encode("utf-8", "surrogatepass")).hexdigest()


def answering(answer: object, state: str | None) -> Approver:
    """The approver of a 2026-07-28 call (SPEC §11.2: an input request of the call): the
    first call raises `InputNeeded`; its retry carries the client's `answer` and the
    request state, the `fingerprint` of the proposal shown. The answer applies only to a
    retry that proposes exactly that change; one whose file moved on is asked again."""

    async def ask(proposal: Proposal) -> Approval | None:
        if answer is None or state != fingerprint(proposal):
            raise InputNeeded(proposal)
        return approval_of(answer)

    return ask
