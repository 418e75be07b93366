"""A LangGraph agent works on a folder through dsh-fs's tools as LangChain tools.

    pip install '.[langchain]' langchain langchain-openai   # in a checkout
    OPENAI_API_KEY=... python examples/langchain_agent.py ./project "Fix the typo"

The tools carry dsh-fs's schemas and descriptions; a refused call (a stale edit, a write
over a file never read, an edit whose old_string is not in the file, with what is closest)
reaches the model as an error tool message in dsh-fs's words, and it reads again and retries.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

import anyio
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AnyMessage, HumanMessage, SystemMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from dsh_fs import Workspace
from dsh_fs.adapters import langchain_tools


async def run_agent(model: BaseChatModel, folder: str, task: str) -> str:
    """Run one conversation on `folder` (one session, one observation owner); its answer."""
    async with Workspace.sandbox(folder) as workspace:
        tools = langchain_tools(workspace.session())
        chat = model.bind_tools(tools)

        async def agent(state: MessagesState) -> dict[str, Any]:
            return {"messages": [await chat.ainvoke(state["messages"])]}

        graph = StateGraph(MessagesState)
        graph.add_node("agent", agent)
        graph.add_node("tools", ToolNode(tools))
        graph.add_edge(START, "agent")
        graph.add_conditional_edges("agent", tools_condition)  # tool calls, or the end
        graph.add_edge("tools", "agent")
        prompt: list[AnyMessage] = [SystemMessage(workspace.system_prompt()), HumanMessage(task)]
        result = await graph.compile().ainvoke(MessagesState(messages=prompt))
        return str(result["messages"][-1].text)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="the folder the agent may read and edit")
    parser.add_argument("task", help="what to do, in plain words")
    parser.add_argument("--model", default=os.environ.get("LANGCHAIN_MODEL", "openai:gpt-5.1"))
    args = parser.parse_args(argv)
    from langchain.chat_models import init_chat_model  # the `langchain` package

    print(anyio.run(run_agent, init_chat_model(args.model), args.folder, args.task))
    return 0


if __name__ == "__main__":
    sys.exit(main())
