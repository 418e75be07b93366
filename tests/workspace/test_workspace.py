"""The public API: `Workspace` assembly, sessions, schemas, prompt, and closing."""

from __future__ import annotations

import gc
import os
import weakref
from pathlib import Path

import anyio
import pytest

from dsh_fs import Session, Workspace
from dsh_fs.fs import FS, FS_OBSERVED, FenceOut, FsObserved
from dsh_fs.providers import LocalFileSystem, RuledFileSystem
from dsh_fs.runtime import ToolExecution

pytestmark = pytest.mark.anyio


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path.resolve()


async def test_a_local_workspace_has_the_tools_the_policy_and_the_fs_service(root: Path) -> None:
    async with Workspace.local(root) as workspace:
        assert workspace.context.plugin_names() == [
            "fs-tools",
            "fs-discovery",
            "fs-file-management",
            "fs-dialect-tools",
            "fs-path-rules",
            "fs-observation-policy",
        ]
        # The tools' fs service is the provider behind the change sets' intent records'
        # fence and the path rules (`.git/` protected), and the workspace hands out nothing
        # else.
        service = workspace.context.get(FS)
        assert isinstance(service, RuledFileSystem)
        assert service is workspace.fs
        assert isinstance(service.inner, FenceOut)
        assert service.inner.what == "the change sets' intent records"
        assert isinstance(service.inner.wrapped, LocalFileSystem)
        assert workspace.cwd == str(root)
        # The dialect adapters' internal tools run through the context but are not offered.
        assert workspace.context.tools.names() == [
            "read",
            "write",
            "edit",
            "edit_files",
            "glob",
            "grep",
            "list",
            "move",
            "delete",
            "mkdir",
            "insert",
            "patch",
            "patch_files",
            "delete_file",
        ]
        assert [s["name"] for s in workspace.tool_schemas()] == [
            "read",
            "write",
            "edit",
            "edit_files",
            "glob",
            "grep",
            "list",
            "move",
            "delete",
            "mkdir",
        ]
        assert all(
            set(schema) == {"name", "description", "parameters"}
            for schema in workspace.tool_schemas()
        )
        assert workspace.system_prompt().startswith("Use the read tool")


async def test_a_workspace_without_the_policy_has_only_the_tools(root: Path) -> None:
    async with Workspace.local(root, policy=False) as workspace:
        assert workspace.context.plugin_names() == [
            "fs-tools",
            "fs-discovery",
            "fs-file-management",
            "fs-dialect-tools",
            "fs-path-rules",
        ]


async def test_a_workspace_offers_the_tools_it_is_given_in_the_usual_order(root: Path) -> None:
    async with Workspace.local(root, tools=("grep", "read", "edit")) as workspace:
        assert [s["name"] for s in workspace.tool_schemas()] == ["read", "edit", "grep"]
        assert "glob tool" not in workspace.system_prompt()
        result = await workspace.session().call("write", {"file_path": "a", "content": ""})
        assert result.code == "UNKNOWN_TOOL"
    async with Workspace.local(root, tools="read,write,edit") as workspace:
        assert workspace.context.plugin_names() == [
            "fs-tools",
            "fs-dialect-tools",
            "fs-path-rules",
            "fs-observation-policy",
        ]
    async with Workspace.local(root, tools=("list",)) as workspace:
        assert workspace.context.plugin_names() == [
            "fs-discovery",
            "fs-dialect-tools",
            "fs-path-rules",
            "fs-observation-policy",
        ]


def test_an_unknown_tool_name_is_refused_with_the_choices(root: Path) -> None:
    with pytest.raises(ValueError, match="unknown tool\\(s\\) 'find'; choose from"):
        Workspace.local(root, tools=("read", "find"))


async def test_a_local_workspace_defaults_to_the_process_working_directory() -> None:
    async with Workspace.local() as workspace:
        assert workspace.cwd == os.getcwd()


async def test_sessions_default_to_the_workspace_cwd_and_may_have_their_own(root: Path) -> None:
    (root / "sub").mkdir()
    (root / "sub" / "a.txt").write_text("a\n", encoding="utf-8")
    async with Workspace.local(root) as workspace:
        assert workspace.session().cwd == str(root)
        inner = workspace.session(cwd=root / "sub", id="inner")
        assert inner.cwd == str(root / "sub")
        assert inner.id == "inner"
        assert inner.agent.id == "inner"
        result = await inner.call("read", {"file_path": "a.txt"})
        assert not result.is_error


