"""The review page over plain HTTP (issue 38): a change set (`edit_files`) shows as one change
with its files and one "Undo set" button that undoes the set all or none; "Undo session"
takes the session clicked and no other whose label merely starts with it; the live list
brings its pages and damaged records along with its rows."""

from __future__ import annotations

import html
import json
import time
from pathlib import Path
from typing import Any

import httpx

from dsh_fs.adapters import SyncWorkspace
from dsh_fs.review import TOKEN_HEADER

from .conftest import Served

NAMES = ("a.py", "b.py", "c.py")


def _get(served: Served, path: str, **params: object) -> httpx.Response:
    query: dict[str, str] = {"token": served.token, **{k: str(v) for k, v in params.items()}}
    return httpx.get(served.base + path, params=query, timeout=30)


def _act(served: Served, payload: dict[str, Any]) -> dict[str, Any]:
    headers = {"Content-Type": "application/json", "Origin": served.base}
    headers[TOKEN_HEADER] = served.token
    response = httpx.post(
        served.base + "/api/action", content=json.dumps(payload), headers=headers, timeout=30
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def _label(served: Served, client: str) -> str:
    page = _get(served, "/").text
    start = page.index(f'data-label="{client}-') + len('data-label="')
    return html.unescape(page[start : page.index('"', start)])


def _eventually(served: Served, path: str, wanted: str, **params: object) -> dict[str, Any]:
    """The fragment `path` once its JSON shows `wanted` (the page reuses a reading of the
    store for half a second: a change shows within it); bounded."""
    deadline = time.monotonic() + 30
    while True:
        body: dict[str, Any] = _get(served, path, **params).json()
        if wanted in json.dumps(body) or time.monotonic() > deadline:
            return body


def _set_of_three(served: Served) -> str:
    """An agent's `edit_files` over a.py, b.py, c.py; the set's group id."""
    for name in NAMES:
        (served.root / name).write_text(f"{name}: old_name\n", encoding="utf-8")
    agent = served.agent("claude-code")
    for name in NAMES:
        assert not agent.call("read", {"file_path": name}).is_error
    edits = [{"file_path": n, "old_string": "old_name", "new_string": "new_name"} for n in NAMES]
    result = agent.call("edit_files", {"edits": edits})
    assert not result.is_error, result.text
    assert result.value is not None
    group = result.value["group"]
    assert isinstance(group, str)
    return group


def test_a_change_set_is_one_change_with_its_files_and_one_undo_set_button(
    served: Served,
) -> None:
    group = _set_of_three(served)
    page = _get(served, "/session", store=0, label=_label(served, "claude-code")).text
    assert page.count('class="change set"') == 1
    assert f'id="set-0-{group}"' in page
    assert "3 files" in page
    assert page.count(">Undo set</button>") == 1
    assert ">Undo change</button>" not in page  # a file of a set is undone with its set
    for name in NAMES:
        assert f'<code class="path">{name}</code>' in page
    assert page.count(">Show diff</button>") == 3


def test_undo_set_undoes_every_file(served: Served) -> None:
    group = _set_of_three(served)
    done = _act(served, {"action": "undo-change", "store": 0, "id": group})
    assert [r["result"] for r in done["results"]] == ["undone"] * 3
    for name in NAMES:
        assert (served.root / name).read_text(encoding="utf-8") == f"{name}: old_name\n"
    page = _get(served, "/session", store=0, label=_label(served, "claude-code")).text
    assert 'class="change set undone"' in page


def test_undo_set_with_one_file_edited_since_undoes_none(served: Served) -> None:
    group = _set_of_three(served)
    (served.root / "b.py").write_text("b.py: the user's\n", encoding="utf-8")
    refused = _act(served, {"action": "undo-change", "store": 0, "id": group})
    assert {r["result"] for r in refused["results"]} == {"refused"}
    assert "the change set is refused" in refused["message"]
    assert (served.root / "a.py").read_text(encoding="utf-8") == "a.py: new_name\n"
    assert (served.root / "c.py").read_text(encoding="utf-8") == "c.py: new_name\n"


def test_undo_session_takes_only_the_session_with_that_exact_label(served: Served) -> None:
    first = served.agent("agent")
    assert not first.call("write", {"file_path": "one.txt", "content": "1\n"}).is_error
    label = _label(served, "agent")
    # A client that named itself after the first session's whole label: a prefix match.
    second = served.agent(f"{label}-x")
    assert not second.call("write", {"file_path": "two.txt", "content": "2\n"}).is_error
    body = _act(served, {"action": "undo-session", "store": 0, "label": label})
    assert [(r["path"].rsplit("/", 1)[-1], r["result"]) for r in body["results"]] == [
        ("one.txt", "undone")
    ]
    assert not (served.root / "one.txt").exists()
    assert (served.root / "two.txt").read_text(encoding="utf-8") == "2\n"
    again = _act(served, {"action": "undo-session", "store": 0, "label": label})
    assert again["results"] == []
    assert "Nothing to undo" in again["message"]


def test_the_live_list_brings_its_pages_and_damaged_records_along(served: Served) -> None:
    listing = _get(served, "/fragment/list").json()
    assert "Page 1 of 1" in listing["pages"]
    assert "Older sessions" not in listing["pages"]
    assert "Damaged records" not in listing["damaged"]
    workspace = SyncWorkspace.sandbox(str(served.root), journal=str(served.journal))
    try:
        for n in range(51):  # one more session than a page holds
            agent = workspace.session(label=f"agent{n:02d}")
            assert not agent.call("write", {"file_path": f"f{n}.txt", "content": "x\n"}).is_error
    finally:
        workspace.close()
    # The page reuses a reading of the store for half a second: 51 quick writes fit in it.
    listing = _eventually(served, "/fragment/list", "Page 1 of 2")
    assert "Page 1 of 2" in listing["pages"]
    assert "Older sessions" in listing["pages"]
    assert listing["rows"].count("<tr ") == 50
    second = _get(served, "/fragment/list", page=2).json()
    assert second["page"] == 2
    assert "Newer sessions" in second["pages"]
    (record,) = list(Path(served.journal).glob("*/*.json"))[:1]
    record.write_text("{not json", encoding="utf-8")
    listing = _eventually(served, "/fragment/list", "Damaged records")
    assert "Damaged records" in listing["damaged"]
    assert html.escape(record.name) in listing["damaged"]


def test_a_sessions_live_changes_bring_its_damaged_records_along(served: Served) -> None:
    agent = served.agent("claude-code")
    assert not agent.call("write", {"file_path": "a.txt", "content": "x\n"}).is_error
    label = _label(served, "claude-code")
    fragment = _get(served, "/fragment/changes", store=0, label=label).json()
    assert fragment["damaged"] == '<div id="damaged"></div>'
    (record,) = list(Path(served.journal).glob("*/*.json"))
    record.write_text("[]", encoding="utf-8")
    fragment = _eventually(served, "/fragment/changes", "Damaged records", store=0, label=label)
    assert "Damaged records" in fragment["damaged"]
