"""Pending approvals on the review page in a real headless browser (SPEC §11.1, §11.2): a
server whose client cannot be asked (no elicitation) puts the change on the page of the
store it writes, at the top with its diff; Approve (with a note) lets the waiting call
publish it, Reject tells the agent; the page's other checks apply (POST, token, Origin)."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from dsh_fs.runtime import ToolResult
from dsh_fs.workspace import Workspace

from .conftest import Served
from .test_review_browser import browser, page  # noqa: F401 - the fixtures

if TYPE_CHECKING:
    from playwright.sync_api import Page


def _agent_call(
    served: Served, name: str, arguments: Mapping[str, object], reads: str = "a.txt"
) -> tuple[threading.Thread, list[ToolResult]]:
    """An agent of its own server (approve=changes, no elicitation) making one call, which
    waits for the page's answer in a thread."""
    results: list[ToolResult] = []

    async def main() -> None:
        async with Workspace.sandbox(
            served.root, journal=served.journal, approve="changes", approve_timeout=60
        ) as ws:
            session = ws.session(label="agent")
            await session.call("read", {"file_path": reads})
            results.append(await session.call(name, dict(arguments)))

    thread = threading.Thread(target=anyio.run, args=(main,), daemon=True)
    thread.start()
    return thread, results


def test_a_pending_change_is_shown_with_its_diff_and_approving_it_lands_it(
    served: Served,
    page: Page,  # noqa: F811 - the fixture imported above
) -> None:
    (served.root / "a.txt").write_text("one\ntwo\n")
    edit = {"file_path": "a.txt", "old_string": "two", "new_string": "TWO"}
    thread, results = _agent_call(served, "edit", edit)
    page.goto(served.url)
    entry = page.locator("article.pending")
    entry.wait_for(timeout=60_000)  # the agent's server starts in a thread meanwhile
    assert "-two" in entry.locator("pre.pending-diff").inner_text()
    assert "+TWO" in entry.locator("pre.pending-diff").inner_text()
    assert (served.root / "a.txt").read_text() == "one\ntwo\n"
    entry.locator("input.approval-note").fill("ship it")
    entry.get_by_role("button", name="Approve").click()
    page.wait_for_selector("#status.done")
    thread.join(60)
    (result,) = results
    assert not result.is_error, result.text
    assert (served.root / "a.txt").read_text() == "one\nTWO\n"
    page.wait_for_selector("article.pending", state="detached")
    assert list(Path(served.journal).glob("approvals/*/*")) == []


def test_rejecting_a_pending_change_tells_the_agent_the_note(
    served: Served,
    page: Page,  # noqa: F811 - the fixture imported above
) -> None:
    (served.root / "a.txt").write_text("keep\n")
    thread, results = _agent_call(served, "delete", {"file_path": "a.txt"})
    page.goto(served.url)
    entry = page.locator("article.pending")
    entry.wait_for(timeout=60_000)  # the agent's server starts in a thread meanwhile
    entry.locator("input.approval-note").fill("still needed")
    entry.get_by_role("button", name="Reject").click()
    page.wait_for_selector("#status.done")
    thread.join(60)
    (result,) = results
    assert result.code == "FS_REJECTED"
    assert result.text.endswith(": still needed")
    assert (served.root / "a.txt").read_text() == "keep\n"


def test_a_note_being_typed_survives_another_proposal_arriving(
    served: Served,
    page: Page,  # noqa: F811 - the fixture imported above
) -> None:
    """The live refresh merges the pending entries by id: a second proposal arriving while
    the user types a note into the first adds an entry and leaves the first one (its note,
    its focus) alone, and the note typed is the one the agent hears."""
    (served.root / "a.txt").write_text("one\n")
    (served.root / "b.txt").write_text("two\n")
    first, first_results = _agent_call(
        served, "edit", {"file_path": "a.txt", "old_string": "one", "new_string": "ONE"}
    )
    page.goto(served.url)
    entries = page.locator("article.pending")
    entries.first.wait_for(timeout=60_000)  # the agent's server starts in a thread meanwhile
    note = entries.first.locator("input.approval-note")
    note.click()
    page.keyboard.type("half a thou")
    second, _ = _agent_call(served, "delete", {"file_path": "b.txt"}, reads="b.txt")
    page.wait_for_selector("h2:has-text('Pending approvals (2)')", timeout=60_000)
    assert entries.count() == 2
    # Still the same input, still focused: the user types on without clicking again.
    page.keyboard.type("ght")
    assert note.input_value() == "half a thought"
    assert note.evaluate("element => element === document.activeElement")
    entries.first.get_by_role("button", name="Reject").click()
    page.wait_for_selector("#status.done")
    first.join(60)
    (result,) = first_results
    assert result.code == "FS_REJECTED"
    assert result.text.endswith(": half a thought")
    assert (served.root / "a.txt").read_text() == "one\n"
    page.wait_for_selector("h2:has-text('Pending approvals (1)')", timeout=60_000)
    entries.first.get_by_role("button", name="Approve").click()
    second.join(60)
    assert not (served.root / "b.txt").exists()
