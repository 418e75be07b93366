"""`Session.set_roots` (SPEC §10, §10.1, MCP roots): a session's own fence beside the
workspace's and the other sessions', roots that leave the given ones in force, the rules
relative to its roots, and a removed root forgetting only what was observed under it."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_fs import Rules, Workspace
from dsh_fs.errors import FsError, FsErrorCode

pytestmark = pytest.mark.anyio


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    top = tmp_path.resolve()
    for name in ("a", "b", "c", "given/inner"):
        (top / name).mkdir(parents=True)
        (top / name / "f.txt").write_text(f"{name}\n", encoding="utf-8")
    return top


def edit(path: Path) -> dict[str, str]:
    return {"file_path": str(path), "old_string": path.parent.name, "new_string": "z"}


async def test_a_sessions_roots_are_its_own_fence_and_base(tree: Path) -> None:
    async with Workspace.sandbox(tree / "c") as workspace:
        fenced, other = workspace.session(), workspace.session()
        kept = fenced.set_roots([str(tree / "a"), str(tree / "b")], replace=True)
        relative = await fenced.call("read", {"file_path": "f.txt"})
        outside = await fenced.call("read", {"file_path": str(tree / "c" / "f.txt")})
        others = await other.call("read", {"file_path": "f.txt"})
        others_outside = await other.call("read", {"file_path": str(tree / "a" / "f.txt")})
    assert kept == (str(tree / "a"), str(tree / "b"))
    assert fenced.roots == kept
    assert other.roots is None
    assert "1: a" in relative.text
    assert outside.code == "FS_SANDBOX_DENIED"
    assert "1: c" in others.text
    assert others_outside.code == "FS_SANDBOX_DENIED"


async def test_narrowing_keeps_only_what_lies_inside_the_given_roots(tree: Path) -> None:
    async with Workspace.sandbox(tree / "given") as workspace:
        session = workspace.session()
        kept = session.set_roots([str(tree / "given" / "inner"), str(tree / "a")], replace=False)
        widened = session.set_roots([str(tree)], replace=False)
    assert kept == (str(tree / "given" / "inner"),)
    assert widened == (str(tree / "given"),)


async def test_not_strict_roots_that_overlap_none_leave_the_given_roots_in_force(
    tree: Path,
) -> None:
    async with Workspace.sandbox(tree / "given") as workspace:
        session = workspace.session()
        disjoint = session.set_roots([str(tree / "a")], replace=False, strict=False)
        disjoint_client = session.client_roots
        read = await session.call("read", {"file_path": "inner/f.txt"})
        empty = session.set_roots([], replace=False, strict=False)
        narrowed = session.set_roots([str(tree / "given" / "inner")], replace=False, strict=False)
        beside = await session.call("read", {"file_path": str(tree / "given" / "x.txt")})
        strict = session.set_roots([str(tree / "a")], replace=False)
        refused = await session.call("read", {"file_path": str(tree / "given/inner/f.txt")})
    assert disjoint == empty == (str(tree / "given"),)
    assert disjoint_client is None
    assert "1: given/inner" in read.text
    assert narrowed == (str(tree / "given" / "inner"),)
    assert f"outside the client's roots ({tree}/given/inner)" in beside.text
    assert strict == ()
    assert f"outside the client's roots ({tree}/a)" in refused.text


async def test_no_root_left_refuses_every_path_saying_so(tree: Path) -> None:
    async with Workspace.sandbox(tree / "c") as workspace:
        session = workspace.session()
        kept = session.set_roots([str(tree / "no-such"), str(tree / "a" / "f.txt")], replace=True)
        result = await session.call("read", {"file_path": str(tree / "c" / "f.txt")})
    assert kept == ()
    assert result.code == "FS_SANDBOX_DENIED"
    assert "the MCP client named no roots" in result.text
    none = Workspace.sandbox(tree / "c")
    try:
        session = none.session()
        session.set_roots([], replace=True)
        refused = await session.call("read", {"file_path": "f.txt"})
    finally:
        await none.aclose()
    assert refused.code == "FS_SANDBOX_DENIED"
    assert "the MCP client named no roots" in refused.text


async def test_a_removed_root_forgets_only_what_was_observed_under_it(tree: Path) -> None:
    async with Workspace.sandbox(tree / "c") as workspace:
        session, other = workspace.session(), workspace.session()
        session.set_roots([str(tree / "a"), str(tree / "b")], replace=True)
        other.set_roots([str(tree / "b")], replace=True)
        for path in (tree / "a" / "f.txt", tree / "b" / "f.txt"):
            await session.call("read", {"file_path": str(path)})
        await other.call("read", {"file_path": str(tree / "b" / "f.txt")})
        session.set_roots([str(tree / "a")], replace=True)
        session.set_roots([str(tree / "a"), str(tree / "b")], replace=True)
        forgotten = await session.call("edit", edit(tree / "b" / "f.txt"))
        kept = await session.call("edit", edit(tree / "a" / "f.txt"))
        others = await other.call("edit", edit(tree / "b" / "f.txt"))
    assert forgotten.code == "FS_NOT_OBSERVED"
    assert not kept.is_error, kept.text
    assert not others.is_error, others.text
    assert (tree / "a" / "f.txt").read_text(encoding="utf-8") == "z\n"


async def test_the_rules_apply_relative_to_a_sessions_roots(tree: Path) -> None:
    (tree / "a" / ".env").write_text("SECRET=1\n", encoding="utf-8")
    (tree / "a" / "only").mkdir()
    (tree / "a" / "only" / "x.txt").write_text("x\n", encoding="utf-8")
    rules = Rules(deny=[".env"], protect=["/only"])
    async with Workspace.sandbox(tree / "c", rules=rules) as workspace:
        session = workspace.session()
        session.set_roots([str(tree / "a")], replace=True)
        secret = await session.call("read", {"file_path": ".env"})
        await session.call("read", {"file_path": "only/x.txt"})
        protected = await session.call(
            "edit", {"file_path": "only/x.txt", "old_string": "x", "new_string": "y"}
        )
    assert secret.code == "FS_NOT_FOUND"
    assert protected.code == "FS_SANDBOX_DENIED"
    assert 'protected by rule "/only"' in protected.text
    assert (tree / "a" / "only" / "x.txt").read_text(encoding="utf-8") == "x\n"


async def test_closing_the_workspace_closes_every_sessions_fence(tree: Path) -> None:
    workspace = Workspace.sandbox(tree / "c")
    session = workspace.session()
    session.set_roots([str(tree / "a")], replace=True)
    fence = session._fence
    await workspace.aclose()
    assert fence is not None
    target = await fence.resolve(str(tree / "a" / "f.txt"))
    with pytest.raises(FsError) as refused:
        await fence.read_text(target)
    assert refused.value.code is FsErrorCode.ABORTED


async def test_set_roots_on_a_workspace_without_a_sandbox_changes_nothing(tree: Path) -> None:
    async with Workspace.local(tree / "c") as workspace:
        session = workspace.session()
        assert session.set_roots([str(tree / "a")], replace=True) is None
        result = await session.call("read", {"file_path": "f.txt"})
    assert "1: c" in result.text
