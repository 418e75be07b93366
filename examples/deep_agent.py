"""A deep agent (LangChain's `deepagents`) works on a folder through dsh-fs's backend.

    pip install '.[deepagents]' langchain-anthropic   # in a checkout, Python 3.11+
    ANTHROPIC_API_KEY=... python examples/deep_agent.py ./project "Fix the typo"

Its own file tools (ls, read_file, write_file, edit_file, glob, grep) run through dsh-fs:
``/`` is the folder, the sandbox fences it, a write over a file never read or an edit of a
file that changed since its read is refused in dsh-fs's words, and an edit whose old_string
is not in the file says what is closest.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

import anyio
from deepagents import create_deep_agent
from langchain_core.language_models import BaseChatModel

from dsh_fs import Workspace
from dsh_fs.adapters import WorkspaceBackend


async def run_agent(model: str | BaseChatModel, folder: str, task: str) -> str:
    """Run one conversation on `folder` (one session, one observation owner); its answer."""
    async with Workspace.sandbox(folder) as workspace:
        backend = WorkspaceBackend(workspace.session())
        agent = create_deep_agent(model=model, backend=backend)
        result = await agent.ainvoke({"messages": [{"role": "user", "content": task}]})
        return str(result["messages"][-1].text)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="the folder the agent may read and edit")
    parser.add_argument("task", help="what to do, in plain words")
    default = os.environ.get("DEEPAGENTS_MODEL", "anthropic:claude-sonnet-4-5")
    parser.add_argument("--model", default=default)
    args = parser.parse_args(argv)
    print(anyio.run(run_agent, args.model, args.folder, args.task))
    return 0


if __name__ == "__main__":
    sys.exit(main())
