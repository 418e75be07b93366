"""`edit_text`: one critical section — version check before matching, byte-faithful rewrite."""

from __future__ import annotations

import anyio
import pytest

from dsh_fs.errors import FsErrorCode
from dsh_fs.fs import FsEditRequest, FsVersion

from .backends import ProviderUnderTest, fails, require

pytestmark = pytest.mark.anyio


def edit(old: str, new: str, replace_all: bool = False) -> FsEditRequest:
    return FsEditRequest(old_string=old, new_string=new, replace_all=replace_all)


async def version_of(put: ProviderUnderTest, rel: str) -> FsVersion:
    info = await put.fs.stat(await put.fs.resolve(rel))
    assert info is not None
    return info.version


async def test_unguarded_edit_replaces_the_single_match(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("a.py", b"x = 1\ny = 2\n")
    outcome = await put.fs.edit_text(await put.fs.resolve("a.py"), edit("y = 2", "y = 3"))
    assert put.outside.read_bytes("a.py") == b"x = 1\ny = 3\n"
    assert (outcome.before, outcome.after, outcome.replacements) == (
        "x = 1\ny = 2\n",
        "x = 1\ny = 3\n",
        1,
    )
    assert outcome.version == await version_of(put, "a.py")


async def test_guarded_edit_at_the_current_version_applies(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("a.py", b"x = 1\n")
    version = await version_of(put, "a.py")
    await put.fs.edit_text(await put.fs.resolve("a.py"), edit("1", "2"), version)
    assert put.outside.read_bytes("a.py") == b"x = 2\n"


async def test_guarded_edit_of_a_file_changed_since_is_stale(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("a.py", b"x = 1\n")
    version = await version_of(put, "a.py")
    put.outside.write_bytes("a.py", b"x = 1\n# theirs\n")
    message = f'cannot edit "{put.display("a.py")}": file changed since it was read'
    with fails(FsErrorCode.STALE_VERSION, message):
        await put.fs.edit_text(await put.fs.resolve("a.py"), edit("1", "2"), version)
    assert put.outside.read_bytes("a.py") == b"x = 1\n# theirs\n"


async def test_stale_check_comes_before_matching(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("a.py", b"x = 1\n")
    version = await version_of(put, "a.py")
    put.outside.write_bytes("a.py", b"completely different\n")
    with fails(FsErrorCode.STALE_VERSION):
        await put.fs.edit_text(await put.fs.resolve("a.py"), edit("x = 1", "x = 2"), version)


async def test_edit_of_a_missing_file_is_stale_guarded_or_not(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("a.py", b"x = 1\n")
    version = await version_of(put, "a.py")
    put.outside.remove("a.py")
    target = await put.fs.resolve("a.py")
    message = f'cannot edit "{put.display("a.py")}": file changed since it was read'
    with fails(FsErrorCode.STALE_VERSION, message):
        await put.fs.edit_text(target, edit("1", "2"), version)
    with fails(FsErrorCode.STALE_VERSION, message):
        await put.fs.edit_text(target, edit("1", "2"))
    message = f'cannot edit "{put.display("no/such/dir.py")}": file changed since it was read'
    with fails(FsErrorCode.STALE_VERSION, message):
        await put.fs.edit_text(await put.fs.resolve("no/such/dir.py"), edit("1", "2"))
    assert not put.outside.exists("a.py")


async def test_edit_under_a_file_names_nothing(put: ProviderUnderTest) -> None:
    require(put, "directories")
    put.outside.write_bytes("a.txt", b"x")
    message = (
        f'cannot resolve "{put.display("a.txt/inner.txt")}": '
        "a parent path segment is not a directory"
    )
    with fails(FsErrorCode.NOT_FOUND, message):
        await put.fs.edit_text(await put.fs.resolve("a.txt/inner.txt"), edit("x", "y"))
    assert put.outside.read_bytes("a.txt") == b"x"


async def test_edit_without_a_match_is_edit_not_found(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("a.py", b"x = 1\n")
    message = (
        f'old_string was not found in "{put.display("a.py")}"\n'
        "Nothing in the file is close to old_string: read the file to find the text you "
        "meant to change, or check the path."
    )
    with fails(FsErrorCode.EDIT_NOT_FOUND, message) as missing:
        await put.fs.edit_text(await put.fs.resolve("a.py"), edit("y = 1", "y = 2"))
    assert missing.value.details["closest"] is None
    assert put.outside.read_bytes("a.py") == b"x = 1\n"


async def test_a_near_miss_names_the_closest_lines_and_the_reason(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("a.py", b"def f():\n    return 1\n")
    with fails(FsErrorCode.EDIT_NOT_FOUND) as missing:
        await put.fs.edit_text(
            await put.fs.resolve("a.py"), edit("def f():\n  return 1", "def f():\n  return 2")
        )
    assert missing.value.message.split("\n")[:4] == [
        f'old_string was not found in "{put.display("a.py")}"',
        "The closest text in the file is at lines 1-2; it differs from old_string:",
        "- indentation: line 2 is indented 2 more spaces in the file than in old_string "
        "(line 2: 4 spaces vs 2 spaces)",
        "1: def f():",
    ]
    assert missing.value.details["closest"] == {"start": 1, "end": 2}
    assert put.outside.read_bytes("a.py") == b"def f():\n    return 1\n"


async def test_edit_with_several_matches_is_ambiguous(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("a.py", b"x = 1\nx = 1\nx = 1\n")
    message = (
        f'old_string matched 3 times in "{put.display("a.py")}"; '
        "provide a more specific old_string or set replace_all to true\n"
        "The matches start at lines 1, 2 and 3."
    )
    with fails(FsErrorCode.AMBIGUOUS_EDIT, message) as twice:
        await put.fs.edit_text(await put.fs.resolve("a.py"), edit("x = 1", "x = 2"))
    assert dict(twice.value.details) == {"lines": [1, 2, 3], "count": 3}
    assert put.outside.read_bytes("a.py") == b"x = 1\nx = 1\nx = 1\n"


async def test_replace_all_replaces_every_match(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("a.py", b"x = 1\nx = 1\n")
    outcome = await put.fs.edit_text(
        await put.fs.resolve("a.py"), edit("x = 1", "x = 2", replace_all=True)
    )
    assert outcome.replacements == 2
    assert put.outside.read_bytes("a.py") == b"x = 2\nx = 2\n"


async def test_crlf_bom_and_missing_final_newline_survive_an_edit_byte_for_byte(
    put: ProviderUnderTest,
) -> None:
    raw = b"\xef\xbb\xbfone\r\ntwo\r\nthree\r\nfour  \t"
    put.outside.write_bytes("w.txt", raw)
    version = await version_of(put, "w.txt")
    await put.fs.edit_text(await put.fs.resolve("w.txt"), edit("two\nthree", "2\n3\n3b"), version)
    assert put.outside.read_bytes("w.txt") == b"\xef\xbb\xbfone\r\n2\r\n3\r\n3b\r\nfour  \t"


async def test_mixed_endings_outside_the_span_are_kept(put: ProviderUnderTest) -> None:
    raw = b"a\r\nb\nc\r\nd\r\ne"
    put.outside.write_bytes("m.txt", raw)
    await put.fs.edit_text(await put.fs.resolve("m.txt"), edit("c\nd", "C\nD"))
    assert put.outside.read_bytes("m.txt") == b"a\r\nb\nC\r\nD\r\ne"


async def test_lf_file_takes_lf_even_for_a_crlf_new_string(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("lf.txt", b"a\nb\n")
    await put.fs.edit_text(await put.fs.resolve("lf.txt"), edit("a", "x\r\ny"))
    assert put.outside.read_bytes("lf.txt") == b"x\ny\nb\n"


async def test_edit_then_edit_with_the_returned_version_is_not_stale(
    put: ProviderUnderTest,
) -> None:
    target = await put.fs.resolve("a.py")
    created = await put.fs.write_text(target, "x = 1\n")
    first = await put.fs.edit_text(target, edit("1", "2"), created.version)
    await put.fs.edit_text(target, edit("2", "3"), first.version)
    assert put.outside.read_bytes("a.py") == b"x = 3\n"


async def test_edit_of_binary_or_invalid_text_is_not_text(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("bin.dat", b"x\0y")
    put.outside.write_bytes("bad.txt", b"x\xffy")
    with fails(FsErrorCode.NOT_TEXT, f'cannot edit "{put.display("bin.dat")}": binary file'):
        await put.fs.edit_text(await put.fs.resolve("bin.dat"), edit("x", "z"))
    message = f'cannot edit "{put.display("bad.txt")}": invalid UTF-8 text'
    with fails(FsErrorCode.NOT_TEXT, message):
        await put.fs.edit_text(await put.fs.resolve("bad.txt"), edit("x", "z"))
    assert put.outside.read_bytes("bin.dat") == b"x\0y"


async def test_edit_of_a_directory_or_fifo_is_not_a_regular_file(put: ProviderUnderTest) -> None:
    require(put, "special_files")
    put.outside.mkdir("d")
    put.outside.mkfifo("pipe")
    with anyio.fail_after(60):
        for rel in ("d", "pipe"):
            message = f'cannot edit "{put.display(rel)}": not a regular file'
            with fails(FsErrorCode.NOT_REGULAR_FILE, message):
                await put.fs.edit_text(await put.fs.resolve(rel), edit("x", "y"))


async def test_edit_through_a_symlink_keeps_the_link(put: ProviderUnderTest) -> None:
    require(put, "symlinks")
    put.outside.write_bytes("real.txt", b"old\n")
    put.outside.symlink("link.txt", "real.txt")
    await put.fs.edit_text(await put.fs.resolve("link.txt"), edit("old", "new"))
    assert put.outside.is_symlink("link.txt")
    assert put.outside.read_bytes("real.txt") == b"new\n"


async def test_edit_keeps_the_mode(put: ProviderUnderTest) -> None:
    require(put, "posix_modes")
    put.outside.write_bytes("run.sh", b"echo 1\n")
    put.outside.chmod("run.sh", 0o700)
    await put.fs.edit_text(await put.fs.resolve("run.sh"), edit("1", "2"))
    assert put.outside.mode("run.sh") == 0o700
