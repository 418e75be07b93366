"""Pending approvals shared through the journal's local store (SPEC §11.1, §11.2).

A server whose client cannot be asked by elicitation puts each proposal waiting for a
person here; `dsh-fs review` (another process, reading the same store) shows it at the top
of the page, and its Approve / Reject writes the answer here; the waiting call reads it.

Layout: ``<journal location>/approvals/<the root's sub-store name>/`` (0700), beside the
root's sub-store (never inside it: the store's listing takes every name there for a record),
holds ``<id>.json`` (the proposal, written whole by a rename) and, once answered,
``<id>.answer`` (``{"approved", "note"}``). The waiting call removes both when it ends, for
whatever reason (answer, timeout, cancellation): nothing is left of a call no longer waiting.
The waiting call looks for the answer every `POLL_SECONDS`.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from dataclasses import dataclass
from typing import Final

import anyio

__all__ = ["POLL_SECONDS", "PendingAnswer", "PendingApprovals"]

POLL_SECONDS: Final = 0.25
"""How often a waiting call looks for its answer."""

_ID_CHARS: Final = frozenset("0123456789abcdef")


@dataclass(frozen=True, slots=True, kw_only=True)
class PendingAnswer:
    """The person's answer to a pending proposal, as the page wrote it."""

    approved: bool
    """Whether the change may land."""
    note: str | None = None
    """What the person said; None without a note."""


class PendingApprovals:
    """The pending approvals of one root's journal (see the module).

    Args:
        store_location: The root's sub-store (`LocalJournalStore.location`).
    """

    def __init__(self, store_location: str) -> None:
        base, name = os.path.split(store_location.rstrip("/"))
        self.directory = os.path.join(base, "approvals", name)
        """Where the pending proposals and their answers are."""

    def _path(self, proposal_id: str, suffix: str) -> str:
        if not proposal_id or not set(proposal_id) <= _ID_CHARS:
            raise ValueError(f"not a proposal id: {proposal_id!r}")
        return os.path.join(self.directory, proposal_id + suffix)

    def _write(self, path: str, text: str) -> None:
        os.makedirs(self.directory, mode=0o700, exist_ok=True)
        staged = f"{path}.{secrets.token_hex(4)}.tmp"
        with open(staged, "x", encoding="utf-8") as file:
            file.write(text)
        os.replace(staged, path)  # whole or not at all: a reader never sees half of it

    async def ask(self, proposal_id: str, proposal_json: str) -> PendingAnswer | None:
        """Put the proposal on the page and wait for the person's answer (the caller bounds
        the wait); None for an answer that is not one. The entry is gone when this returns
        or is cancelled."""
        pending = self._path(proposal_id, ".json")
        answer = self._path(proposal_id, ".answer")
        try:
            await anyio.to_thread.run_sync(self._write, pending, proposal_json)
            while True:
                found = await anyio.to_thread.run_sync(_read, answer)
                if found is not None:
                    return _approval(found)
                await anyio.sleep(POLL_SECONDS)
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(_remove, pending, answer)

    def pending(self) -> list[str]:
        """The JSON of the proposals waiting now, oldest first (an unreadable one is left
        out)."""
        try:
            names = os.listdir(self.directory)
        except OSError:
            return []
        found = []
        for name in names:
            if not name.endswith(".json"):
                continue
            path = os.path.join(self.directory, name)
            try:
                made = os.stat(path).st_mtime_ns
            except OSError:
                continue
            text = _read(path)
            if text is not None:
                found.append((made, text))
        return [text for _, text in sorted(found)]

    def answer(self, proposal_id: str, approval: PendingAnswer) -> bool:
        """Give the person's answer to the proposal waiting under `proposal_id`; False when
        none waits (answered, timed out or cancelled meanwhile)."""
        if not os.path.exists(self._path(proposal_id, ".json")):
            return False
        payload = {"approved": approval.approved, "note": approval.note}
        self._write(self._path(proposal_id, ".answer"), json.dumps(payload))
        return True


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as file:
            return file.read()
    except (OSError, UnicodeDecodeError):
        return None


def _remove(*paths: str) -> None:
    for path in paths:
        with contextlib.suppress(OSError):
            os.unlink(path)


def _approval(text: str) -> PendingAnswer | None:
    """The answer file's approval; None for anything malformed (no answer)."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("approved"), bool):
        return None
    note = data.get("note")
    return PendingAnswer(
        approved=data["approved"], note=note if isinstance(note, str) and note else None
    )
