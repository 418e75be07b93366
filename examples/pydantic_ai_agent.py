"""A pydantic-ai agent works on a folder through dsh-fs's toolset.

    OPENAI_API_KEY=... python examples/pydantic_ai_agent.py ./project "Fix the typo"

The toolset offers read/write/edit with dsh-fs's schemas; a refused call (a stale edit, a
write over a file never read) reaches the model as a failed tool result with the remedy.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

import anyio
from pydantic_ai import Agent
from pydantic_ai.models import Model

from dsh_fs import Workspace
from dsh_fs.adapters import WorkspaceToolset


async def run_agent(model: str | Model, folder: str, task: str) -> str:
    """Run one conversation on `folder` (one toolset, one observation owner); its answer."""
    async with Workspace.sandbox(folder) as workspace:
        agent = Agent(model, instructions=workspace.system_prompt())
        toolset = WorkspaceToolset(workspace.session())
        result = await agent.run(task, toolsets=[toolset])
        return result.output


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="the folder the agent may read and edit")
    parser.add_argument("task", help="what to do, in plain words")
    parser.add_argument("--model", default=os.environ.get("PYDANTIC_AI_MODEL", "openai:gpt-5.1"))
    args = parser.parse_args(argv)
    print(anyio.run(run_agent, args.model, args.folder, args.task))
    return 0


if __name__ == "__main__":
    sys.exit(main())
