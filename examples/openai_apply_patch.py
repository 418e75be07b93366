"""A GPT-5-class model edits a folder with OpenAI's built-in apply_patch, executed by dsh-fs.

    OPENAI_API_KEY=... python examples/openai_apply_patch.py ./project "Fix the typo"

The model gets ``read`` as a function tool and ``{"type": "apply_patch"}``; each V4A patch
runs behind the sandbox and the observation policy: a patch based on a stale read, or
whose context lines do not match exactly, fails and changes nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

import anyio
from openai import AsyncOpenAI

from dsh_fs import Workspace
from dsh_fs.adapters import execute_openai_response, openai_responses_tools


async def run_agent(
    client: AsyncOpenAI, model: str, folder: str, task: str, *, max_turns: int = 20
) -> str:
    """Let the model work on `folder` until it answers without tool calls; return the answer."""
    async with Workspace.sandbox(folder) as workspace:
        session = workspace.session()
        tools: Any = openai_responses_tools(workspace, apply_patch=True)
        items: list[Any] = [{"role": "user", "content": task}]
        for _ in range(max_turns):
            response = await client.responses.create(model=model, input=items, tools=tools)
            replies = await execute_openai_response(session, response.output)
            if not replies:
                return response.output_text
            items += [item.model_dump(exclude_none=True) for item in response.output]
            items += replies
        return f"(stopped after {max_turns} turns)"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="the folder the model may read and patch")
    parser.add_argument("task", help="what to do, in plain words")
    parser.add_argument("--model", default=os.environ.get("OPENAI_MODEL", "gpt-5.1"))
    args = parser.parse_args(argv)

    async def agent() -> str:
        # AsyncOpenAI reads OPENAI_API_KEY and OPENAI_BASE_URL from the environment.
        async with AsyncOpenAI() as client:
            return await run_agent(client, args.model, args.folder, args.task)

    print(anyio.run(agent))
    return 0


if __name__ == "__main__":
    sys.exit(main())
