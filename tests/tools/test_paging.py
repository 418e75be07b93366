"""Paging through the line index: every read renders exactly what a full scan renders,
across edits, external rewrites and same-size rewrites inside one timestamp tick.

The reference is a fresh workspace per read (its index is empty, so it scans the file
whole). Chunks are made tiny so that small random files span many of them, and the
whole-read shortcut for small files is switched off so every read streams.
"""

from __future__ import annotations

import os
import tempfile
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dsh_fs import Workspace
from dsh_fs.fs import FsTarget, FsTextStream
from dsh_fs.providers import FsspecFileSystem, LocalFileSystem
from dsh_fs.providers.fsspec import _filesystem as _fsspec
from dsh_fs.providers.local import _filesystem as _local
from dsh_fs.runtime import ToolResult
from dsh_fs.tools import _read

pytestmark = pytest.mark.anyio

LATER = 3_600 * 10**9
"""A clock an hour ahead sees every file as settled (changed long enough ago)."""

COARSE = 10**15
"""An 11-day timestamp tick: every change in a test lands in the same tick (a 1000 s one was
crossed once in a while between two steps of a test)."""


@contextmanager
def streaming_in_chunks(size: int) -> Iterator[None]:
    """Providers stream `size`-byte chunks, and the read tool streams even tiny files."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_local, "STREAM_CHUNK_SIZE", size)
        patch.setattr(_fsspec, "STREAM_CHUNK_SIZE", size)
        patch.setattr(_read, "WHOLE_READ_BYTES", 0)
        yield


def assemble(lines: list[str], long_at: list[int], bom: bool, final: bool) -> str:
    """A text of short lines, with a line too long to show whole at each of `long_at` (the
    byte cap needs dozens of those: test_line_index covers it with small caps)."""
    for at in long_at:
        lines.insert(at % (len(lines) + 1), "é" * 2100)
    return ("\ufeff" if bom else "") + "\n".join(lines) + ("\n" if final else "")


texts = st.builds(
    assemble,
    st.lists(st.text(alphabet="ab é€😀\r\t", max_size=12), max_size=40),
    st.lists(st.integers(min_value=0), max_size=2),
    st.booleans(),
    st.booleans(),
)


@dataclass(frozen=True)
class Read:
    seed: int
    """Picks the offset among the file's lines (and a few past its end)."""
    limit: int


@dataclass(frozen=True)
class Edit:
    at: int
    """Picks the three characters to replace (every occurrence)."""
    new: str


@dataclass(frozen=True)
class Rewrite:
    text: str


@dataclass(frozen=True)
class SameSize:
    picks: list[int]
    """Which ASCII bytes to turn into newlines (or a newline into a letter), in place."""


Step = Read | Edit | Rewrite | SameSize
steps = st.lists(
    st.one_of(
        st.builds(Read, st.integers(min_value=0, max_value=45), st.integers(1, 2000)),
        st.builds(Edit, st.integers(min_value=0), st.text(alphabet="xy\n", max_size=4)),
        st.builds(Rewrite, texts),
        st.builds(SameSize, st.lists(st.integers(min_value=0), max_size=6)),
    ),
    max_size=8,
)

SAME_SIZE_AFTER_A_READ: tuple[str, list[Step], int] = (
    "".join(f"{n:03}\n" for n in range(60)),
    [Read(0, 2000), SameSize([0, 1, 2]), Read(40, 5)],
    16,
)
"""A read, then the lines before the next window shifted in place, then that window."""


def same_size(data: bytes, picks: list[int]) -> bytes:
    """`data` with some ASCII bytes swapped for others: same length, other lines."""
    out = bytearray(data)
    ascii_at = [i for i, b in enumerate(out) if b < 0x80]
    for pick in picks:
        if ascii_at:
            i = ascii_at[pick % len(ascii_at)]
            out[i] = ord("a") if out[i] == ord("\n") else ord("\n")
    return bytes(out)


def rendered(result: ToolResult) -> tuple[bool, str | None, str]:
    return result.is_error, result.code, result.text


