"""MCP roots (SPEC §10, §10.1) over streamable HTTP, with the real MCP SDK client declaring
roots (`list_roots_callback`): each MCP session is fenced in to its own client's roots (two
clients of one server do not share a fence), narrowed when the server got ROOTs and they
overlap, left out (logged once) when they are empty or elsewhere, asked again after
``notifications/roots/list_changed``, which drops only what was seen under a removed root."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from .http_testing import client, http_server
from .test_mcp_roots import Roots, edit, until_refused
from .test_mcp_stdio import code_of, text_of

TIMEOUT = 180

pytestmark = [
    pytest.mark.anyio,
    # The SDK warns when it serializes a root it would not have validated (a non-file: URI
    # sent on purpose), and that roots are deprecated in the 2026-07-28 era.
    pytest.mark.filterwarnings("ignore::UserWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

WAIT = {"DSH_FS_MCP_ROOTS_WAIT": "120"}
"""The wait for a client's roots is long here: the tests must not depend on load."""


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    top = tmp_path.resolve()
    for name in ("a", "b", "cwd", "given/inner"):
        (top / name).mkdir(parents=True)
        (top / name / "f.txt").write_text(f"{name}\n", encoding="utf-8")
    return top


def declaring(roots: Roots) -> dict[str, Any]:
    return {"list_roots_callback": roots.callback}


async def read(c: Client, path: str | Path) -> Any:
    return await c.call_tool("read", {"file_path": str(path)})


async def test_without_a_root_each_session_is_fenced_in_to_its_own_clients_roots(
    tree: Path,
) -> None:
    first = Roots("https://example.com/x", (tree / "a").as_uri(), "file:///no/such")
    second = Roots((tree / "b").as_uri())
    with anyio.fail_after(TIMEOUT):
        async with (
            http_server(None, cwd=tree / "cwd", env=WAIT) as served,
            client(served.url, options=declaring(first)) as one,
            client(served.url, options=declaring(second)) as two,
        ):
            one_relative = await read(one, "f.txt")
            two_relative = await read(two, "f.txt")
            one_across = await read(one, tree / "b" / "f.txt")
            two_across = await read(two, tree / "a" / "f.txt")
            cwd = await read(one, tree / "cwd" / "f.txt")
            written = await two.call_tool(
                "write", {"file_path": str(tree / "a" / "new.txt"), "content": "x"}
            )
    assert "1: a" in text_of(one_relative)
    assert "1: b" in text_of(two_relative)
    assert code_of(one_across) == "FS_SANDBOX_DENIED"
    assert code_of(two_across) == "FS_SANDBOX_DENIED"
    assert code_of(cwd) == "FS_SANDBOX_DENIED"
    assert code_of(written) == "FS_SANDBOX_DENIED"
    assert not (tree / "a" / "new.txt").exists()
    assert "refused root https://example.com/x: not a local file: URI" in served.stderr
    assert "refused root file:///no/such: not an existing directory" in served.stderr


async def test_with_roots_given_a_client_over_http_can_narrow_but_never_widen(tree: Path) -> None:
    (tree / "given" / "f.txt").write_text("given\n", encoding="utf-8")
    roots = Roots((tree / "given" / "inner").as_uri(), (tree / "a").as_uri())
    with anyio.fail_after(TIMEOUT):
        async with (
            http_server(tree / "given", env=WAIT) as served,
            client(served.url, options=declaring(roots)) as c,
            client(served.url) as plain,
        ):
            inner = await read(c, tree / "given" / "inner" / "f.txt")
            beside = await read(c, tree / "given" / "f.txt")
            widened = await read(c, tree / "a" / "f.txt")
            above = await c.call_tool(
                "write", {"file_path": str(tree / "given" / "g.txt"), "content": "x"}
            )
            # A client without the capability keeps the command line's fence.
            given = await read(plain, tree / "given" / "f.txt")
    assert "1: given/inner" in text_of(inner)
    assert code_of(beside) == "FS_SANDBOX_DENIED"
    assert code_of(widened) == "FS_SANDBOX_DENIED"
    assert code_of(above) == "FS_SANDBOX_DENIED"
    assert not (tree / "given" / "g.txt").exists()
    assert "1: given" in text_of(given)


