"""`LocalGuards`: every open of content and every publication of the local provider goes
through the guards it was built with, with the kernel's own paths; a refusal stops the
operation before a byte is read or published."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

import pytest

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.fs import CreateIfAbsent, FsEditRequest, ReplaceIfVersion, messages
from dsh_fs.providers import LocalFileSystem, LocalGuards

pytestmark = pytest.mark.anyio

Call = tuple[str, str, str]


class Recording(LocalGuards):
    """Records each check; refuses the kinds named in `refuse`."""

    def __init__(self, refuse: frozenset[str] = frozenset()) -> None:
        self.calls: list[Call] = []
        self.refuse = refuse

    def check_open(self, verb: messages.Verb, display: str, opened: str) -> None:
        self.calls.append(("open", verb, opened))
        if "open" in self.refuse:
            raise messages.sandbox_denied(verb, display, "refused by the test", "test")

    def may_reveal(self, opened: str) -> bool:
        self.calls.append(("reveal", "write", opened))
        return "reveal" not in self.refuse

    def check_publish(self, verb: Literal["write", "edit"], display: str, directory: str) -> None:
        self.calls.append(("publish", verb, directory))
        if "publish" in self.refuse:
            raise messages.sandbox_denied(verb, display, "refused by the test", "test")


@pytest.fixture
def real(tmp_path: Path) -> Path:
    """A workspace reached through a symlinked path, so kernel paths differ from spelled ones."""
    (tmp_path / "real").mkdir()
    (tmp_path / "spelled").symlink_to(tmp_path / "real")
    (tmp_path / "real" / "small.txt").write_text("small\n", encoding="utf-8")
    (tmp_path / "real" / "big.txt").write_text("x" * 100 + "\n" * 2000, encoding="utf-8")
    return tmp_path / "real"


async def test_every_read_of_content_is_checked_with_the_kernel_path(real: Path) -> None:
    guards = Recording()
    fs = LocalFileSystem(real.parent / "spelled", guards=guards)
    small, big = await fs.resolve("small.txt"), await fs.resolve("big.txt")
    await fs.read_text(small)  # read on the event loop
    await fs.read_text(big)  # read in a worker thread
    await fs.read_bytes(small, 100)
    async with fs.stream_text(big) as chunks:
        assert "".join([c async for c in chunks]).count("\n") == 2000
    assert guards.calls == [
        ("open", "read", str(real / "small.txt")),
        ("open", "read", str(real / "big.txt")),
        ("open", "read", str(real / "small.txt")),
        ("open", "read", str(real / "big.txt")),
    ]


async def test_every_publication_is_checked_with_the_locked_directory(real: Path) -> None:
    guards = Recording()
    fs = LocalFileSystem(real.parent / "spelled", guards=guards)
    created = await fs.write_text(await fs.resolve("new.txt"), "a\n", CreateIfAbsent())
    await fs.write_text(await fs.resolve("new.txt"), "b\n", ReplaceIfVersion(created.version))
    await fs.edit_text(await fs.resolve("new.txt"), FsEditRequest(old_string="b", new_string="c"))
    assert guards.calls == [
        ("publish", "write", str(real)),
        ("reveal", "write", str(real / "new.txt")),
        ("publish", "write", str(real)),
        ("open", "edit", str(real / "new.txt")),
        ("publish", "edit", str(real)),
    ]


async def test_a_refused_open_reads_nothing(real: Path) -> None:
    fs = LocalFileSystem(real, guards=Recording(frozenset({"open"})))
    for read in (
        lambda t: fs.read_text(t),
        lambda t: fs.read_bytes(t, 10_000),
    ):
        for name in ("small.txt", "big.txt"):
            with pytest.raises(FsError) as caught:
                await read(await fs.resolve(name))
            assert caught.value.code is FsErrorCode.SANDBOX_DENIED

    async def stream() -> None:
        async with fs.stream_text(await fs.resolve("big.txt")) as chunks:
            async for _ in chunks:
                pass

    with pytest.raises(FsError) as streamed:
        await stream()
    assert streamed.value.code is FsErrorCode.SANDBOX_DENIED
    before = (real / "small.txt").read_bytes()
    with pytest.raises(FsError) as edited:
        await fs.edit_text(
            await fs.resolve("small.txt"), FsEditRequest(old_string="small", new_string="x")
        )
    assert edited.value.code is FsErrorCode.SANDBOX_DENIED
    assert (real / "small.txt").read_bytes() == before


async def test_a_refused_publication_changes_nothing(real: Path) -> None:
    fs = LocalFileSystem(real, guards=Recording(frozenset({"publish"})))
    listing = sorted(os.listdir(real))
    with pytest.raises(FsError) as created:
        await fs.write_text(await fs.resolve("new.txt"), "a\n")
    with pytest.raises(FsError) as replaced:
        await fs.write_text(await fs.resolve("small.txt"), "a\n")
    with pytest.raises(FsError) as edited:
        await fs.edit_text(
            await fs.resolve("small.txt"), FsEditRequest(old_string="small", new_string="x")
        )
    assert created.value.code is replaced.value.code is edited.value.code
    assert created.value.code is FsErrorCode.SANDBOX_DENIED
    assert sorted(os.listdir(real)) == listing  # no file, no staging residue
    assert (real / "small.txt").read_text(encoding="utf-8") == "small\n"


async def test_a_prior_text_the_guards_may_not_reveal_is_withheld(real: Path) -> None:
    fs = LocalFileSystem(real, guards=Recording(frozenset({"reveal"})))
    outcome = await fs.write_text(await fs.resolve("small.txt"), "new\n")
    assert (outcome.operation, outcome.before) == ("update", None)
    assert (real / "small.txt").read_text(encoding="utf-8") == "new\n"
