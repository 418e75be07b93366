"""Edit recovery through the OpenAI and Anthropic adapters: the model gets the diagnosis."""

from __future__ import annotations

import json
from pathlib import Path

from dsh_fs.adapters import SyncWorkspace


def test_both_adapters_hand_the_model_the_diagnosis(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    arguments = {"file_path": "a.py", "old_string": "def f():\n\treturn 1", "new_string": "x"}
    with SyncWorkspace.local(str(tmp_path)) as ws:
        session = ws.session()
        session.call("read", {"file_path": "a.py"})
        openai = session.execute_openai_tool_calls(
            [{"id": "c", "function": {"name": "edit", "arguments": json.dumps(arguments)}}]
        )
        anthropic = session.anthropic_tool_results(
            [{"type": "tool_use", "id": "t", "name": "edit", "input": arguments}]
        )
    reason = (
        "- tabs vs spaces: line 2 is indented with spaces in the file, with tabs in old_string "
        "(line 2: 4 spaces vs 1 tab)"
    )
    assert reason in openai[0]["content"].split("\n")
    assert anthropic[0]["is_error"] is True
    content = anthropic[0]["content"]
    text = content if isinstance(content, str) else content[0]["text"]
    assert reason in text.split("\n")
    assert (tmp_path / "a.py").read_text(encoding="utf-8") == "def f():\n    return 1\n"
