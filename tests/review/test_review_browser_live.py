"""The review page in a real headless browser (the system's Chromium; skipped with the reason
where it or Playwright is missing): the list's pages and its damaged records follow the
stores live, and a change set is one change whose "Undo set" takes every file back."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from dsh_fs.adapters import SyncWorkspace

from .conftest import Served
from .test_review_browser import _open_session, browser, page

if TYPE_CHECKING:
    from playwright.sync_api import Page

__all__ = ["browser", "page"]  # the fixtures, shared with the other browser tests

NAMES = ("a.py", "b.py", "c.py")


def _sessions(served: Served, count: int, first: int = 0) -> None:
    """`count` sessions of one write each, by a workspace of their own (another server)."""
    workspace = SyncWorkspace.sandbox(str(served.root), journal=str(served.journal))
    try:
        for n in range(first, first + count):
            agent = workspace.session(label=f"agent{n:02d}")
            assert not agent.call("write", {"file_path": f"f{n}.txt", "content": "x\n"}).is_error
    finally:
        workspace.close()


def test_the_pages_and_the_damaged_records_follow_the_store_live(
    served: Served, page: Page
) -> None:
    _sessions(served, 50)
    page.goto(served.url)
    page.wait_for_selector("#live.live:not(.off)")
    assert page.locator("#pages").inner_text() == "Page 1 of 1"
    _sessions(served, 1, first=50)  # one more than a page holds
    page.get_by_role("link", name="Older sessions").wait_for()
    assert "Page 1 of 2" in page.locator("#pages").inner_text()
    assert page.locator("#sessions-body tr").count() == 50
    record = next(Path(served.journal).glob("*/*.json"))
    record.write_text("{not json", encoding="utf-8")
    page.locator("#damaged", has_text="Damaged records").wait_for()
    assert record.name in page.locator("#damaged").inner_text()


def test_a_change_set_is_one_change_and_undo_set_takes_every_file_back(
    served: Served, page: Page
) -> None:
    for name in NAMES:
        (served.root / name).write_text(f"{name}: old_name\n", encoding="utf-8")
    agent = served.agent("claude-code")
    for name in NAMES:
        assert not agent.call("read", {"file_path": name}).is_error
    edits = [{"file_path": n, "old_string": "old_name", "new_string": "new_name"} for n in NAMES]
    assert not agent.call("edit_files", {"edits": edits}).is_error
    _open_session(page, served, "claude-code")
    assert page.locator("ol#changes > li").count() == 1
    assert page.locator("li.set ol.set-files > li").count() == 3
    # One undo button for the set; its files have none of their own (all or none).
    assert page.locator("button[data-action=undo-change]").count() == 1
    page.get_by_role("button", name="Undo change set", exact=False).click()
    page.wait_for_selector("#status.done")
    assert "3 of 3 undone" in page.locator("#status").inner_text()
    for name in NAMES:
        assert (served.root / name).read_text(encoding="utf-8") == f"{name}: old_name\n"
    page.wait_for_selector("li.set.undone")
