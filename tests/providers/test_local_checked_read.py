"""An edit's prior file checked as UTF-8 (`LazyContent.checked`): read whole when its fstat
says it is small, else chunk by chunk where each chunk lands (issue 44); both refuse what
`decode_text` refuses, wherever a chunk boundary falls."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from dsh_fs.errors import FsError, FsErrorCode
from dsh_fs.providers.local import _io
from dsh_fs.providers.local._io import LazyContent, read_checked_fd

TEXTS = [
    b"",
    b"plain ascii\n",
    "caf\u00e9 \u2014 \u2248 \U0001f600\n".encode() * 50,
]
NOT_TEXT = [
    (b"abc\0def", "binary file"),
    ("caf\u00e9".encode() + b"\xff" + b"tail", "invalid UTF-8 text"),
    (b"ends mid-character " + "\u2014".encode()[:2], "invalid UTF-8 text"),
]


@pytest.fixture
def opened(tmp_path: Path) -> Iterator[tuple[Path, list[int]]]:
    path = tmp_path / "f.txt"
    fds: list[int] = []
    yield path, fds
    for fd in fds:
        os.close(fd)


def open_with(path: Path, data: bytes, fds: list[int]) -> int:
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    fds.append(fd)
    return fd


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 1 << 20])
@pytest.mark.parametrize("data", TEXTS)
def test_text_comes_back_whole_wherever_the_chunks_split_a_character(
    opened: tuple[Path, list[int]],
    monkeypatch: pytest.MonkeyPatch,
    chunk: int,
    data: bytes,
) -> None:
    monkeypatch.setattr(_io, "READ_CHUNK_SIZE", chunk)
    path, fds = opened
    assert bytes(read_checked_fd(open_with(path, data, fds), "edit", "f")) == data


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 1 << 20])
@pytest.mark.parametrize(("data", "reason"), NOT_TEXT)
def test_what_is_not_text_is_refused_wherever_the_chunks_split(
    opened: tuple[Path, list[int]],
    monkeypatch: pytest.MonkeyPatch,
    chunk: int,
    data: bytes,
    reason: str,
) -> None:
    monkeypatch.setattr(_io, "READ_CHUNK_SIZE", chunk)
    path, fds = opened
    with pytest.raises(FsError) as refused:
        read_checked_fd(open_with(path, data, fds), "edit", "f")
    assert refused.value.code is FsErrorCode.NOT_TEXT
    assert reason in str(refused.value)


@pytest.mark.parametrize(("data", "reason"), NOT_TEXT)
def test_a_small_file_read_whole_is_refused_as_the_chunked_one_is(
    opened: tuple[Path, list[int]], data: bytes, reason: str
) -> None:
    path, fds = opened
    content = LazyContent(open_with(path, data, fds), len(data))
    with pytest.raises(FsError) as refused:
        content.checked("edit", "f")
    assert reason in str(refused.value)


def test_a_file_that_grew_since_its_fstat_is_checked_to_its_end(
    opened: tuple[Path, list[int]],
) -> None:
    # The fstat said 4 bytes: what follows them is read and checked too, never cut off.
    path, fds = opened
    fd = open_with(path, b"good" + b"x" * 100 + b"\xff", fds)
    with pytest.raises(FsError) as refused:
        LazyContent(fd, 4).checked("edit", "f")
    assert "invalid UTF-8 text" in str(refused.value)
    fd = open_with(path, b"good" + "\u00e9".encode() * 100, fds)
    assert bytes(LazyContent(fd, 4).checked("edit", "f")) == b"good" + "\u00e9".encode() * 100
