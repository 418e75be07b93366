"""The review page over plain HTTP, served for real on loopback: the guard (no token, a bad
Host, a foreign or missing Origin, a GET or a form where an action needs a JSON POST: refused,
nothing changes), the actions (journaled as ``review``; a second undo of a change is told it
is already undone; a pruned or vanished entry is refused with the reason), hostile names and
lines escaped, a tampered store shown as damaged."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from dsh_fs.review import TOKEN_HEADER

from .conftest import Served

HOSTILE = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'


def _get(served: Served, path: str, **params: object) -> httpx.Response:
    query: dict[str, str] = {"token": served.token, **{k: str(v) for k, v in params.items()}}
    return httpx.get(served.base + path, params=query, timeout=30)


def _act(
    served: Served,
    payload: dict[str, Any],
    *,
    origin: str | None = "",
    token: str | None = "",
    content_type: str = "application/json",
) -> httpx.Response:
    headers = {"Content-Type": content_type}
    if origin is not None:
        headers["Origin"] = origin or served.base
    if token is not None:
        headers[TOKEN_HEADER] = token or served.token
    return httpx.post(
        served.base + "/api/action", content=json.dumps(payload), headers=headers, timeout=30
    )


def _edited(served: Served) -> tuple[Path, str]:
    """An agent's write then edit of a.txt; returns the file and the edit's id."""
    agent = served.agent("claude-code")
    path = served.root / "a.txt"
    assert not agent.call("write", {"file_path": "a.txt", "content": "one\ntwo\n"}).is_error
    assert not agent.call(
        "edit", {"file_path": "a.txt", "old_string": "two", "new_string": "TWO"}
    ).is_error
    page = _get(served, "/session", store=0, label=_label(served, "claude-code")).text
    return path, _change_ids(page)[-1]


def _change_ids(page: str) -> list[str]:
    """The ids of the changes a session's page lists, in order."""
    marker = 'data-action="undo-change" data-store="0" data-id="'
    return [part.split('"')[0] for part in page.split(marker)[1:]]


def _label(served: Served, client: str) -> str:
    """The full label of the session whose client is `client` (from the list)."""
    page = _get(served, "/").text
    start = page.index(f'data-label="{client}-') + len('data-label="')
    return page[start : page.index('"', start)]


def test_a_page_without_the_token_is_refused_and_shows_nothing(served: Served) -> None:
    served.agent("secret-agent").call("write", {"file_path": "s.txt", "content": "x\n"})
    bare = httpx.get(served.base + "/", timeout=30)
    wrong = httpx.get(served.base + "/", params={"token": "not-the-token"}, timeout=30)
    assert bare.status_code == wrong.status_code == 401
    assert "secret-agent" not in bare.text + wrong.text
    assert "token" in bare.text
    assert httpx.get(served.base + "/api/version", timeout=30).status_code == 401


def test_the_page_with_the_token_lists_the_session(served: Served) -> None:
    served.agent("claude-code").call("write", {"file_path": "s.txt", "content": "x\n"})
    response = httpx.get(served.url, timeout=30)
    assert response.status_code == 200
    assert "claude-code-" in response.text
    assert "default-src 'none'" in response.headers["content-security-policy"]
    assert response.headers["referrer-policy"] == "no-referrer"


def test_a_request_naming_another_host_is_refused(served: Served) -> None:
    # DNS rebinding: a page whose name now resolves here still names its own host.
    response = httpx.get(
        served.url, headers={"Host": "evil.example:80"}, timeout=30, follow_redirects=False
    )
    assert response.status_code == 421


def test_a_get_on_the_action_endpoint_changes_nothing(served: Served) -> None:
    path, edit_id = _edited(served)
    response = httpx.get(
        served.base + "/api/action",
        params={"token": served.token, "action": "undo-change", "store": 0, "id": edit_id},
        timeout=30,
    )
    assert response.status_code == 405
    assert path.read_text(encoding="utf-8") == "one\nTWO\n"


