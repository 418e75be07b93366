"""Quickstart: an agent session reads, edits, and is refused a stale edit."""

import tempfile

import anyio

from dsh_fs import Workspace


async def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        app = anyio.Path(folder, "app.py")
        await app.write_text("def greet():\n    return 'hi'\n", encoding="utf-8")

        async with Workspace.sandbox(folder) as ws:  # read/write/edit fenced to `folder`
            agent = ws.session()  # one agent conversation = one observation owner

            result = await agent.call("read", {"file_path": "app.py"})
            print(result.text)

            result = await agent.call(
                "edit", {"file_path": "app.py", "old_string": "'hi'", "new_string": "'hello'"}
            )
            print(result.text)

            # Someone else changes the file behind the agent's back...
            await app.write_text("def greet():\n    return 'hey'\n", encoding="utf-8")

            # ...so the agent's next edit is refused instead of clobbering that change.
            result = await agent.call(
                "edit", {"file_path": "app.py", "old_string": "greet", "new_string": "welcome"}
            )
            print(result.code, "|", result.text)


anyio.run(main)
