"""The review page in a real headless browser: the system's Chromium (``apt-get install
chromium``; never a downloaded build) driven by Playwright. Open the page, open a session,
see a diff, revert one hunk of a change the user edited since, undo a session, watch a new
change appear live, be refused without the token; hostile names run nothing; the keyboard
reaches everything; a 1 MB change arrives in chunks.

Skipped, with the reason, where Playwright or Chromium is missing (`.ci/run` installs
Chromium when it runs as root with apt-get)."""

from __future__ import annotations

import inspect
import os
import shutil
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import pytest

from dsh_fs.journal import Journal

from .conftest import Served

if TYPE_CHECKING:
    from playwright.sync_api import APIResponse, Browser, Dialog, Page, Route

CHROMIUM = os.environ.get("DSH_FS_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
WAIT = 15_000
"""Milliseconds a test waits for the page to show something (the machine may be busy)."""


@pytest.fixture
def browser(served: Served) -> Iterator[Browser]:
    """A browser of the test's own: closing it closes its connections to the page's server
    before the server stops (a browser keeps idle ones open)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install -e '.[dev]')")
    if not (os.access(CHROMIUM, os.X_OK) or shutil.which(CHROMIUM)):
        pytest.skip(f"no Chromium at {CHROMIUM} (as root: apt-get install -y chromium)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    opened = context.new_page()
    opened.set_default_timeout(WAIT)
    dialogs: list[str] = []

    def dialog(shown: Dialog) -> None:
        dialogs.append(shown.message)
        shown.dismiss()

    opened.on("dialog", dialog)
    try:
        yield opened
    finally:
        context.close()
    assert dialogs == [], f"a script ran in the page: {dialogs}"


def _open_session(page: Page, served: Served, client: str) -> None:
    page.goto(served.url)
    page.get_by_role("link", name=f"{client}-", exact=False).first.click()
    _arrived(page)


def _served_version(page: Page, served: Served) -> str:
    """The journal's version as the review server answers it now (re-read every half
    second)."""
    answer = page.request.get(
        f"{served.base}/api/version", headers={"X-Dsh-Fs-Token": served.token}
    )
    return str(answer.json()["version"])


def _first_held(held: list[Route]) -> Callable[[Route], None]:
    """A route handler that keeps the first request it meets in `held` (for the test to
    answer later) and lets every later one through."""

    def handler(route: Route) -> None:
        if held:
            route.continue_()
        else:
            held.append(route)

    return handler


def _arrived(page: Page) -> None:
    """Wait until the session page a link led to has loaded, its deferred script included:
    its buttons do nothing before the script runs, and a busy machine runs it late."""
    page.wait_for_url("**/session?**")
    page.wait_for_selector("ol#changes")


def test_the_page_opens_a_session_and_shows_a_diff_with_both_line_numbers(
    served: Served, page: Page
) -> None:
    agent = served.agent("claude-code")
    agent.call("write", {"file_path": "a.txt", "content": "".join(f"{n}\n" for n in range(20))})
    agent.call("edit", {"file_path": "a.txt", "old_string": "10\n", "new_string": "ten\n"})
    page.goto(served.url)
    row = page.locator("#sessions-body tr", has_text="claude-code-")
    assert "2 of 2" in row.inner_text()
    _open_session(page, served, "claude-code")
    assert page.locator("li.change").count() == 2
    page.get_by_role("button", name="Show diff").nth(1).click()
    page.wait_for_selector("table.difftab tr.added")
    removed = page.locator("tr.removed").first.locator("td")
    added = page.locator("tr.added").first.locator("td")
    assert [removed.nth(0).inner_text(), removed.nth(2).inner_text()] == ["11", "10"]
    assert [added.nth(1).inner_text(), added.nth(2).inner_text()] == ["11", "ten"]
    assert page.get_by_role("button", name="Revert hunk 1").count() == 1
    assert "1 hunk" in page.locator("p.names").inner_text()


def test_the_page_is_refused_without_the_token(served: Served, page: Page) -> None:
    served.agent("claude-code").call("write", {"file_path": "a.txt", "content": "x\n"})
    response = page.goto(served.base + "/")
    assert response is not None
    assert response.status == 401
    assert "refused" in page.content()
    assert "claude-code" not in page.content()


def test_undo_session_from_the_page_puts_its_files_back(served: Served, page: Page) -> None:
    agent = served.agent("claude-code")
    agent.call("write", {"file_path": "a.txt", "content": "agent\n"})
    agent.call("write", {"file_path": "b.txt", "content": "agent\n"})
    _open_session(page, served, "claude-code")
    page.get_by_role("button", name="Undo session", exact=False).first.click()
    page.wait_for_selector("#status.done")
    assert "2 of 2 undone" in page.locator("#status").inner_text()
    assert not (served.root / "a.txt").exists()
    assert not (served.root / "b.txt").exists()
    page.wait_for_selector("li.change.undone >> nth=1")
    assert "undone by" in page.locator("li.change").first.inner_text()
    assert "0 in force" in page.locator("#session-facts").inner_text()


def test_undoing_a_change_twice_tells_the_second_tab_it_is_already_undone(
    served: Served, page: Page, browser: Browser
) -> None:
    agent = served.agent("claude-code")
    agent.call("write", {"file_path": "a.txt", "content": "agent\n"})
    other = browser.new_page()
    try:
        _open_session(page, served, "claude-code")
        _open_session(other, served, "claude-code")
        page.get_by_role("button", name="Undo change", exact=False).click()
        page.wait_for_selector("#status.done")
        other.get_by_role("button", name="Undo change", exact=False).click()
        other.wait_for_selector("#status.refused")
        assert "already undone" in other.locator("#status").inner_text()
    finally:
        other.close()


def test_a_new_change_appears_live_without_a_reload(served: Served, page: Page) -> None:
    agent = served.agent("claude-code")
    agent.call("write", {"file_path": "a.txt", "content": "one\n"})
    page.goto(served.url)
    page.wait_for_selector("#live.live:not(.off)")
    # Another agent, another workspace on the same store: a second server.
    served.agent("cursor").call("write", {"file_path": "c.txt", "content": "x\n"})
    page.locator("#sessions-body tr", has_text="cursor-").wait_for()
    _open_session(page, served, "claude-code")
    page.get_by_role("button", name="Show diff").click()
    page.wait_for_selector("table.difftab")
    agent.call("read", {"file_path": "a.txt"})
    agent.call("edit", {"file_path": "a.txt", "old_string": "one", "new_string": "two"})
    page.wait_for_selector("li.change >> nth=1")
    assert page.locator("table.difftab").count() == 1  # the open diff stayed open
    assert "2 changes" in page.locator("#session-facts").inner_text()


def test_a_change_between_the_pages_rendering_and_its_first_poll_is_shown_by_that_poll(
    served: Served, page: Page
) -> None:
    served.agent("claude-code").call("write", {"file_path": "a.txt", "content": "one\n"})
    held: list[str] = []

    def first_poll(route: Route) -> None:
        if held:
            route.continue_()
            return
        # The page is rendered; its first poll is held while another agent's change lands,
        # then answered with a version that already counts it (asked until it does).
        before = route.fetch().json()["version"]
        served.agent("cursor").call("write", {"file_path": "c.txt", "content": "x\n"})
        deadline = time.monotonic() + 30
        response = route.fetch()
        while response.json()["version"] == before and time.monotonic() < deadline:
            response = route.fetch()
        held.append(before)
        route.fulfill(response=response)

    page.route("**/api/version*", first_poll)
    page.goto(served.url)
    # No later change comes: only the first poll can bring the row in.
    page.locator("#sessions-body tr", has_text="cursor-").wait_for()
    assert held


def test_an_action_taken_while_a_poll_runs_shows_its_result_without_another_poll(
    served: Served, page: Page
) -> None:
    """An Undo pressed while the page's poll is still fetching (with data from before the
    undo) refreshes again when that poll ends: the result shows without waiting for the next
    poll, which here never comes (the page's clock is stopped)."""
    agent = served.agent("claude-code")
    agent.call("write", {"file_path": "a.txt", "content": "agent\n"})
    page.clock.install()
    _open_session(page, served, "claude-code")
    page.wait_for_selector("#live.live:not(.off)")  # the page's first refresh has run
    # From here on, a poll comes only when the test moves the page's clock.
    page.clock.pause_at(datetime.now() + timedelta(seconds=5))
    held: list[tuple[Route, APIResponse]] = []

    def stale(route: Route) -> None:
        if held:
            route.continue_()
            return
        held.append((route, route.fetch()))  # the session's changes as of now, answered later

    page.route("**/fragment/changes*", stale)

    before = _served_version(page, served)
    agent.call("write", {"file_path": "b.txt", "content": "agent\n"})  # the version moves
    deadline = time.monotonic() + 30
    while _served_version(page, served) == before and time.monotonic() < deadline:
        page.wait_for_timeout(100)  # the server rereads its stores every half second
    page.clock.run_for(1500)  # one poll: it sees the new version and asks for the changes
    while not held and time.monotonic() < deadline:
        page.wait_for_timeout(20)
    assert held, "the poll did not ask for the session's changes"
    page.get_by_role("button", name="Undo change", exact=False).click()
    page.wait_for_selector("#status.done")
    assert not (served.root / "a.txt").exists()
    route, response = held[0]
    route.fulfill(response=response)  # the poll ends, with what it read before the undo
    page.wait_for_selector("li.change.undone", timeout=30_000)


def test_hostile_names_labels_and_lines_run_nothing(served: Served, page: Page) -> None:
    hostile = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'
    agent = served.agent(hostile)
    name = hostile.replace("/", "_") + ".txt"
    agent.call("write", {"file_path": name, "content": hostile + "\n"})
    page.goto(served.url)
    link = page.locator("#sessions-body a").first
    assert link.inner_text().startswith(hostile)
    link.click()
    _arrived(page)
    page.get_by_role("button", name="Show diff").click()
    page.wait_for_selector("tr.added")
    assert page.locator("tr.added td.code").inner_text() == hostile
    assert page.locator("code.path").inner_text() == name
    assert page.locator("img").count() == 0
    assert page.locator("main script").count() == 0


def test_the_page_works_with_the_keyboard(served: Served, page: Page) -> None:
    agent = served.agent("claude-code")
    agent.call("write", {"file_path": "a.txt", "content": "x\n"})
    page.goto(served.url)
    _tab_to(page, lambda text: text.startswith("claude-code-"))
    page.keyboard.press("Enter")
    _arrived(page)
    _tab_to(page, lambda text: text == "Show diff")
    page.keyboard.press("Enter")
    page.wait_for_selector("tr.added")
    assert page.evaluate("document.activeElement.getAttribute('aria-expanded')") == "true"


def test_a_row_keeps_the_keyboard_focus_when_the_list_is_refreshed_under_it(
    served: Served, page: Page
) -> None:
    served.agent("claude-code").call("write", {"file_path": "a.txt", "content": "x\n"})
    held: list[Route] = []

    page.route("**/fragment/list*", _first_held(held))
    # The page's first poll asks for the list; it is held while the user tabs onto a row, so
    # the focus moves while the list is on its way (a busy machine does this by itself).
    with page.expect_request("**/fragment/list*"):
        page.goto(served.url)
    _tab_to(page, lambda text: text.startswith("claude-code-"))
    page.evaluate("document.querySelector('#sessions-body a').dataset.old = '1'")
    assert len(held) == 1
    # Rows that came back unchanged would stay as they are: another agent's session makes
    # the held list a new one (asked for once the server's half-second reading has it).
    before = _served_version(page, served)
    served.agent("cursor").call("write", {"file_path": "c.txt", "content": "x\n"})
    deadline = time.monotonic() + 30
    while _served_version(page, served) == before and time.monotonic() < deadline:
        page.wait_for_timeout(100)
    held[0].continue_()
    # The rows were replaced when the marked link is gone (a CSS wait: the page's CSP refuses
    # the eval a string predicate of `wait_for_function` may need).
    page.locator("#sessions-body a[data-old]").wait_for(state="detached")
    focused: Any = page.evaluate("document.activeElement.textContent")
    assert isinstance(focused, str)
    assert focused.startswith("claude-code-")


def test_the_first_refresh_leaves_the_rows_the_page_came_with_alone(
    served: Served, page: Page
) -> None:
    """The page's first refresh (right after its load) brings the same rows the server
    rendered: they stay the very elements they were, so a link the user is clicking then
    is not replaced under the pointer (a click landing between the two was lost)."""
    served.agent("claude-code").call("write", {"file_path": "a.txt", "content": "one\n"})
    held: list[Route] = []

    page.route("**/fragment/list*", _first_held(held))  # answered later
    polls: list[str] = []
    page.on(
        "request",
        lambda request: polls.append(request.url) if "/api/version" in request.url else None,
    )
    page.goto(served.url)
    link = page.get_by_role("link", name="claude-code-", exact=False).first.element_handle()
    deadline = time.monotonic() + 30
    while not held and time.monotonic() < deadline:
        page.wait_for_timeout(20)
    assert held, "the page's first refresh did not ask for the list"
    held[0].continue_()
    # One refresh runs at a time: the next poll asks for the version only once the first
    # refresh (the held one) has ended.
    while len(polls) < 2 and time.monotonic() < deadline:
        page.wait_for_timeout(20)
    assert len(polls) >= 2, "the page did not poll again"
    assert link.evaluate("element => element.isConnected")


def _tab_to(page: Page, wanted: Callable[[str], bool]) -> None:
    """Press Tab until the focused element's text is the one wanted (at most 30 times)."""
    seen: list[str] = []
    for _ in range(30):
        page.keyboard.press("Tab")
        focused: Any = page.evaluate("document.activeElement.textContent")
        if isinstance(focused, str) and wanted(focused):
            return
        seen.append(str(focused))
    raise AssertionError(f"Tab never reached the element; it went through {seen}")


def test_a_1mb_change_arrives_in_chunks(served: Served, page: Page) -> None:
    agent = served.agent("claude-code")
    lines = [f"line {n} of a large file, long enough to matter\n" for n in range(23_000)]
    content = "".join(lines)
    assert len(content) > 1_000_000
    agent.call("write", {"file_path": "big.txt", "content": content})
    _open_session(page, served, "claude-code")
    page.get_by_role("button", name="Show diff").click()
    page.wait_for_selector("button.more")
    first = page.locator("table.difftab tr").count()
    assert first <= 401  # one chunk, and the button that loads the next
    page.locator("button.more").scroll_into_view_if_needed()
    page.locator("table.difftab tr").nth(first).wait_for()  # the next chunk came
    assert page.locator("tr.added td.code").first.inner_text() == lines[0].rstrip("\n")


def test_reverting_one_hunk_keeps_the_users_later_edit(served: Served, page: Page) -> None:
    if "hunks" not in inspect.signature(Journal.undo).parameters:
        pytest.skip("the journal has no hunk revert yet (Journal.undo(hunks=), SPEC §9.1)")
    agent = served.agent("claude-code")
    text = "".join(f"line {n}\n" for n in range(40))
    agent.call("write", {"file_path": "a.txt", "content": text})
    agent.call("read", {"file_path": "a.txt"})
    changed = text.replace("line 5\n", "line five\n").replace("line 30\n", "line thirty\n")
    agent.call("write", {"file_path": "a.txt", "content": changed})
    path = served.root / "a.txt"
    # The user edits the file since, between the agent's two hunks.
    path.write_text(changed.replace("line 20\n", "the user's line 20\n"), encoding="utf-8")
    _open_session(page, served, "claude-code")
    page.get_by_role("button", name="Show diff").nth(1).click()
    page.get_by_role("button", name="Revert hunk 2").click()
    page.wait_for_selector("#status.done")
    assert "hunk 2" in page.locator("#status").inner_text()
    assert path.read_text(encoding="utf-8") == changed.replace(
        "line 20\n", "the user's line 20\n"
    ).replace("line thirty\n", "line 30\n")
