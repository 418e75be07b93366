"""A LangGraph agent whose changes wait for a person: interrupt, resume, and the pin.

    pip install '.[langchain]' langchain langchain-openai   # in a checkout
    OPENAI_API_KEY=... python examples/langgraph_approval.py ./project "Fix the typo"

Every change the agent proposes (`approve="changes"`) is held, not published: the graph
stops with a LangGraph `interrupt` carrying the proposal (its diff, and its JSON), and
resumes with the person's answer, maybe hours later. `session.apply` then publishes exactly
the proposal shown, and only if the file is still at the version the diff was computed
from: otherwise the agent is told `FS_STALE_VERSION` and nothing lands.

Needs Python 3.11+: LangGraph's `interrupt` in an async graph finds its run through a context
variable that Python 3.10's asyncio does not carry into the graph's tasks.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

import anyio
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AnyMessage, HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Command, interrupt

from dsh_fs import Approval, Proposal, Workspace
from dsh_fs.adapters import langchain_tools


class State(MessagesState):
    """The conversation, and the proposal waiting for a person (its JSON), if any."""

    pending: str | None


Decide = Callable[[dict[str, Any]], dict[str, Any]]
"""The person: shown ``{tool, paths, diff, proposal}``, answers ``{approved, note}``."""


async def run_agent(model: BaseChatModel, folder: str, task: str, decide: Decide) -> str:
    """Run one conversation on `folder`, asking `decide` about every change; its answer."""
    async with Workspace.sandbox(folder, approve="changes") as workspace:
        session = workspace.session()
        held: list[Proposal] = []
        # No answer now (None): the call fails FS_NOT_APPROVED and the proposal is kept,
        # to be put to the person by the graph's interrupt.
        session.approver = held.append
        tools = langchain_tools(session)
        chat = model.bind_tools(tools)
        tool_node = ToolNode(tools)

        async def agent(state: State) -> dict[str, Any]:
            return {"messages": [await chat.ainvoke(state["messages"])]}

        async def run_tools(state: State) -> dict[str, Any]:
            update: dict[str, Any] = await tool_node.ainvoke(state)
            update["pending"] = held.pop().to_json() if held else None
            return update

        async def approval(state: State) -> dict[str, Any]:
            shown = Proposal.from_json(state["pending"] or "")
            answer = interrupt(
                {
                    "tool": shown.tool,
                    "paths": list(shown.paths),
                    "diff": shown.diff,
                    "proposal": shown.to_json(),
                }
            )
            approved = Approval(approved=bool(answer["approved"]), note=answer.get("note"))
            result = await session.apply(shown, approved)
            return {"messages": [HumanMessage(f"[approval] {result.text}")], "pending": None}

        graph = StateGraph(State)
        graph.add_node("agent", agent)
        graph.add_node("tools", run_tools)
        graph.add_node("approval", approval)
        graph.add_edge(START, "agent")
        graph.add_conditional_edges("agent", tools_condition)  # tool calls, or the end
        graph.add_conditional_edges(
            "tools", lambda state: "approval" if state.get("pending") else "agent"
        )
        graph.add_edge("approval", "agent")
        app = graph.compile(checkpointer=InMemorySaver())
        config: Any = {"configurable": {"thread_id": "approval-example"}}
        prompt: list[AnyMessage] = [SystemMessage(workspace.system_prompt()), HumanMessage(task)]
        result = await app.ainvoke({"messages": prompt, "pending": None}, config)
        while result.get("__interrupt__"):
            question = result["__interrupt__"][0].value
            result = await app.ainvoke(Command(resume=decide(question)), config)
        return str(result["messages"][-1].text)


def ask_on_the_terminal(question: dict[str, Any]) -> dict[str, Any]:
    """Show the diff and ask y/n, then an optional note."""
    print(question["diff"])
    approved = input(f"Apply this {question['tool']} change? [y/N] ").strip().lower() == "y"
    return {"approved": approved, "note": input("Note (optional): ").strip() or None}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="the folder the agent may read and edit")
    parser.add_argument("task", help="what to do, in plain words")
    parser.add_argument("--model", default=os.environ.get("LANGCHAIN_MODEL", "openai:gpt-5.1"))
    args = parser.parse_args(argv)
    from langchain.chat_models import init_chat_model  # the `langchain` package

    model = init_chat_model(args.model)
    print(anyio.run(run_agent, model, args.folder, args.task, ask_on_the_terminal))
    return 0


if __name__ == "__main__":
    sys.exit(main())
