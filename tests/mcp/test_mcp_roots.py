"""MCP roots (SPEC §10, §10.1) over stdio, with the real MCP SDK client declaring roots
(`list_roots_callback`): the client's roots are the fence when the server got no ROOT; with
ROOTs, roots that overlap them narrow them while an empty list or roots elsewhere (the MCP
Inspector's ``[]``, Claude Code's folder) leave them in force; a refusal the client's roots
cause names them; ``--client-roots strict|off``; roots are asked again on
``notifications/roots/list_changed``, and with no ROOT a client that names none leaves every
path refused. In both protocol eras: the handshake era is asked with a ``roots/list``
request, the 2026-07-28 era (served by the SDK) with an input request."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import ListRootsResult, Root

from .mcp_testing import BOTH_ERAS, HANDSHAKE, Era
from .test_mcp_stdio import code_of, text_of

TIMEOUT = 180

pytestmark = [
    pytest.mark.anyio,
    # The SDK warns when it serializes a root it would not have validated (a non-file: URI
    # sent on purpose); here that is the point.
    pytest.mark.filterwarnings("ignore::UserWarning"),
]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    top = tmp_path.resolve()
    for name in ("a", "b", "cwd", "given/inner"):
        (top / name).mkdir(parents=True)
        (top / name / "f.txt").write_text(f"{name}\n", encoding="utf-8")
    return top


class Roots:
    """The client's roots, changeable during a test; `callback` is what the SDK calls."""

    def __init__(self, *uris: str) -> None:
        self.uris = list(uris)

        async def callback(context: Any) -> ListRootsResult:
            # Built without validation: a client may send what its SDK would refuse.
            return ListRootsResult(roots=[Root.model_construct(uri=uri) for uri in self.uris])

        self.callback = callback


def server(cwd: Path, *args: str) -> StdioServerParameters:
    # The wait for the client's roots is long here: the test must not depend on load.
    env = {**os.environ, "DSH_FS_MCP_ROOTS_WAIT": "120"}
    return StdioServerParameters(
        command=sys.executable, args=["-m", "dsh_fs", "mcp", *args], cwd=str(cwd), env=env
    )


@BOTH_ERAS
async def test_without_a_root_the_clients_roots_are_the_fence_and_the_first_is_the_base(
    tree: Path, era: Era
) -> None:
    roots = Roots(
        "https://example.com/x", (tree / "a").as_uri(), "file:///no/such", (tree / "b").as_uri()
    )
    with anyio.fail_after(TIMEOUT):
        async with Client(server(tree / "cwd"), mode=era, list_roots_callback=roots.callback) as c:
            relative = await c.call_tool("read", {"file_path": "f.txt"})
            second = await c.call_tool("read", {"file_path": str(tree / "b" / "f.txt")})
            cwd = await c.call_tool("read", {"file_path": str(tree / "cwd" / "f.txt")})
    assert "1: a" in text_of(relative)
    assert "1: b" in text_of(second)
    assert code_of(cwd) == "FS_SANDBOX_DENIED"
    assert f"outside the client's roots ({tree}/a, {tree}/b)" in text_of(cwd)


@BOTH_ERAS
async def test_with_roots_given_the_client_can_narrow_but_never_widen(tree: Path, era: Era) -> None:
    roots = Roots((tree / "given" / "inner").as_uri(), (tree / "a").as_uri())
    with anyio.fail_after(TIMEOUT):
        async with Client(
            server(tree, str(tree / "given")), mode=era, list_roots_callback=roots.callback
        ) as c:
            inner = await c.call_tool("read", {"file_path": str(tree / "given/inner/f.txt")})
            outside = await c.call_tool("read", {"file_path": str(tree / "a" / "f.txt")})
            await c.call_tool("write", {"file_path": str(tree / "given" / "g.txt"), "content": "x"})
    assert "1: given/inner" in text_of(inner)
    assert code_of(outside) == "FS_SANDBOX_DENIED"
    assert not (tree / "given" / "g.txt").exists()