async def test_a_relative_session_cwd_resolves_against_the_workspace(root: Path) -> None:
    (root / "sub").mkdir()
    (root / "sub" / "a.txt").write_text("a\n", encoding="utf-8")
    async with Workspace.local(root) as workspace:
        result = await workspace.session(cwd="sub").call("read", {"file_path": "a.txt"})
        assert result.text.startswith(f"<path>{root / 'sub' / 'a.txt'}</path>")


async def test_call_passes_the_session_and_call_id_as_the_actor(root: Path) -> None:
    async with Workspace.local(root) as workspace:
        actors: list[object] = []

        def record(event: FsObserved) -> None:
            actors.append(event.actor)

        workspace.context.events.on(FS_OBSERVED, record)
        session = workspace.session()
        await session.call("write", {"file_path": "a.txt", "content": "x"}, call_id="call-1")
        (actor,) = actors
        assert isinstance(actor, ToolExecution)
        assert (actor.tool, actor.session, actor.call_id) == ("write", session.agent, "call-1")


async def test_an_unknown_tool_is_an_error_result(root: Path) -> None:
    async with Workspace.local(root) as workspace:
        result = await workspace.session().call("chmod", {})
        assert (result.is_error, result.code, result.text) == (
            True,
            "UNKNOWN_TOOL",
            'Error: unknown tool "chmod"',
        )


async def test_a_dropped_session_frees_its_agent_session(root: Path) -> None:
    (root / "a.txt").write_text("a\n", encoding="utf-8")
    async with Workspace.local(root) as workspace:
        session: Session | None = workspace.session()
        assert session is not None
        await session.call("read", {"file_path": "a.txt"})
        agent = weakref.ref(session.agent)
        session = None
        gc.collect()
        assert agent() is None


async def test_closing_removes_the_plugins_and_is_idempotent(root: Path) -> None:
    workspace = Workspace.local(root)
    await workspace.aclose()
    await workspace.aclose()
    assert workspace.context.plugin_names() == []
    assert not workspace.context.has(FS)
    assert workspace.tool_schemas() == []


async def test_a_call_on_a_closed_workspace_is_aborted_and_runs_nothing(root: Path) -> None:
    workspace = Workspace.local(root)
    session = workspace.session()
    await workspace.aclose()
    result = await session.call("write", {"file_path": "new.txt", "content": "x"})
    assert (result.code, result.text) == (
        "FS_ABORTED",
        "Error: cannot run write: the workspace is closed",
    )
    assert not (root / "new.txt").exists()


async def test_a_cancelled_write_leaves_the_file_and_the_observation_consistent(
    root: Path,
) -> None:
    (root / "a.txt").write_text("one\n", encoding="utf-8")
    async with Workspace.local(root) as workspace:
        session = workspace.session()
        await session.call("read", {"file_path": "a.txt"})
        with anyio.CancelScope() as scope:
            scope.cancel()
            await session.call("write", {"file_path": "a.txt", "content": "two\n"})
        assert scope.cancelled_caught
        # Cancelled before its write ran: nothing changed, and the read still authorizes.
        assert (root / "a.txt").read_text(encoding="utf-8") == "one\n"
        edited = await session.call(
            "edit", {"file_path": "a.txt", "old_string": "one", "new_string": "1"}
        )
        assert not edited.is_error
        # Cancelled in flight: a write whose worker thread started finishes (never a torn
        # file) and records what it published; either way the session's next edit sees the
        # file as it is: authorized against what is there, never against what is not.
        big = "three\n" * 200_000 + "end\n"
        for delay in (0.0005, 0.002, 0.01):
            with anyio.move_on_after(delay):
                await session.call("write", {"file_path": "a.txt", "content": big})
            content = (root / "a.txt").read_text(encoding="utf-8")
            assert content in ("1\n", big)
            old = "1\n" if content == "1\n" else "end\n"
            after = await session.call(
                "edit", {"file_path": "a.txt", "old_string": old, "new_string": "2\n"}
            )
            assert not after.is_error, after.text
            await session.call("write", {"file_path": "a.txt", "content": "1\n"})


async def test_a_workspace_over_a_sandbox_refuses_outside_writes_with_the_remedy(
    root: Path,
) -> None:
    from dsh_fs.providers import SandboxFileSystem

    inside = root / "inside"
    inside.mkdir()
    outside = root / "outside.txt"
    async with Workspace(SandboxFileSystem([inside]), cwd=str(inside)) as workspace:
        result = await workspace.session().call(
            "write", {"file_path": str(outside), "content": "x"}
        )
    assert result.code == "FS_SANDBOX_DENIED"
    assert result.text == (
        f'Error: cannot write "{outside}": outside the sandbox '
        "[sandbox: file access denied under workspace-write mode]"
        " — use a path inside the workspace, or ask the user for access"
    )
    assert not outside.exists()
