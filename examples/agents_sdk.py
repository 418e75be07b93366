"""An OpenAI Agents SDK agent edits a folder with apply_patch, executed safely by dsh-fs.

    OPENAI_API_KEY=... python examples/agents_sdk.py ./project "Fix the typo"

The agent gets ``read`` and the SDK's ``ApplyPatchTool``, whose editor is dsh-fs: one run's
reads authorize that run's patches, a stale or mismatched patch fails and changes nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

import anyio
from agents import Agent, Model, RunConfig, Runner

from dsh_fs import Workspace
from dsh_fs.adapters import agents_tools


async def run_agent(model: str | Model, folder: str, task: str) -> str:
    """Run one agent conversation on `folder`; return its final answer."""
    async with Workspace.sandbox(folder) as workspace:
        agent = Agent(
            name="editor",
            instructions="Read a file before you patch it.",
            model=model,
            tools=agents_tools(workspace.session()),
        )
        result = await Runner.run(
            agent, task, run_config=RunConfig(tracing_disabled="OPENAI_API_KEY" not in os.environ)
        )
        return str(result.final_output)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="the folder the agent may read and patch")
    parser.add_argument("task", help="what to do, in plain words")
    parser.add_argument("--model", default=os.environ.get("OPENAI_MODEL", "gpt-5.1"))
    args = parser.parse_args(argv)
    print(anyio.run(run_agent, args.model, args.folder, args.task))
    return 0


if __name__ == "__main__":
    sys.exit(main())
