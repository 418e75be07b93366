"""examples/langgraph_approval.py on a scripted chat model: the graph stops at an interrupt
with the proposal, resumes with the person's answer, and the change lands only as shown."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph", reason="the langchain extra is not installed")

from ..scripted_chat import ScriptedChatModel, call, say
from .scripted import load_example

pytestmark = [
    pytest.mark.anyio,
    # LangGraph's `interrupt` finds its run through a context variable, which asyncio on
    # Python 3.10 does not carry into the graph's async tasks ("Called get_config outside of
    # a runnable context"): the example's async graph needs Python 3.11+.
    pytest.mark.skipif(
        sys.version_info < (3, 11), reason="LangGraph's interrupt in an async graph needs 3.11+"
    ),
]

EDIT = {"file_path": "notes.txt", "old_string": "teh", "new_string": "the"}


def _model() -> ScriptedChatModel:
    return ScriptedChatModel(
        script=[
            call("read", {"file_path": "notes.txt"}, "c1"),
            call("edit", EDIT, "c2"),
            say("Done."),
        ]
    )


async def test_an_approved_change_lands_after_the_resume(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("fix teh typo\n", encoding="utf-8")
    asked: list[dict[str, Any]] = []

    def person(question: dict[str, Any]) -> dict[str, Any]:
        asked.append(question)
        assert notes.read_text() == "fix teh typo\n"  # nothing landed while it waits
        return {"approved": True, "note": "thanks"}

    model = _model()
    example = load_example("langgraph_approval")
    assert await example.run_agent(model, str(tmp_path), "Fix the typo", person) == "Done."
    (question,) = asked
    assert question["tool"] == "edit"
    assert "-fix teh typo\n+fix the typo\n" in question["diff"]
    assert notes.read_text() == "fix the typo\n"
    assert "[approval] Applied the approved change" in model.seen[-1][-1].text


async def test_a_change_made_while_the_graph_was_paused_is_not_overwritten(
    tmp_path: Path,
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("fix teh typo\n", encoding="utf-8")

    def person(question: dict[str, Any]) -> dict[str, Any]:
        notes.write_text("fix teh typo, and more\n", encoding="utf-8")  # meanwhile
        return {"approved": True}

    model = _model()
    example = load_example("langgraph_approval")
    await example.run_agent(model, str(tmp_path), "Fix the typo", person)
    assert notes.read_text() == "fix teh typo, and more\n"
    assert "FS_STALE_VERSION" not in model.seen[-1][-1].text  # the text, not the code
    assert "file changed since it was read" in model.seen[-1][-1].text
