"""The deep agents backend: `create_deep_agent`'s own loop and tools, on our workspace."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

pytest.importorskip("deepagents", reason="deepagents supports Python 3.11+ only")

from deepagents import create_deep_agent
from langchain_core.messages import AIMessage, BaseMessage

from dsh_fs import Workspace
from dsh_fs.adapters import SyncWorkspace, WorkspaceBackend
from dsh_fs.discovery import DiscoveryConfig
from dsh_fs.workspace import Session

from ..images import png
from ..scripted_chat import ScriptedChatModel, Step, call, say, tool_messages

pytestmark = pytest.mark.anyio

APP = "def greet():\n    return 'helo'\n"


def edit(old: str, new: str, call_id: str) -> Step:
    return call(
        "edit_file", {"file_path": "/app.py", "old_string": old, "new_string": new}, call_id
    )


def changed_on_disk(path: Path, content: str, then: Step) -> Step:
    """A turn during which someone else rewrites `path`, before the model's call."""

    def step(messages: list[BaseMessage]) -> AIMessage:
        path.write_text(content, encoding="utf-8")
        return then(messages)

    return step


async def test_a_stale_edit_then_a_miss_reach_the_deep_agent_and_it_recovers(
    session: Session, root: Path
) -> None:
    app = root / "app.py"
    app.write_text(APP, encoding="utf-8")
    changed = "def greet():\n    return 'helo'  # changed\n"
    model = ScriptedChatModel(
        script=[
            call("read_file", {"file_path": "/app.py"}, "c1"),
            changed_on_disk(app, changed, edit("'helo'", "'hello'", "c2")),
            call("read_file", {"file_path": "/app.py"}, "c3"),
            edit("retrun 'helo'", "return 'hello'", "c4"),
            edit("return 'helo'", "return 'hello'", "c5"),
            say("Fixed."),
        ]
    )
    agent = create_deep_agent(model=model, backend=WorkspaceBackend(session))
    result = await agent.ainvoke({"messages": [{"role": "user", "content": "Fix app.py"}]})

    assert result["messages"][-1].text == "Fixed."
    first, stale, again, miss, fixed = tool_messages(model.seen[-1])
    assert first.status == "success"
    assert "return 'helo'" in first.text
    assert stale.status == "error"
    assert stale.content == (
        f'Error: cannot edit "{app}": file changed since it was read'
        " \u2014 re-read the file, then retry"
    )
    assert "# changed" in again.text
    assert miss.status == "error"
    assert miss.content == (
        f'Error: old_string was not found in "{app}"\n'
        "The closest text in the file is at line 2; it differs from old_string:\n"
        "- line 2 differs at column 8: the file has 'return' where old_string has 'retrun'\n"
        "2:     return 'helo'  # changed\n"
        'To edit these lines, copy old_string from them exactly, without the "<n>: " prefixes.'
    )
    assert fixed.status == "success"
    assert fixed.content == "Successfully replaced 1 instance(s) of the string in '/app.py'"
    assert app.read_bytes() == b"def greet():\n    return 'hello'  # changed\n"


def test_a_sync_session_runs_the_deep_agent_synchronously(tmp_path: Path) -> None:
    app = tmp_path / "app.py"
    app.write_text(APP, encoding="utf-8")
    model = ScriptedChatModel(
        script=[
            call("write_file", {"file_path": "/app.py", "content": "gone"}, "c1"),
            call("read_file", {"file_path": "/app.py"}, "c2"),
            edit("'helo'", "'hello'", "c3"),
            say("Fixed."),
        ]
    )
    with SyncWorkspace.sandbox(tmp_path) as workspace:
        agent = create_deep_agent(model=model, backend=WorkspaceBackend(workspace.session()))
        result = agent.invoke({"messages": [{"role": "user", "content": "Fix app.py"}]})
    refused, _, fixed = tool_messages(result["messages"])
    assert refused.status == "error"
    assert refused.content == (
        f'Error: cannot overwrite existing "{app.resolve()}" without reading it first'
        " \u2014 read the file, then retry"
    )
    assert fixed.status == "success"
    assert app.read_bytes() == b"def greet():\n    return 'hello'\n"


async def test_paths_are_virtual_with_the_root_as_slash(session: Session, root: Path) -> None:
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("call(a.b)\naxb\n", encoding="utf-8")
    (root / "notes.txt").write_text("hi\n", encoding="utf-8")
    backend = WorkspaceBackend(session)

    listing = await backend.als("/")
    assert listing.entries is not None
    assert [(e["path"], e.get("is_dir")) for e in listing.entries] == [
        ("/notes.txt", False),
        ("/src", True),
    ]
    assert listing.entries[0].get("size") == 3
    found = await backend.aglob("*.py")
    assert found.matches is not None
    assert [m["path"] for m in found.matches] == ["/src/app.py"]
    # Literal, not a regular expression: the parentheses and the dot are text.
    hits = await backend.agrep("(a.b)", "/src")
    assert hits.matches == [{"path": "/src/app.py", "line": 1, "text": "call(a.b)"}]
    assert (await backend.agrep("a.b", glob="*.txt")).matches == []
    written = await backend.awrite("/src/new.py", "x = 1\n")
    assert written.path == "/src/new.py"
    assert (root / "src" / "new.py").read_text(encoding="utf-8") == "x = 1\n"
    # A path as our messages spell it (the root's absolute path) is taken as it is.
    spelled = await backend.aread(str(root / "notes.txt"))
    assert spelled.file_data is not None
    assert spelled.file_data["content"] == "hi"