async def test_a_changed_list_replaces_the_roots_and_drops_only_what_was_seen_under_the_removed(
    tree: Path,
) -> None:
    roots = Roots((tree / "a").as_uri(), (tree / "b").as_uri())
    with anyio.fail_after(TIMEOUT):
        async with Client(
            server(tree / "cwd"), mode=HANDSHAKE, list_roots_callback=roots.callback
        ) as c:
            await c.call_tool("read", {"file_path": str(tree / "a" / "f.txt")})
            await c.call_tool("read", {"file_path": str(tree / "b" / "f.txt")})
            roots.uris = [(tree / "a").as_uri()]
            await c.send_roots_list_changed()
            # The next call waits for the answer to the server's new roots/list.
            gone = await c.call_tool("read", {"file_path": str(tree / "b" / "f.txt")})
            kept = await c.call_tool("edit", edit(tree / "a" / "f.txt"))
            # b comes back: what was seen there before it left is not trusted again.
            roots.uris = [(tree / "a").as_uri(), (tree / "b").as_uri()]
            await c.send_roots_list_changed()
            back = await c.call_tool("edit", edit(tree / "b" / "f.txt"))
    assert code_of(gone) == "FS_SANDBOX_DENIED"
    assert not kept.is_error, text_of(kept)
    assert (tree / "a" / "f.txt").read_text(encoding="utf-8") == "z\n"
    assert code_of(back) == "FS_NOT_OBSERVED"
    assert (tree / "b" / "f.txt").read_text(encoding="utf-8") == "b\n"


@BOTH_ERAS
async def test_with_roots_given_an_empty_list_leaves_them_in_force(tree: Path, era: Era) -> None:
    """The MCP Inspector (2.x) declares roots and answers ``[]``."""
    with anyio.fail_after(TIMEOUT):
        async with Client(
            server(tree, str(tree / "given")), mode=era, list_roots_callback=Roots().callback
        ) as c:
            read = await c.call_tool("read", {"file_path": "inner/f.txt"})
            edited = await c.call_tool("edit", edit(tree / "given" / "inner" / "f.txt"))
            outside = await c.call_tool("read", {"file_path": str(tree / "a" / "f.txt")})
    assert "1: given/inner" in text_of(read)
    assert not edited.is_error, text_of(edited)
    assert (tree / "given" / "inner" / "f.txt").read_text(encoding="utf-8") == "given/z\n"
    assert code_of(outside) == "FS_SANDBOX_DENIED"
    assert "outside the sandbox" in text_of(outside)
    assert "named no roots" not in text_of(outside)


@BOTH_ERAS
async def test_a_client_started_in_another_folder_reads_and_edits_inside_the_served_root(
    tree: Path, era: Era
) -> None:
    """Claude Code sends the folder it was started in as its root: elsewhere than the ROOT
    its configuration names, that root leaves the ROOT in force."""
    roots = Roots((tree / "a").as_uri())
    target = tree / "given" / "inner" / "f.txt"
    with anyio.fail_after(TIMEOUT):
        async with Client(
            server(tree / "a", str(tree / "given")), mode=era, list_roots_callback=roots.callback
        ) as c:
            read = await c.call_tool("read", {"file_path": str(target)})
            edited = await c.call_tool("edit", edit(target))
            relative = await c.call_tool("read", {"file_path": "inner/f.txt"})
            its_own = await c.call_tool("read", {"file_path": str(tree / "a" / "f.txt")})
    assert "1: given/inner" in text_of(read)
    assert not edited.is_error, text_of(edited)
    assert target.read_text(encoding="utf-8") == "given/z\n"
    assert "1: given/z" in text_of(relative)  # relative to the served ROOT, not the client's
    # The client's own folder is not served: the operator's ROOTs decide.
    assert code_of(its_own) == "FS_SANDBOX_DENIED"
    assert "outside the sandbox" in text_of(its_own)


@BOTH_ERAS
async def test_overlapping_roots_narrow_and_a_refusal_they_cause_names_them(
    tree: Path, era: Era
) -> None:
    (tree / "given" / "g.txt").write_text("g\n", encoding="utf-8")
    roots = Roots((tree / "given" / "inner").as_uri(), (tree / "b").as_uri())
    with anyio.fail_after(TIMEOUT):
        async with Client(
            server(tree, str(tree / "given")), mode=era, list_roots_callback=roots.callback
        ) as c:
            inner = await c.call_tool("read", {"file_path": str(tree / "given/inner/f.txt")})
            beside = await c.call_tool("read", {"file_path": str(tree / "given" / "g.txt")})
            outside = await c.call_tool("read", {"file_path": str(tree / "a" / "f.txt")})
    assert "1: given/inner" in text_of(inner)
    assert code_of(beside) == "FS_SANDBOX_DENIED"
    assert text_of(beside).startswith(
        f'Error: cannot read "{tree}/given/g.txt": outside the client\'s roots '
        f"({tree}/given/inner, {tree}/b) [sandbox:"
    )
    assert "outside the sandbox" in text_of(outside)


