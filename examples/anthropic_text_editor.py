"""Claude edits a folder with its own text editor tool, executed safely by dsh-fs.

    ANTHROPIC_API_KEY=... python examples/anthropic_text_editor.py ./project "Fix the typo"

Claude gets ``str_replace_based_edit_tool`` (``text_editor_20250728``), the tool it was
trained on; dsh-fs runs each command behind the sandbox and the observation policy, so a
``str_replace`` based on a stale ``view`` is refused and Claude views the file again.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

import anyio
from anthropic import AsyncAnthropic

from dsh_fs import Workspace
from dsh_fs.adapters import anthropic_tool_results, anthropic_tools


async def run_agent(
    client: AsyncAnthropic, model: str, folder: str, task: str, *, max_turns: int = 20
) -> str:
    """Let Claude work on `folder` until it answers without tool calls; return the answer."""
    async with Workspace.sandbox(folder) as workspace:
        session = workspace.session()
        tools: Any = anthropic_tools(workspace, text_editor=True)
        messages: list[Any] = [{"role": "user", "content": task}]
        for _ in range(max_turns):
            response = await client.messages.create(
                model=model, max_tokens=4096, tools=tools, messages=messages
            )
            messages.append({"role": "assistant", "content": response.content})
            if response.stop_reason != "tool_use":
                return "".join(block.text for block in response.content if block.type == "text")
            results = await anthropic_tool_results(session, response.content)
            messages.append({"role": "user", "content": results})
        return f"(stopped after {max_turns} turns)"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="the folder Claude may view and edit")
    parser.add_argument("task", help="what to do, in plain words")
    parser.add_argument("--model", default=os.environ.get("ANTHROPIC_MODEL", "claude-sonnet-4-5"))
    args = parser.parse_args(argv)

    async def agent() -> str:
        # AsyncAnthropic reads ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL from the environment.
        async with AsyncAnthropic() as client:
            return await run_agent(client, args.model, args.folder, args.task)

    print(anyio.run(agent))
    return 0


if __name__ == "__main__":
    sys.exit(main())
