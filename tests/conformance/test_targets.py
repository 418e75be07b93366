"""Resolution, identity, containment and URLs (SPEC §3: targets)."""

from __future__ import annotations

import pytest

from dsh_fs.errors import FsErrorCode

from .backends import ProviderUnderTest, fails, require

pytestmark = pytest.mark.anyio


async def test_relative_path_resolves_against_the_base(put: ProviderUnderTest) -> None:
    target = await put.fs.resolve("dir/a.txt")
    assert target.display_path == put.display("dir/a.txt")


async def test_relative_path_resolves_against_cwd_when_given(put: ProviderUnderTest) -> None:
    target = await put.fs.resolve("a.txt", cwd=put.display("sub"))
    assert target.display_path == put.display("sub/a.txt")


async def test_absolute_path_ignores_cwd(put: ProviderUnderTest) -> None:
    target = await put.fs.resolve(put.display("x/a.txt"), cwd=put.display("elsewhere"))
    assert target.display_path == put.display("x/a.txt")


async def test_dot_segments_are_normalized_in_the_display_path(put: ProviderUnderTest) -> None:
    target = await put.fs.resolve("sub/./deeper/../a.txt")
    assert target.display_path == put.display("sub/a.txt")


async def test_two_spellings_of_one_path_share_a_key(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("a.txt", b"x")
    first = await put.fs.resolve("a.txt")
    second = await put.fs.resolve("sub/../a.txt")
    assert first.target_key == second.target_key


async def test_different_files_have_different_keys(put: ProviderUnderTest) -> None:
    first = await put.fs.resolve("a.txt")
    second = await put.fs.resolve("b.txt")
    assert first.target_key != second.target_key


async def test_empty_path_is_not_found(put: ProviderUnderTest) -> None:
    with fails(FsErrorCode.NOT_FOUND):
        await put.fs.resolve("")


async def test_path_with_nul_byte_is_not_found(put: ProviderUnderTest) -> None:
    with fails(FsErrorCode.NOT_FOUND):
        await put.fs.resolve("a\0b.txt")


async def test_symlink_and_its_target_share_a_key_but_not_a_display_path(
    put: ProviderUnderTest,
) -> None:
    require(put, "symlinks")
    put.outside.write_bytes("real.txt", b"x")
    put.outside.symlink("link.txt", "real.txt")
    real = await put.fs.resolve("real.txt")
    link = await put.fs.resolve("link.txt")
    assert link.target_key == real.target_key
    assert link.display_path == put.display("link.txt")
    assert await put.fs.process_path(link) == await put.fs.process_path(real)
    assert await put.fs.file_url(link) == await put.fs.file_url(real)


async def test_new_file_under_a_symlinked_directory_shares_the_real_key(
    put: ProviderUnderTest,
) -> None:
    require(put, "symlinks")
    put.outside.mkdir("realdir")
    put.outside.symlink("dirlink", "realdir")
    via_link = await put.fs.resolve("dirlink/new.txt")
    direct = await put.fs.resolve("realdir/new.txt")
    assert via_link.target_key == direct.target_key


async def test_a_directory_contains_itself_and_its_descendants(put: ProviderUnderTest) -> None:
    put.outside.write_bytes("root/sub/a.txt", b"x")
    root = await put.fs.resolve("root")
    assert await put.fs.contains(root, root)
    assert await put.fs.contains(root, await put.fs.resolve("root/sub/a.txt"))
    assert await put.fs.contains(root, await put.fs.resolve("root/not-yet.txt"))
    assert not await put.fs.contains(await put.fs.resolve("root/sub"), root)


async def test_containment_is_by_path_components_not_string_prefix(
    put: ProviderUnderTest,
) -> None:
    put.outside.write_bytes("root/a.txt", b"x")
    put.outside.write_bytes("root-evil/a.txt", b"x")
    root = await put.fs.resolve("root")
    assert not await put.fs.contains(root, await put.fs.resolve("root-evil/a.txt"))
    assert not await put.fs.contains(root, await put.fs.resolve("root-evil"))


async def test_containment_follows_symlinks(put: ProviderUnderTest) -> None:
    require(put, "symlinks")
    put.outside.write_bytes("outside/secret.txt", b"x")
    put.outside.mkdir("root")
    put.outside.symlink("root/escape", "outside")
    root = await put.fs.resolve("root")
    assert not await put.fs.contains(root, await put.fs.resolve("root/escape/secret.txt"))


async def test_distinct_files_have_distinct_urls(put: ProviderUnderTest) -> None:
    first = await put.fs.file_url(await put.fs.resolve("a.txt"))
    second = await put.fs.file_url(await put.fs.resolve("b.txt"))
    assert first != second
    assert "://" in first or first.startswith("file:")