class World(ABC):
    """One file, a workspace that pages through it, and full scans to compare with."""

    file_path: str
    """What the tools are given."""
    paging: Workspace
    """The workspace under test (its index persists across steps)."""

    @abstractmethod
    def content(self) -> bytes:
        """The file's bytes, read out of band."""

    @abstractmethod
    def put(self, data: bytes, in_place: bool) -> None:
        """Rewrite the file out of band (in place: same inode)."""

    @abstractmethod
    def full_scan(self) -> Workspace:
        """A fresh workspace: no index, so its read scans the whole file."""

    def edited(self) -> None:  # noqa: B027 - a hook, nothing to do by default
        """The tools just changed the file."""

    async def play(self, steps: list[Step]) -> None:
        session = self.paging.session()
        for step in steps:
            data = self.content()
            if isinstance(step, Read):
                offset = 1 + step.seed % (data.count(b"\n") + 3)
                args = {"file_path": self.file_path, "offset": offset, "limit": step.limit}
                got = rendered(await session.call("read", args))
                reference = self.full_scan()
                try:
                    expected = rendered(await reference.session().call("read", args))
                finally:
                    await reference.aclose()
                assert got == expected, (step, data)
            elif isinstance(step, Edit):
                text = data.decode()
                if text:
                    at = step.at % len(text)
                    args = {"file_path": self.file_path, "old_string": text[at : at + 3]}
                    await session.call(
                        "edit", {**args, "new_string": step.new, "replace_all": True}
                    )
                    self.edited()
            elif isinstance(step, Rewrite):
                self.put(step.text.encode(), in_place=False)
            else:
                self.put(same_size(data, step.picks), in_place=True)


class LocalWorld(World):
    """A file on disk, paged through a `LocalFileSystem` built by `provider`.

    `settled`: the provider's clock runs an hour ahead, so every version looks settled.
    The filesystem's timestamps don't run ahead, so every change then gets its own past
    mtime, as a real clock would give it: else two same-size files a clock tick apart
    (an inode number reused) could share a stat tuple that a real clock would call racy.
    """

    def __init__(self, root: Path, *, settled: bool, granularity: int = 1) -> None:
        self.root = root
        self.path = root / "f.txt"
        self.file_path = str(self.path)
        self.settled = settled
        self.stamp = time.time_ns() - 10**12

        def clock() -> int:
            return time.time_ns() + (LATER if settled else 0)

        fs = LocalFileSystem(root, timestamp_granularity_ns=granularity, clock=clock)
        self.paging = Workspace(fs, policy=False)

    def content(self) -> bytes:
        return self.path.read_bytes()

    def put(self, data: bytes, in_place: bool) -> None:
        if in_place and self.path.exists():
            with self.path.open("r+b") as f:
                f.truncate(len(data))
                f.write(data)
        else:
            tmp = self.root / "tmp"
            tmp.write_bytes(data)
            os.replace(tmp, self.path)
        self.edited()

    def edited(self) -> None:
        if self.settled:
            self.stamp += 10**9
            os.utime(self.path, ns=(self.stamp, self.stamp))

    def full_scan(self) -> Workspace:
        return Workspace.local(self.root, policy=False)


class MemoryWorld(World):
    """A file in fsspec's memory store (digest versions: every read is vouched for)."""

    def __init__(self) -> None:
        self.url = f"memory://paging-{uuid.uuid4().hex}"
        fs = FsspecFileSystem.from_url(self.url)
        self.paging = Workspace(fs, policy=False)
        self.store = fs.fs
        self.key = f"/{self.url.removeprefix('memory://')}/f.txt"
        self.file_path = f"{self.url}/f.txt"

    def content(self) -> bytes:
        return bytes(self.store.cat_file(self.key))

    def put(self, data: bytes, in_place: bool) -> None:
        self.store.pipe_file(self.key, data)

    def full_scan(self) -> Workspace:
        return Workspace(FsspecFileSystem.from_url(self.url), policy=False)

    def remove(self) -> None:
        self.store.rm(self.url.removeprefix("memory://"), recursive=True)