async def test_the_fence_refuses_in_our_words(root: Path) -> None:
    outside = root.parent / "secret.txt"
    outside.write_text("no\n", encoding="utf-8")
    async with Workspace.sandbox(root) as workspace:
        backend = WorkspaceBackend(workspace.session(), virtual=False)
        refused = await backend.aread(str(outside))
        assert refused.error == (
            await workspace.session().call("read", {"file_path": str(outside)})
        ).text.removeprefix("Error: ")
        assert refused.error is not None
        assert "outside the sandbox" in refused.error
        written = await backend.awrite(str(outside), "yes")
        assert written.error is not None
        assert written.error.startswith(f'Error: cannot write "{outside}": outside the sandbox')
        (download,) = await backend.adownload_files([str(outside)])
        assert download.error == "permission_denied"
        assert download.content is None
    assert outside.read_text(encoding="utf-8") == "no\n"


async def test_read_windows_map_to_our_lines(session: Session, root: Path) -> None:
    (root / "five.txt").write_text("1\n2\n3\n4\n5\n", encoding="utf-8")
    backend = WorkspaceBackend(session)
    window = await backend.aread("/five.txt", offset=2, limit=2)
    assert window.file_data is not None
    assert window.file_data["content"] == "3\n4"
    assert (window.start_line, window.end_line, window.total_lines) == (3, 4, 5)
    assert window.next_offset == 4
    last = await backend.aread("/five.txt", offset=3)
    assert (last.start_line, last.end_line, last.next_offset) == (4, 5, None)
    nothing = await backend.aread("/five.txt", limit=0)
    assert nothing.file_data is not None
    assert nothing.file_data["content"] == ""
    assert nothing.start_line is None
    missing = await backend.aread("/nope.txt")
    assert missing.error == f'cannot read "{root / "nope.txt"}": not found'


async def test_an_image_is_read_as_base64(session: Session, root: Path) -> None:
    (root / "dot.png").write_bytes(png())
    read = await WorkspaceBackend(session).aread("/dot.png")
    assert read.file_data is not None
    assert read.file_data["encoding"] == "base64"
    assert base64.b64decode(read.file_data["content"]) == png()


async def test_uploads_create_text_and_never_clobber_what_was_not_read(
    session: Session, root: Path
) -> None:
    (root / "kept.txt").write_text("mine\n", encoding="utf-8")
    backend = WorkspaceBackend(session)
    created, clobber, binary = await backend.aupload_files(
        [("/new.txt", b"fresh\n"), ("/kept.txt", b"theirs\n"), ("/blob.bin", b"\xff\x00")]
    )
    assert created.error is None
    assert (root / "new.txt").read_bytes() == b"fresh\n"
    assert clobber.error is not None
    assert clobber.error.startswith(f'Error: cannot overwrite existing "{root / "kept.txt"}"')
    assert (root / "kept.txt").read_bytes() == b"mine\n"
    assert binary.error == "Error: the workspace stores UTF-8 text only"
    assert not (root / "blob.bin").exists()
    got, missing, directory = await backend.adownload_files(["/kept.txt", "/nope", "/"])
    assert got.content == b"mine\n"
    assert missing.error == "file_not_found"
    assert directory.error == "is_directory"


async def test_delete_goes_through_our_delete_tool(session: Session, root: Path) -> None:
    (root / "old.txt").write_text("x\n", encoding="utf-8")
    backend = WorkspaceBackend(session)
    unread = await backend.adelete("/old.txt")
    assert unread.error is not None
    assert (root / "old.txt").exists()
    await backend.aread("/old.txt")
    assert (await backend.adelete("/old.txt")).path == "/old.txt"
    assert not (root / "old.txt").exists()


async def test_an_async_session_called_synchronously_says_what_to_use(session: Session) -> None:
    with pytest.raises(RuntimeError, match=r"WorkspaceBackend\.read .*SyncSession"):
        WorkspaceBackend(session).read("/x.txt")


async def test_an_operation_whose_tool_is_not_offered_is_refused(root: Path) -> None:
    (root / "app.py").write_text(APP, encoding="utf-8")
    async with Workspace.sandbox(root, tools=("read", "list")) as workspace:
        backend = WorkspaceBackend(workspace.session())
        assert (await backend.aread("/app.py")).error is None
        refused = await backend.aedit("/app.py", "helo", "hello")
        assert refused.error == (await workspace.session().call("edit", {})).text
        assert refused.error is not None
        assert refused.error.startswith("Error: ")
    assert (root / "app.py").read_text(encoding="utf-8") == APP


@pytest.mark.parametrize("native", [True, False], ids=["ripgrep", "pure"])
async def test_grep_is_literal_on_both_engines(root: Path, native: bool) -> None:
    line = "x = a-b#c&d~e{1}[0]^$|+*?.(\\)"
    (root / "weird.txt").write_text(f"{line}\naxb-bcd\n", encoding="utf-8")
    async with Workspace.sandbox(root, discovery=DiscoveryConfig(native=native)) as workspace:
        backend = WorkspaceBackend(workspace.session())
        whole = await backend.agrep(line)
        assert whole.matches == [{"path": "/weird.txt", "line": 1, "text": line}]
        assert (await backend.agrep("a.b")).matches == []
        assert (await backend.agrep("e{1}[0]")).matches == whole.matches
