"""Approvals over MCP (SPEC §11.2): the official SDK client with an elicitation callback is
asked, over stdio and over HTTP, with the diff and a form (approve, note); its answer decides;
a malformed answer is no answer (FS_NOT_APPROVED, never an internal error); the call reports
progress while it waits; a client without elicitation gets FS_NOT_APPROVED."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.context import ClientRequestContext

from .http_testing import client as http_client
from .http_testing import http_server
from .mcp_testing import HANDSHAKE, make_root, stdio_server
from .test_mcp_stdio import code_of, text_of

pytestmark = pytest.mark.anyio

TIMEOUT = 60


class Person:
    """The client's elicitation callback: records what it was asked, answers `answer`."""

    def __init__(self, answer: types.ElicitResult) -> None:
        self.answer = answer
        self.asked: list[types.ElicitRequestParams] = []
        self.go = anyio.Event()
        self.go.set()

    async def __call__(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        self.asked.append(params)
        await self.go.wait()
        return self.answer


def accept(content: dict[str, Any]) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content=content)


@asynccontextmanager
async def connected(
    transport: str, root: Path, person: Person | None, *flags: str
) -> AsyncIterator[Client]:
    options: dict[str, Any] = {} if person is None else {"elicitation_callback": person}
    if transport == "stdio":
        server = stdio_server(*flags, str(root))
        async with Client(server, mode=HANDSHAKE, **options) as client:
            yield client
    else:
        async with (
            http_server(root, *flags) as served,
            http_client(served.url, options=options) as client,
        ):
            yield client


TRANSPORTS = pytest.mark.parametrize("transport", ["stdio", "http"])


@TRANSPORTS
async def test_the_client_is_asked_with_the_diff_and_its_approval_lands_the_change(
    tmp_path: Path, transport: str
) -> None:
    root = make_root(tmp_path)
    person = Person(accept({"approve": True, "note": "looks right"}))
    with anyio.fail_after(TIMEOUT):
        async with connected(transport, root, person, "--approve", "changes") as client:
            await client.call_tool("read", {"file_path": "notes.txt"})
            result = await client.call_tool(
                "edit", {"file_path": "notes.txt", "old_string": "beta", "new_string": "BETA"}
            )
    assert not result.is_error, text_of(result)
    assert (root / "notes.txt").read_text() == "alpha\nBETA\ngamma\n"
    (asked,) = person.asked
    assert isinstance(asked, types.ElicitRequestFormParams)
    assert "-beta\n+BETA\n" in asked.message
    assert asked.message.startswith(f"edit wants to change {root / 'notes.txt'}.")
    schema = dict(asked.requested_schema)
    assert set(schema["properties"]) == {"approve", "note"}
    assert schema["required"] == ["approve"]


@TRANSPORTS
async def test_a_rejection_with_a_note_reaches_the_model_and_nothing_changes(
    tmp_path: Path, transport: str
) -> None:
    root = make_root(tmp_path)
    person = Person(accept({"approve": False, "note": "not this file"}))
    with anyio.fail_after(TIMEOUT):
        async with connected(transport, root, person, "--approve", "destructive") as client:
            created = await client.call_tool("write", {"file_path": "new.txt", "content": "n"})
            await client.call_tool("read", {"file_path": "notes.txt"})
            gone = await client.call_tool("delete", {"file_path": "notes.txt"})
    assert not created.is_error  # a create is not destructive: nobody was asked
    assert code_of(gone) == "FS_REJECTED"
    assert text_of(gone) == (
        f'Error: the user rejected this change to "{root / "notes.txt"}": not this file'
    )
    assert len(person.asked) == 1
    assert (root / "notes.txt").exists()


