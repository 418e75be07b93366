"""`dsh-fs demo`: a short agent session against the real MCP server, as a transcript.

It starts ``dsh-fs mcp`` on a temporary folder over stdio, drives it with the MCP client
SDK and prints what the agent sees. It doubles as a smoke test: it exits 1 if any step
does not turn out as the transcript says. The server's change journal goes into the same
temporary folder, so the demo leaves nothing in the user's journal store (or anywhere else).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import textwrap
from typing import Any

import anyio

__all__ = ["run_demo"]

_NOTES = "# Launch checklist\n\n- write the docs\n- ship it\n"

_APPEND = "import sys; open(sys.argv[1], 'a', encoding='utf-8').write('- tell the team\\n')"


class _DemoFailed(Exception):
    pass


class _Agent:
    """Calls tools through an MCP client and prints each call and its result."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.failures: list[str] = []

    async def call(self, tool: str, arguments: dict[str, Any], *, expect: str | None) -> str:
        shown = json.dumps(arguments, ensure_ascii=False)
        print(f"\n> agent calls {tool} {shown}")
        result = await self._client.call_tool(tool, arguments)
        text = "".join(getattr(block, "text", "") for block in result.content)
        code = (result.meta or {}).get("dsh-fs/code")
        if result.is_error:
            print(f"  refused ({code}):")
        print(_quote(text))
        if code != expect:
            self.failures.append(f"{tool}: expected {expect or 'success'}, got {code or 'success'}")
        return text


def _quote(text: str) -> str:
    return textwrap.indent(text, "  | ", lambda _line: True)


def _say(line: str) -> None:
    print(f"\n# {line}")


async def _session(root: str, outside: str, journal: str) -> None:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    notes = os.path.join(root, "notes.md")
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "dsh_fs", "mcp", "--journal", journal, root]
    )
    print(f"$ dsh-fs mcp --journal {journal} {root}")
    print("  (over stdio, driven by the MCP Python SDK client)")
    with anyio.fail_after(60):
        async with Client(server) as client:
            tools = await client.list_tools()
            print(f"  tools: {', '.join(t.name for t in tools.tools)}")
            agent = _Agent(client)

            _say("The agent finds the file and the line to change.")
            await agent.call("glob", {"pattern": "*.md"}, expect=None)
            await agent.call("grep", {"pattern": "write the docs"}, expect=None)

            _say("It reads the file (a grep match is not a read), then edits it.")
            await agent.call("read", {"file_path": "notes.md"}, expect=None)
            await agent.call(
                "edit",
                {
                    "file_path": "notes.md",
                    "old_string": "- write the docs",
                    "new_string": "- [x] write the docs",
                },
                expect=None,
            )

            _say("Meanwhile another process changes the file.")
            await anyio.run_process([sys.executable, "-c", _APPEND, notes])
            print("  (a separate process appended '- tell the team')")

            _say("The agent's next edit is based on what it saw before: refused as stale.")
            stale_edit = {
                "file_path": "notes.md",
                "old_string": "- ship it",
                "new_string": "- [x] ship it",
            }
            await agent.call("edit", stale_edit, expect="FS_STALE_VERSION")

            _say("It follows the remedy: re-read, then retry.")
            await agent.call("read", {"file_path": "notes.md"}, expect=None)
            await agent.call("edit", stale_edit, expect=None)

            _say("A write outside the workspace is refused by the sandbox.")
            await agent.call(
                "write",
                {"file_path": outside, "content": "exfiltrated\n"},
                expect="FS_SANDBOX_DENIED",
            )

    if agent.failures:
        raise _DemoFailed("; ".join(agent.failures))


def run_demo() -> int:
    """Run the demo in a temporary folder that is removed afterwards, the server's journal
    included; returns the exit status."""
    print("dsh-fs demo: an agent session over MCP, with a stale edit refused\n")
    with tempfile.TemporaryDirectory(prefix="dsh-fs-demo-") as base:
        root = os.path.join(base, "project")
        os.mkdir(root)
        outside = os.path.join(base, "outside.txt")
        # Not the user's journal store: a demo's changes are nobody's history to undo.
        journal = os.path.join(base, "journal")
        notes = os.path.join(root, "notes.md")
        with open(notes, "w", encoding="utf-8") as f:
            f.write(_NOTES)
        try:
            anyio.run(_session, root, outside, journal)
            with open(notes, encoding="utf-8") as f:
                final = f.read()
            if "- [x] ship it" not in final or "- tell the team" not in final:
                raise _DemoFailed("notes.md on disk is not what the transcript says")
            if os.path.exists(outside):
                raise _DemoFailed("the write outside the workspace happened")
        except _DemoFailed as exc:
            print(f"\ndemo FAILED: {exc}", file=sys.stderr)
            return 1
        _say("Final notes.md: the agent's edits and the other process's line are all there.")
        print(_quote(final.rstrip("\n")))
    print("\nDone: the temporary workspace has been removed.")
    return 0
