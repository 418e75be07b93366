"""An edit of a large file another program wrote checks the file as text beside staging
the edited content (issue 44): what is not text is refused as before, with the same reason
and before any other refusal, and leaves the file and its directory as they were. A write
over such a file decodes the text it reports as `before` beside its staging, with the same
answer."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import anyio
import pytest

from dsh_fs import Workspace
from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import FsEditRequest
from dsh_fs.providers import LocalFileSystem
from dsh_fs.providers.local._mutations import BESIDE_CHECK_BYTES

pytestmark = pytest.mark.anyio

LINE = "caf\u00e9 \u2014 line\n".encode()
BODY = LINE * (BESIDE_CHECK_BYTES // len(LINE) + 100)
MARK = b"the one marker\n"

NOT_TEXT = [
    (BODY + MARK + b"\xff" + BODY, "invalid UTF-8 text"),
    (BODY + MARK + BODY + "\u2014".encode()[:2], "invalid UTF-8 text"),
    (BODY + MARK + b"\0" + BODY, "binary file"),
]
EDITS = {
    "a match": FsEditRequest(old_string="the one marker", new_string="changed"),
    "no match": FsEditRequest(old_string="nowhere in it", new_string="changed"),
    "two matches": FsEditRequest(old_string="caf\u00e9", new_string="changed"),
}


def edit_name(request: FsEditRequest) -> str:
    return next(name for name, known in EDITS.items() if known is request)


@pytest.mark.parametrize("request_", EDITS.values(), ids=edit_name)
@pytest.mark.parametrize(("content", "reason"), NOT_TEXT, ids=["bad byte", "cut", "nul"])
async def test_a_large_prior_that_is_not_text_is_refused_and_left_as_it_was(
    tmp_path: Path, content: bytes, reason: str, request_: FsEditRequest
) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(content)
    fs = LocalFileSystem(tmp_path)
    with pytest.raises(FsError) as refused:
        await fs.edit_text(await fs.resolve("a.txt"), request_)
    assert refused.value.code is FsErrorCode.NOT_TEXT
    assert refused.value.message == f'cannot edit "{path}": {reason}'
    assert path.read_bytes() == content
    assert os.listdir(tmp_path) == ["a.txt"]  # nothing staged is left behind


async def test_a_read_only_prior_that_is_not_text_says_it_is_not_text(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    content, reason = NOT_TEXT[0]
    path.write_bytes(content)
    path.chmod(0o444)
    fs = LocalFileSystem(tmp_path)
    with pytest.raises(FsError) as refused:
        await fs.edit_text(await fs.resolve("a.txt"), EDITS["a match"])
    assert refused.value.message == f'cannot edit "{path}": {reason}'
    assert path.read_bytes() == content


async def test_a_large_prior_that_is_text_is_edited_with_its_bytes_kept(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(BODY + MARK + BODY)
    fs = LocalFileSystem(tmp_path)
    outcome = await fs.edit_text(await fs.resolve("a.txt"), EDITS["a match"])
    assert path.read_bytes() == BODY + b"changed\n" + BODY
    assert outcome.before.encode() == BODY + MARK + BODY
    assert outcome.replacements == 1
    # A text edit the bytes path declines (two matches) decodes it only once it is proven.
    with pytest.raises(FsError) as ambiguous:
        await fs.edit_text(await fs.resolve("a.txt"), EDITS["two matches"])
    assert ambiguous.value.code is FsErrorCode.AMBIGUOUS_EDIT


async def test_a_busy_helper_thread_leaves_the_check_to_the_edit_itself(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(BODY + MARK + b"\xff")
    fs = LocalFileSystem(tmp_path)
    # The provider's one helper thread is held: the check queued behind it is taken back
    # and run by the edit, which neither waits for the helper nor skips the check.
    release = threading.Event()
    fs._mutations._hasher.submit(release.wait)
    try:
        with anyio.fail_after(10), pytest.raises(FsError) as refused:
            await fs.edit_text(await fs.resolve("a.txt"), EDITS["a match"])
        assert refused.value.message == f'cannot edit "{path}": invalid UTF-8 text'
        path.write_bytes(BODY + MARK)
        with anyio.fail_after(10):
            await fs.edit_text(await fs.resolve("a.txt"), EDITS["a match"])
        assert path.read_bytes() == BODY + b"changed\n"
    finally:
        release.set()


async def test_a_journaled_edit_of_a_prior_that_is_not_text_records_nothing(
    tmp_path: Path,
) -> None:
    root, store = tmp_path / "root", tmp_path / "journal"
    root.mkdir()
    content, _ = NOT_TEXT[0]
    (root / "a.txt").write_bytes(content)
    # No observation policy: a file that is not text can't be read first.
    async with Workspace.local(root, policy=False, journal=store) as ws:
        result = await ws.session().call(
            "edit",
            {"file_path": str(root / "a.txt"), "old_string": "the one marker", "new_string": "x"},
        )
        assert result.code == "FS_NOT_TEXT"
        assert ws.journal is not None
        assert await ws.journal.entries() == []
    assert (root / "a.txt").read_bytes() == content
    assert os.listdir(root) == ["a.txt"]


@pytest.mark.parametrize("busy", [False, True], ids=["helper free", "helper busy"])
async def test_a_write_over_a_large_file_another_program_wrote_reports_its_text(
    tmp_path: Path, busy: bool
) -> None:
    path = tmp_path / "a.txt"
    fs = LocalFileSystem(tmp_path)
    release = threading.Event()
    if busy:
        fs._mutations._hasher.submit(release.wait)
    try:
        for prior, before in [
            (BODY + MARK, (BODY + MARK).decode()),
            (BODY + b"\xff", None),  # not text: the outcome shows no `before`
            (BODY + b"\0", None),
        ]:
            path.write_bytes(prior)
            with anyio.fail_after(10):
                outcome = await fs.write_text(await fs.resolve("a.txt"), "new\n")
            assert outcome.before == before
            assert path.read_bytes() == b"new\n"
    finally:
        release.set()