@settings(max_examples=40)
@given(initial=texts, steps=steps, chunk=st.sampled_from([16, 256, 4096]))
@example(*SAME_SIZE_AFTER_A_READ)
async def test_settled_local_files_page_exactly_like_full_scans(
    initial: str, steps: list[Step], chunk: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp, streaming_in_chunks(chunk):
        world = LocalWorld(Path(tmp), settled=True)
        world.put(initial.encode(), in_place=False)
        try:
            await world.play(steps)
        finally:
            await world.paging.aclose()


@settings(max_examples=40)
@given(initial=texts, steps=steps, chunk=st.sampled_from([16, 256, 4096]))
@example(*SAME_SIZE_AFTER_A_READ)
async def test_same_size_rewrites_in_one_coarse_tick_are_never_served_from_an_index(
    initial: str, steps: list[Step], chunk: int
) -> None:
    """On a filesystem with 1000 s timestamps, an in-place rewrite of the same size keeps
    the version a read saw: an index built from that read would serve the old lines."""
    with tempfile.TemporaryDirectory() as tmp, streaming_in_chunks(chunk):
        world = LocalWorld(Path(tmp), settled=False, granularity=COARSE)
        world.put(initial.encode(), in_place=False)
        try:
            await world.play(steps)
        finally:
            await world.paging.aclose()


@settings(max_examples=40)
@given(initial=texts, steps=steps, chunk=st.sampled_from([256, 4096]))
@example(*SAME_SIZE_AFTER_A_READ[:2], 256)
async def test_memory_files_page_exactly_like_full_scans(
    initial: str, steps: list[Step], chunk: int
) -> None:
    with streaming_in_chunks(chunk):
        world = MemoryWorld()
        world.put(initial.encode(), in_place=False)
        try:
            await world.play(steps)
        finally:
            await world.paging.aclose()
            world.remove()


class Spy(LocalFileSystem):
    """The local provider, recording where each ranged stream starts."""

    def __init__(self, base: Path) -> None:
        super().__init__(base, clock=lambda: time.time_ns() + LATER)
        self.starts: list[int] = []

    def stream_text_from(
        self, target: FsTarget, start: int = 0
    ) -> AbstractAsyncContextManager[FsTextStream]:
        self.starts.append(start)
        return super().stream_text_from(target, start)


@pytest.fixture
def numbered(tmp_path: Path) -> Iterator[Path]:
    """A 300-line file streamed in 100-byte chunks."""
    path = tmp_path / "n.txt"
    path.write_text("".join(f"line {n:04}\n" for n in range(1, 301)), encoding="utf-8")
    with streaming_in_chunks(100):
        yield path


@pytest.fixture
async def spied(tmp_path: Path) -> AsyncIterator[tuple[Workspace, Spy]]:
    fs = Spy(tmp_path)
    workspace = Workspace(fs)
    yield workspace, fs
    await workspace.aclose()


async def test_a_later_window_seeks_near_its_first_line_instead_of_rescanning(
    numbered: Path, spied: tuple[Workspace, Spy]
) -> None:
    workspace, fs = spied
    session = workspace.session()
    first = await session.call("read", {"file_path": str(numbered), "limit": 5})
    assert fs.starts == [0]
    later = await session.call("read", {"file_path": str(numbered), "offset": 250, "limit": 2})
    assert later.text.splitlines()[3:5] == ["250: line 0250", "251: line 0251"]
    assert "(Showing lines 250-251 of 300. Use offset=252 to continue.)" in later.text
    # 10 bytes a line: line 250 starts at byte 2490; the stream resumed at the start of the
    # chunk holding it (chunks are about 100 bytes).
    assert len(fs.starts) == 2
    assert 2490 - 110 < fs.starts[1] <= 2490
    assert not first.is_error


async def test_an_offset_past_the_end_needs_no_read_once_indexed(
    numbered: Path, spied: tuple[Workspace, Spy]
) -> None:
    workspace, fs = spied
    session = workspace.session()
    await session.call("read", {"file_path": str(numbered)})
    past = await session.call("read", {"file_path": str(numbered), "offset": 302})
    assert past.text == f'Error: offset 302 is out of range for "{numbered}" (300 lines)'
    assert fs.starts == [0]


async def test_an_indexed_read_authorizes_an_edit_like_any_read(
    numbered: Path, spied: tuple[Workspace, Spy]
) -> None:
    workspace, fs = spied
    session = workspace.session()
    await workspace.session().call("read", {"file_path": str(numbered)})  # builds the index
    await session.call("read", {"file_path": str(numbered), "offset": 120, "limit": 1})
    assert fs.starts[-1] > 0
    edit = {"file_path": str(numbered), "old_string": "line 0120", "new_string": "edited"}
    assert not (await session.call("edit", edit)).is_error


async def test_a_file_changed_after_indexing_is_scanned_again(
    numbered: Path, spied: tuple[Workspace, Spy]
) -> None:
    workspace, fs = spied
    session = workspace.session()
    await session.call("read", {"file_path": str(numbered)})
    numbered.write_bytes(b"".join(b"row %d\n" % n for n in range(1, 11)))  # noqa: ASYNC240
    result = await session.call("read", {"file_path": str(numbered), "offset": 9})
    assert result.text.splitlines()[3:5] == ["9: row 9", "10: row 10"]
    assert fs.starts == [0, 0]