async def test_list_changed_over_http_drops_only_what_was_seen_under_the_removed_root(
    tree: Path,
) -> None:
    roots = Roots((tree / "a").as_uri(), (tree / "b").as_uri())
    other_roots = Roots((tree / "b").as_uri())
    with anyio.fail_after(TIMEOUT):
        async with (
            http_server(None, cwd=tree / "cwd", env=WAIT) as served,
            client(served.url, options=declaring(roots)) as c,
            client(served.url, options=declaring(other_roots)) as other,
        ):
            await read(c, tree / "a" / "f.txt")
            await read(c, tree / "b" / "f.txt")
            await read(other, tree / "b" / "f.txt")
            roots.uris = [(tree / "a").as_uri()]
            await c.send_roots_list_changed()
            gone = await until_refused(c, str(tree / "b" / "f.txt"))
            kept = await c.call_tool("edit", edit(tree / "a" / "f.txt"))
            # The other session's fence and observations are its own.
            others = await other.call_tool("edit", edit(tree / "b" / "f.txt"))
    assert code_of(gone) == "FS_SANDBOX_DENIED"
    assert not kept.is_error, text_of(kept)
    assert not others.is_error, text_of(others)
    assert (tree / "a" / "f.txt").read_text(encoding="utf-8") == "z\n"
    assert (tree / "b" / "f.txt").read_text(encoding="utf-8") == "z\n"


async def test_a_client_over_http_that_names_no_roots_gets_every_path_refused(tree: Path) -> None:
    with anyio.fail_after(TIMEOUT):
        async with (
            http_server(None, cwd=tree / "cwd", env=WAIT) as served,
            client(served.url, options=declaring(Roots())) as c,
        ):
            result = await read(c, "f.txt")
    assert code_of(result) == "FS_SANDBOX_DENIED"
    assert "the MCP client named no roots" in text_of(result)


async def test_with_roots_given_empty_or_disjoint_client_roots_over_http_leave_them_in_force(
    tree: Path,
) -> None:
    (tree / "given" / "f.txt").write_text("given\n", encoding="utf-8")
    elsewhere = Roots((tree / "a").as_uri())
    with anyio.fail_after(TIMEOUT):
        async with (
            http_server(tree / "given", env=WAIT) as served,
            client(served.url, options=declaring(Roots())) as empty,
            client(served.url, options=declaring(elsewhere)) as other,
        ):
            seen = await read(empty, tree / "given" / "f.txt")
            edited = await empty.call_tool("edit", edit(tree / "given" / "f.txt"))
            other_read = await read(other, "inner/f.txt")
            other_again = await read(other, "f.txt")
            its_own = await read(other, tree / "a" / "f.txt")
    assert "1: given" in text_of(seen)
    assert not edited.is_error, text_of(edited)
    assert (tree / "given" / "f.txt").read_text(encoding="utf-8") == "z\n"
    assert "1: given/inner" in text_of(other_read)
    assert "1: z" in text_of(other_again)
    assert code_of(its_own) == "FS_SANDBOX_DENIED"
    assert "outside the sandbox" in text_of(its_own)
    # Logged once per change of the client's roots (here: once per session), naming them.
    assert served.stderr.count("the client named no roots: ") == 1
    assert served.stderr.count(f"the client's roots ({tree}/a) overlap no served ROOT") == 1


async def test_a_refusal_over_http_caused_by_overlapping_client_roots_names_them(
    tree: Path,
) -> None:
    (tree / "given" / "f.txt").write_text("given\n", encoding="utf-8")
    roots = Roots((tree / "given" / "inner").as_uri())
    with anyio.fail_after(TIMEOUT):
        async with (
            http_server(tree / "given", env=WAIT) as served,
            client(served.url, options=declaring(roots)) as c,
        ):
            beside = await read(c, tree / "given" / "f.txt")
    assert code_of(beside) == "FS_SANDBOX_DENIED"
    assert f"outside the client's roots ({tree}/given/inner)" in text_of(beside)