async def test_a_decline_is_a_rejection_without_a_note(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    person = Person(types.ElicitResult(action="decline"))
    with anyio.fail_after(TIMEOUT):
        async with connected("stdio", root, person, "--approve", "changes") as client:
            result = await client.call_tool("mkdir", {"path": "d"})
    assert code_of(result) == "FS_REJECTED"
    assert text_of(result) == f'Error: the user rejected this change to "{root / "d"}"'


@TRANSPORTS
async def test_a_malformed_answer_is_not_an_approval_and_not_an_internal_error(
    tmp_path: Path, transport: str
) -> None:
    root = make_root(tmp_path)
    person = Person(accept({"approve": "yes"}))
    with anyio.fail_after(TIMEOUT):
        async with connected(transport, root, person, "--approve", "changes") as client:
            result = await client.call_tool("write", {"file_path": "new.txt", "content": "n"})
    assert code_of(result) == "FS_NOT_APPROVED"
    assert text_of(result) == (
        f'Error: cannot write "{root / "new.txt"}": approval required and none was given'
    )
    assert not (root / "new.txt").exists()


async def test_without_elicitation_and_without_a_journal_nobody_is_asked(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    flags = ("--approve", "changes", "--no-journal")
    with anyio.fail_after(TIMEOUT):
        async with connected("stdio", root, None, *flags) as client:
            result = await client.call_tool("write", {"file_path": "new.txt", "content": "n"})
    assert code_of(result) == "FS_NOT_APPROVED"
    assert not (root / "new.txt").exists()


async def test_without_elicitation_the_review_page_is_waited_for_until_the_timeout(
    tmp_path: Path,
) -> None:
    root = make_root(tmp_path)
    journal = tmp_path / "journal"
    flags = ("--approve", "changes", "--approve-timeout", "1", "--journal", str(journal))
    with anyio.fail_after(TIMEOUT):
        async with connected("stdio", root, None, *flags) as client:
            result = await client.call_tool("write", {"file_path": "new.txt", "content": "n"})
    assert code_of(result) == "FS_NOT_APPROVED"
    assert not (root / "new.txt").exists()
    # The pending entry the page showed meanwhile is gone with the call.
    assert [p for p in journal.rglob("*") if p.is_file() and "approvals" in p.parts] == []


@TRANSPORTS
async def test_a_call_waiting_for_an_answer_reports_progress(
    tmp_path: Path, transport: str
) -> None:
    root = make_root(tmp_path)
    person = Person(accept({"approve": True}))
    person.go = anyio.Event()  # the person answers once the client saw the call is alive
    reports: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, total, message))
        person.go.set()

    flags = ("--approve", "changes", "--approve-timeout", "20")
    with anyio.fail_after(TIMEOUT):
        async with connected(transport, root, person, *flags) as client:
            result = await client.call_tool(
                "write", {"file_path": "new.txt", "content": "n"}, progress_callback=on_progress
            )
    assert not result.is_error, text_of(result)
    assert reports
    assert reports[0][1] == 20
    assert reports[0][2] == "waiting for the user's approval"
    assert (root / "new.txt").read_text() == "n"


async def test_a_long_diff_is_cut_and_points_at_the_review_page(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    person = Person(accept({"approve": True}))
    content = "".join(f"line {n}\n" for n in range(10_000))
    with anyio.fail_after(TIMEOUT):
        async with connected("stdio", root, person, "--approve", "changes") as client:
            result = await client.call_tool("write", {"file_path": "big.txt", "content": content})
    assert not result.is_error
    (asked,) = person.asked
    assert isinstance(asked, types.ElicitRequestFormParams)
    assert len(asked.message.encode()) < 17 * 1024
    assert asked.message.endswith("the whole of it is on the review page (dsh-fs review)\n")
    assert (root / "big.txt").read_text() == content


async def test_in_the_2026_07_28_era_the_approval_is_an_input_request_of_the_call(
    tmp_path: Path,
) -> None:
    root = make_root(tmp_path)
    approving = Person(accept({"approve": True, "note": "ok"}))
    rejecting = Person(accept({"approve": False, "note": "no"}))
    flags = ("--approve", "changes", str(root))
    with anyio.fail_after(TIMEOUT):
        async with Client(stdio_server(*flags), mode="auto", elicitation_callback=approving) as c:
            await c.call_tool("read", {"file_path": "notes.txt"})
            edited = await c.call_tool(
                "edit", {"file_path": "notes.txt", "old_string": "beta", "new_string": "BETA"}
            )
        async with Client(stdio_server(*flags), mode="auto", elicitation_callback=rejecting) as c:
            refused = await c.call_tool("write", {"file_path": "new.txt", "content": "n"})
    assert not edited.is_error, text_of(edited)
    assert (root / "notes.txt").read_text() == "alpha\nBETA\ngamma\n"
    (asked,) = approving.asked
    assert isinstance(asked, types.ElicitRequestFormParams)
    assert "-beta\n+BETA\n" in asked.message
    assert code_of(refused) == "FS_REJECTED"
    assert text_of(refused).endswith(": no")
    assert not (root / "new.txt").exists()


async def test_over_http_in_the_2026_07_28_era_the_approval_is_an_input_request_too(
    tmp_path: Path,
) -> None:
    # Sessionless: the read and the edit are separate requests of one principal, and the
    # edit's approval comes back as the retry's input response.
    root = make_root(tmp_path)
    approving = Person(accept({"approve": True, "note": "ok"}))
    rejecting = Person(accept({"approve": False, "note": "no"}))
    with anyio.fail_after(TIMEOUT):
        async with http_server(root, "--approve", "changes") as served:
            modern = {"mode": "auto", "elicitation_callback": approving}
            async with http_client(served.url, options=modern) as c:
                assert c.protocol_version == "2026-07-28"
                await c.call_tool("read", {"file_path": "notes.txt"})
                edited = await c.call_tool(
                    "edit", {"file_path": "notes.txt", "old_string": "beta", "new_string": "BETA"}
                )
            modern = {"mode": "auto", "elicitation_callback": rejecting}
            async with http_client(served.url, options=modern) as c:
                refused = await c.call_tool("write", {"file_path": "new.txt", "content": "n"})
    assert not edited.is_error, text_of(edited)
    assert (root / "notes.txt").read_text() == "alpha\nBETA\ngamma\n"
    (asked,) = approving.asked
    assert isinstance(asked, types.ElicitRequestFormParams)
    assert "-beta\n+BETA\n" in asked.message
    assert code_of(refused) == "FS_REJECTED"
    assert text_of(refused).endswith(": no")
    assert not (root / "new.txt").exists()