@BOTH_ERAS
async def test_client_roots_strict_serves_only_the_overlap_and_none_refuses_every_path(
    tree: Path, era: Era
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with Client(
            server(tree, "--client-roots", "strict", str(tree / "given")),
            mode=era,
            list_roots_callback=Roots().callback,
        ) as c:
            empty = await c.call_tool("read", {"file_path": "inner/f.txt"})
        async with Client(
            server(tree, "--client-roots", "strict", str(tree / "given")),
            mode=era,
            list_roots_callback=Roots((tree / "a").as_uri()).callback,
        ) as c:
            disjoint = await c.call_tool("read", {"file_path": "inner/f.txt"})
    assert code_of(empty) == "FS_SANDBOX_DENIED"
    # A ROOT was given: not "named no roots", which would send the user after the client.
    assert "outside the client's roots (none named)" in text_of(empty)
    assert code_of(disjoint) == "FS_SANDBOX_DENIED"
    assert f"outside the client's roots ({tree}/a)" in text_of(disjoint)


async def test_client_roots_off_ignores_the_clients_roots(tree: Path) -> None:
    (tree / "given" / "g.txt").write_text("g\n", encoding="utf-8")
    roots = Roots((tree / "given" / "inner").as_uri())
    with anyio.fail_after(TIMEOUT):
        async with Client(
            server(tree, "--client-roots", "off", str(tree / "given")),
            mode=HANDSHAKE,
            list_roots_callback=roots.callback,
        ) as c:
            beside = await c.call_tool("read", {"file_path": str(tree / "given" / "g.txt")})
        async with Client(
            server(tree / "cwd", "--client-roots", "off"),
            mode=HANDSHAKE,
            list_roots_callback=roots.callback,
        ) as c:
            cwd = await c.call_tool("read", {"file_path": "f.txt"})
    assert "1: g" in text_of(beside)
    assert "1: cwd" in text_of(cwd)


def edit(path: Path) -> dict[str, str]:
    return {"file_path": str(path), "old_string": path.parent.name, "new_string": "z"}


async def until_refused(client: Client, path: str) -> Any:
    """Read `path` until the fence refuses it: the server asks for the roots again after
    ``list_changed`` and the next calls see the answer once it arrives (no timing)."""
    while True:
        result = await client.call_tool("read", {"file_path": path})
        if result.is_error:
            return result


@BOTH_ERAS
async def test_without_a_root_a_client_that_names_no_roots_gets_every_path_refused(
    tree: Path, era: Era
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with Client(
            server(tree / "cwd"), mode=era, list_roots_callback=Roots().callback
        ) as c:
            result = await c.call_tool("read", {"file_path": "f.txt"})
    assert code_of(result) == "FS_SANDBOX_DENIED"
    assert "the MCP client named no roots" in text_of(result)


@BOTH_ERAS
async def test_a_client_without_the_capability_keeps_the_command_line_fence(
    tree: Path, era: Era
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with Client(server(tree / "cwd"), mode=era) as c:
            result = await c.call_tool("read", {"file_path": "f.txt"})
    assert "1: cwd" in text_of(result)


async def test_rules_apply_under_the_clients_roots_too(tree: Path) -> None:
    (tree / "a" / ".env").write_text("SECRET=1\n", encoding="utf-8")
    (tree / "a" / "keys").mkdir()
    (tree / "a" / "keys" / "k.pem").write_text("SECRET\n", encoding="utf-8")
    roots = Roots((tree / "a").as_uri())
    with anyio.fail_after(TIMEOUT):
        async with Client(
            server(tree / "cwd", "--deny", ".env", "--deny", "keys/"),
            mode=HANDSHAKE,
            list_roots_callback=roots.callback,
        ) as c:
            env = await c.call_tool("read", {"file_path": ".env"})
            pem = await c.call_tool("read", {"file_path": "keys/k.pem"})
            found = await c.call_tool("grep", {"pattern": "SECRET"})
            write = await c.call_tool("write", {"file_path": "keys/new.pem", "content": "x"})
    assert code_of(env) == "FS_NOT_FOUND"
    assert code_of(pem) == "FS_NOT_FOUND"
    assert "SECRET" not in text_of(found)
    assert code_of(write) == "FS_SANDBOX_DENIED"
    assert 'denied by rule "keys/"' in text_of(write)