def test_an_action_from_another_origin_is_refused_and_changes_nothing(served: Served) -> None:
    path, edit_id = _edited(served)
    payload = {"action": "undo-change", "store": 0, "id": edit_id}
    assert _act(served, payload, origin="http://evil.example").status_code == 403
    assert _act(served, payload, origin=None).status_code == 403
    assert path.read_text(encoding="utf-8") == "one\nTWO\n"


def test_an_action_without_the_token_in_its_header_is_refused(served: Served) -> None:
    path, edit_id = _edited(served)
    payload = {"action": "undo-change", "store": 0, "id": edit_id}
    assert _act(served, payload, token=None).status_code == 401
    assert _act(served, payload, token="wrong-token-wrong-token").status_code == 401
    # The token in the URL opens pages; it never authorises an action.
    in_url = httpx.post(
        served.base + "/api/action",
        params={"token": served.token},
        content=json.dumps(payload),
        headers={"Content-Type": "application/json", "Origin": served.base},
        timeout=30,
    )
    assert in_url.status_code == 401
    assert path.read_text(encoding="utf-8") == "one\nTWO\n"


def test_an_action_sent_as_a_form_is_refused(served: Served) -> None:
    # What a cross-site form could send (no preflight): not JSON, so never an action.
    path, edit_id = _edited(served)
    payload = {"action": "undo-change", "store": 0, "id": edit_id}
    response = _act(served, payload, content_type="application/x-www-form-urlencoded")
    assert response.status_code == 400
    assert path.read_text(encoding="utf-8") == "one\nTWO\n"


def test_undoing_a_change_restores_the_file_and_is_journaled_as_review(served: Served) -> None:
    path, edit_id = _edited(served)
    response = _act(served, {"action": "undo-change", "store": 0, "id": edit_id})
    assert response.status_code == 200
    body = response.json()
    assert [r["result"] for r in body["results"]] == ["undone"]
    assert path.read_text(encoding="utf-8") == "one\ntwo\n"
    page = _get(served, "/").text
    assert 'data-label="review-' in page
    session = _get(served, "/session", store=0, label=_label(served, "claude-code")).text
    assert "undone by" in session


def test_two_tabs_undoing_the_same_change_one_wins_the_other_is_told_already_undone(
    served: Served,
) -> None:
    path, edit_id = _edited(served)
    payload = {"action": "undo-change", "store": 0, "id": edit_id}
    first = _act(served, payload).json()
    second = _act(served, payload).json()
    assert first["results"][0]["result"] == "undone"
    assert second["results"][0]["result"] == "refused"
    assert "already undone" in second["results"][0]["reason"]
    assert "already undone" in second["message"]
    assert path.read_text(encoding="utf-8") == "one\ntwo\n"


def test_undoing_a_session_puts_every_file_back(served: Served) -> None:
    agent = served.agent("claude-code")
    (served.root / "keep.txt").write_text("mine\n", encoding="utf-8")
    agent.call("read", {"file_path": "keep.txt"})
    agent.call("write", {"file_path": "keep.txt", "content": "agent's\n"})
    agent.call("write", {"file_path": "new.txt", "content": "new\n"})
    label = _label(served, "claude-code")
    body = _act(served, {"action": "undo-session", "store": 0, "label": label}).json()
    assert {r["result"] for r in body["results"]} == {"undone"}
    assert (served.root / "keep.txt").read_text(encoding="utf-8") == "mine\n"
    assert not (served.root / "new.txt").exists()
    again = _act(served, {"action": "undo-session", "store": 0, "label": label}).json()
    assert all(r["result"] == "refused" for r in again["results"])
    assert (served.root / "keep.txt").read_text(encoding="utf-8") == "mine\n"


