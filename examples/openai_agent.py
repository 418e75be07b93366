"""A small agent loop: an OpenAI-compatible model works on a folder through dsh-fs.

Any Chat Completions endpoint with tool calling works (OpenAI, DeepSeek, vLLM, Ollama):

    OPENAI_BASE_URL=https://api.deepseek.com OPENAI_API_KEY=... OPENAI_MODEL=deepseek-chat \\
        python examples/openai_agent.py ./project "Fix the typo in README.md"

The model gets the read/write/edit tools and their guidance as the system prompt; the
folder is a sandbox, and an edit based on a stale read is refused with a remedy the
model follows by itself.
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
from dsh_fs.adapters import execute_openai_tool_calls, openai_tools


async def run_agent(
    client: AsyncOpenAI, model: str, folder: str, task: str, *, max_turns: int = 20
) -> str:
    """Let the model work on `folder` until it answers without tool calls; return the answer."""
    async with Workspace.sandbox(folder) as workspace:
        session = workspace.session()
        tools: Any = openai_tools(workspace)
        messages: list[Any] = [
            {"role": "system", "content": workspace.system_prompt()},
            {"role": "user", "content": task},
        ]
        for _ in range(max_turns):
            response = await client.chat.completions.create(
                model=model, messages=messages, tools=tools
            )
            message = response.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                return message.content or ""
            for call in message.tool_calls:
                print(f"[tool] {call.model_dump_json(include={'function'})}", file=sys.stderr)
            messages.extend(await execute_openai_tool_calls(session, message.tool_calls))
        return f"(stopped after {max_turns} turns)"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="the folder the agent may read and edit")
    parser.add_argument("task", help="what to do, in plain words")
    parser.add_argument("--model", default=os.environ.get("OPENAI_MODEL", "gpt-4o-mini"))
    args = parser.parse_args(argv)

    async def agent() -> str:
        # AsyncOpenAI reads OPENAI_API_KEY and OPENAI_BASE_URL from the environment.
        async with AsyncOpenAI() as client:
            return await run_agent(client, args.model, args.folder, args.task)

    print(anyio.run(agent))
    return 0


if __name__ == "__main__":
    sys.exit(main())
