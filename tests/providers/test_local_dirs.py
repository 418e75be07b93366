"""`make_parents`: missing directories are created one at a time, each in a directory the
caller's check saw through its descriptor."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from dsh_fs.providers import LocalFileSystem
from dsh_fs.providers.local._dirs import make_parents
from dsh_fs.providers.local._open import fd_path

from .test_local import AS_ROOT, as_nobody, make_shared_tempdir


def test_each_missing_directory_is_created_in_a_directory_the_check_saw(tmp_path: Path) -> None:
    seen: list[str] = []
    make_parents(str(tmp_path / "a" / "b" / "c"), lambda fd, path: seen.append(fd_path(fd, path)))
    assert seen == [str(tmp_path), str(tmp_path / "a"), str(tmp_path / "a" / "b")]
    assert (tmp_path / "a" / "b" / "c").is_dir()


def test_an_existing_directory_needs_no_check(tmp_path: Path) -> None:
    seen: list[str] = []
    make_parents(str(tmp_path), lambda fd, path: seen.append(path))
    assert seen == []


def test_a_refusing_check_creates_nothing_below_it(tmp_path: Path) -> None:
    class Refused(Exception):
        pass

    def refuse_below_a(fd: int, path: str) -> None:
        if fd_path(fd, path) != str(tmp_path):
            raise Refused

    with pytest.raises(Refused):
        make_parents(str(tmp_path / "a" / "b" / "c"), refuse_below_a)
    assert os.listdir(tmp_path) == ["a"]
    assert os.listdir(tmp_path / "a") == []


def test_a_file_in_the_way_is_not_a_directory(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("file\n", encoding="utf-8")
    with pytest.raises(NotADirectoryError):
        make_parents(str(tmp_path / "a" / "b"), lambda fd, path: None)
    with pytest.raises(NotADirectoryError):
        make_parents(str(tmp_path / "a"), lambda fd, path: None)


def test_thousands_of_missing_components_are_an_errno_not_a_recursion_error(
    tmp_path: Path,
) -> None:
    with pytest.raises(OSError, match="File name too long"):
        make_parents(str(tmp_path.joinpath(*["d"] * 3000)), lambda fd, path: None)
    assert os.listdir(tmp_path) == []


@pytest.mark.anyio
@pytest.mark.skipif(not AS_ROOT, reason="drops to nobody, which needs root")
async def test_parents_are_created_below_a_directory_that_may_be_written_but_not_read() -> None:
    # mkdir by path needs no read permission on the parent; neither does its descriptor.
    root = Path(make_shared_tempdir())
    try:
        blind = root / "blind"
        blind.mkdir(mode=0o733)
        blind.chmod(0o733)
        os.chown(blind, 65534, 65534)
        blind.chmod(0o333)  # write and search, no read
        fs = LocalFileSystem(root)
        with as_nobody():
            target = await fs.resolve("blind/made/new.txt")
            await fs.write_text(target, "new\n")
        assert (blind / "made" / "new.txt").read_text(encoding="utf-8") == "new\n"
    finally:
        shutil.rmtree(root)
