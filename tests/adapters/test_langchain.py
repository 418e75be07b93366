"""LangChain tools in a real LangGraph agent loop, driven by a scripted chat model."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain_core", reason="the langchain extra is not installed")
pytest.importorskip("langgraph", reason="the langchain extra is not installed")

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from dsh_fs.adapters import SyncWorkspace, langchain_tools, openai_tools
from dsh_fs.workspace import Session

from ..images import png
from ..scripted_chat import ScriptedChatModel, Step, call, say, tool_messages

pytestmark = pytest.mark.anyio

APP = "def greet():\n    return 'helo'\n"


def graph(model: ScriptedChatModel, tools: list[BaseTool]) -> CompiledStateGraph[Any]:
    """The canonical LangGraph tool loop: the model, then its tool calls, until it stops."""
    chat = model.bind_tools(tools)

    def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [chat.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile()


def changed_on_disk(path: Path, content: str, then: Step) -> Step:
    """A turn during which someone else rewrites `path`, before the model's call."""

    def step(messages: list[BaseMessage]) -> AIMessage:
        path.write_text(content, encoding="utf-8")
        return then(messages)

    return step


def edit(old: str, new: str, call_id: str) -> Step:
    return call("edit", {"file_path": "app.py", "old_string": old, "new_string": new}, call_id)


async def test_the_tools_carry_our_schemas_and_descriptions(session: Session) -> None:
    tools = langchain_tools(session)
    model = ScriptedChatModel(script=[])
    model.bind_tools(tools)
    assert [tool.name for tool in tools] == [s["name"] for s in session.workspace.tool_schemas()]
    assert model.bound == openai_tools(session.workspace)


async def test_a_stale_edit_then_a_miss_reach_the_model_and_it_recovers(
    session: Session, root: Path
) -> None:
    app = root / "app.py"
    app.write_text(APP, encoding="utf-8")
    changed = "def greet():\n    return 'helo'  # changed\n"
    model = ScriptedChatModel(
        script=[
            call("read", {"file_path": "app.py"}, "c1"),
            changed_on_disk(app, changed, edit("'helo'", "'hello'", "c2")),
            call("read", {"file_path": "app.py"}, "c3"),
            edit("retrun 'helo'", "return 'hello'", "c4"),
            edit("return 'helo'", "return 'hello'", "c5"),
            say("Fixed."),
        ]
    )
    result = await graph(model, langchain_tools(session)).ainvoke(
        {"messages": [HumanMessage("Fix the typo in app.py")]}
    )

    assert result["messages"][-1].text == "Fixed."
    _, stale, _, miss, fixed = tool_messages(model.seen[-1])
    assert stale.status == "error"
    assert stale.tool_call_id == "c2"
    assert stale.content == (
        f'Error: cannot edit "{app}": file changed since it was read'
        " \u2014 re-read the file, then retry"
    )
    assert miss.status == "error"
    assert miss.content == (
        f'Error: old_string was not found in "{app}"\n'
        "The closest text in the file is at line 2; it differs from old_string:\n"
        "- line 2 differs at column 8: the file has 'return' where old_string has 'retrun'\n"
        "2:     return 'helo'  # changed\n"
        'To edit these lines, copy old_string from them exactly, without the "<n>: " prefixes.'
    )
    assert fixed.status == "success"
    assert fixed.content == f"The file {app} has been updated successfully."
    assert app.read_bytes() == b"def greet():\n    return 'hello'  # changed\n"


async def test_a_write_over_a_file_never_read_is_refused_and_nothing_changes(
    session: Session, root: Path
) -> None:
    app = root / "app.py"
    app.write_text(APP, encoding="utf-8")
    model = ScriptedChatModel(
        script=[call("write", {"file_path": "app.py", "content": "gone"}, "w1"), say("ok")]
    )
    await graph(model, langchain_tools(session)).ainvoke({"messages": [HumanMessage("go")]})
    (refused,) = tool_messages(model.seen[-1])
    assert refused.status == "error"
    assert refused.content == (
        f'Error: cannot overwrite existing "{app}" without reading it first'
        " \u2014 read the file, then retry"
    )
    assert app.read_text(encoding="utf-8") == APP


def test_a_sync_session_runs_the_loop_synchronously(tmp_path: Path) -> None:
    app = tmp_path / "app.py"
    app.write_text(APP, encoding="utf-8")
    model = ScriptedChatModel(
        script=[
            call("read", {"file_path": "app.py"}, "c1"),
            edit("'helo'", "'hello'", "c2"),
            say("Fixed."),
        ]
    )
    with SyncWorkspace.sandbox(tmp_path) as workspace:
        result = graph(model, langchain_tools(workspace.session())).invoke(
            {"messages": [HumanMessage("Fix it")]}
        )
    assert [m.status for m in tool_messages(result["messages"])] == ["success", "success"]
    assert app.read_bytes() == b"def greet():\n    return 'hello'\n"


async def test_a_sync_session_also_serves_the_async_api(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("one\n", encoding="utf-8")
    with SyncWorkspace.sandbox(tmp_path) as workspace:
        (read, *_) = langchain_tools(workspace.session())
        message = await read.ainvoke(
            {"name": "read", "args": {"file_path": "notes.txt"}, "id": "r1", "type": "tool_call"}
        )
    assert isinstance(message, ToolMessage)
    assert "1: one" in message.text


async def test_an_async_session_called_synchronously_says_what_to_use(session: Session) -> None:
    (read, *_) = langchain_tools(session)
    with pytest.raises(RuntimeError, match=r"ainvoke.*SyncSession"):
        read.invoke({"file_path": "anything.txt"})


async def test_an_image_read_answers_with_an_image_block(session: Session, root: Path) -> None:
    (root / "dot.png").write_bytes(png())
    (read, *_) = langchain_tools(session)
    message = await read.ainvoke(
        {"name": "read", "args": {"file_path": "dot.png"}, "id": "i1", "type": "tool_call"}
    )
    assert isinstance(message, ToolMessage)
    assert isinstance(message.content, list)
    text, image = message.content
    assert isinstance(text, dict)
    assert text["type"] == "text"
    assert isinstance(image, dict)
    assert image["type"] == "image"
    assert image["mime_type"] == "image/png"


async def test_bad_arguments_are_answered_in_our_words(session: Session) -> None:
    (read, *_) = langchain_tools(session)
    message = await read.ainvoke(
        {"name": "read", "args": {"path": "x"}, "id": "b1", "type": "tool_call"}
    )
    assert isinstance(message, ToolMessage)
    assert message.status == "error"
    assert message.text == (await session.call("read", {"path": "x"})).text


def test_importing_dsh_fs_does_not_import_langchain() -> None:
    code = (
        "import sys, dsh_fs, dsh_fs.adapters, dsh_fs.workspace\n"
        "loaded = [m for m in ('langchain_core', 'langgraph', 'deepagents') if m in sys.modules]\n"
        "assert not loaded, loaded\n"
        "dsh_fs.adapters.langchain_tools\n"
        "assert 'langchain_core' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