def test_an_action_on_an_entry_pruned_meanwhile_is_refused_with_the_reason(
    served: Served,
) -> None:
    path, edit_id = _edited(served)
    for name in (served.journal).rglob(f"{edit_id}.pre"):
        name.unlink()  # what pruning does: the entry stays, its pre-image goes
    body = _act(served, {"action": "undo-change", "store": 0, "id": edit_id}).json()
    assert body["results"][0]["result"] == "refused"
    assert "pruned" in body["results"][0]["reason"]
    assert path.read_text(encoding="utf-8") == "one\nTWO\n"
    for name in (served.journal).rglob(f"{edit_id}.json"):
        name.unlink()  # and an entry gone from the store altogether
    gone = _act(served, {"action": "undo-change", "store": 0, "id": edit_id}).json()
    assert gone["results"] == []
    assert "no change" in gone["message"]
    assert "nothing changed" in gone["message"]
    assert path.read_text(encoding="utf-8") == "one\nTWO\n"


def test_a_malformed_action_is_refused(served: Served) -> None:
    assert _act(served, {"action": "rm -rf", "store": 0}).status_code == 400
    assert _act(served, {"action": "undo-change", "store": 7, "id": "x"}).status_code == 400
    assert _act(served, {"action": "revert-hunk", "store": 0, "id": "x"}).status_code == 400
    response = httpx.post(
        served.base + "/api/action",
        content=b"{not json",
        headers={
            "Content-Type": "application/json",
            "Origin": served.base,
            TOKEN_HEADER: served.token,
        },
        timeout=30,
    )
    assert response.status_code == 400


def test_hostile_file_names_labels_and_lines_are_escaped_everywhere(served: Served) -> None:
    agent = served.agent(HOSTILE)
    name = f"{HOSTILE.replace('/', '_')}.txt"
    assert not agent.call("write", {"file_path": name, "content": f"{HOSTILE}\n"}).is_error
    listing = _get(served, "/").text
    label = _label(served, HOSTILE.replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;"))
    session = _get(served, "/session", store=0, label=_unescape(label)).text
    entry_id = _change_ids(session)[0]
    chunk = _get(served, "/api/diff", store=0, id=entry_id, chunk=0).json()["html"]
    fragment = _get(served, "/fragment/changes", store=0, label=_unescape(label)).json()
    for text in (
        listing,
        session,
        chunk,
        fragment["items"],
        _get(served, "/fragment/sessions").text,
    ):
        assert "<script>" not in text
        assert "<img" not in text
        assert "&lt;script&gt;" in text
    assert "onerror=alert(2)&gt;" in chunk


def _unescape(text: str) -> str:
    return html.unescape(text)


def test_a_tampered_store_shows_damaged_records_and_the_page_still_opens(
    served: Served,
) -> None:
    served.agent("claude-code").call("write", {"file_path": "a.txt", "content": "a\n"})
    store = next(path.parent for path in served.journal.rglob("*.json"))
    (store / "20260101T000000.000000Z-deadbeef.json").write_text("{not json", encoding="utf-8")
    (store / "<img src=x onerror=alert(1)>.json").write_text("{}", encoding="utf-8")
    page = _get(served, "/")
    assert page.status_code == 200
    assert "Damaged records" in page.text
    assert "20260101T000000.000000Z-deadbeef.json" in page.text
    assert "<img" not in page.text
    assert "claude-code-" in page.text


def test_sessions_are_listed_newest_first_fifty_to_a_page(served: Served) -> None:
    agent_names = [f"agent{n:02d}" for n in range(52)]
    for name in agent_names:
        served.agent(name).call("write", {"file_path": f"{name}.txt", "content": "x\n"})
    first = _get(served, "/").text
    second = _get(served, "/", page=2).text
    assert first.index("agent51-") < first.index("agent50-")
    assert "agent00-" not in first
    assert "agent01-" in second
    assert "agent00-" in second
    assert "Page 2 of 2" in second


@pytest.mark.parametrize("missing", ["store", "id"])
def test_a_diff_request_naming_nothing_is_refused(served: Served, missing: str) -> None:
    params: dict[str, object] = {"store": 0, "id": "20260101T000000.000000Z-deadbeef"}
    del params[missing]
    assert _get(served, "/api/diff", **params).status_code == 400
    assert _get(served, "/api/diff", store=0, id="20260101T000000.000000Z-0").status_code == 404
