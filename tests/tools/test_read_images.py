"""`read` of an image returns the image (SPEC §10), through the library."""

from __future__ import annotations

import os
import resource
from pathlib import Path

import pytest

from dsh_fs import Workspace
from dsh_fs.tools import IMAGE_FORMATS, MAX_IMAGE_BYTES, ImageValue

from ..images import GIF, WEBP, jpeg, png

pytestmark = pytest.mark.anyio


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "red.png").write_bytes(png())
    (tmp_path / "red.gif").write_bytes(GIF)
    (tmp_path / "red.webp").write_bytes(WEBP)
    (tmp_path / "photo.jpg").write_bytes(jpeg(exif=300))
    return tmp_path.resolve()


@pytest.mark.parametrize(
    ("name", "mime_type"),
    [
        ("red.png", "image/png"),
        ("photo.jpg", "image/jpeg"),
        ("red.gif", "image/gif"),
        ("red.webp", "image/webp"),
    ],
)
async def test_an_image_read_returns_its_type_size_and_bytes(
    root: Path, name: str, mime_type: str
) -> None:
    data = (root / name).read_bytes()
    async with Workspace.sandbox(root) as workspace:
        result = await workspace.session().call("read", {"file_path": name})
    assert not result.is_error, result.text
    assert result.value == {"path": f"{root}/{name}", "mime_type": mime_type, "size": len(data)}
    assert isinstance(result.data, ImageValue)
    assert result.data.data == data
    assert result.text == (
        f"<path>{root}/{name}</path>\n<type>image</type>\n<content>\n"
        f"{mime_type}, {len(data)} bytes\n</content>"
    )
    assert mime_type in IMAGE_FORMATS


async def test_an_image_read_records_an_observation_so_it_can_be_overwritten(root: Path) -> None:
    async with Workspace.sandbox(root) as workspace:
        session = workspace.session()
        unread = await session.call("write", {"file_path": "red.gif", "content": "x"})
        assert unread.code == "FS_NOT_OBSERVED"
        await session.call("read", {"file_path": "red.gif"})
        written = await session.call("write", {"file_path": "red.gif", "content": "x"})
    assert not written.is_error, written.text
    assert (root / "red.gif").read_text(encoding="utf-8") == "x"


async def test_content_decides_not_the_extension(root: Path) -> None:
    (root / "lies.txt").write_bytes(png())
    (root / "text.png").write_text("just text\n", encoding="utf-8")
    async with Workspace.sandbox(root) as workspace:
        session = workspace.session()
        image = await session.call("read", {"file_path": "lies.txt"})
        text = await session.call("read", {"file_path": "text.png"})
    assert image.value is not None
    assert image.value["mime_type"] == "image/png"
    assert text.text.splitlines()[3] == "1: just text"


@pytest.mark.parametrize(
    "data",
    [
        png()[:20],  # the signature and a truncated IHDR
        png()[:16] + b"\x00" * 17,  # a zero-sized IHDR with a wrong CRC
        b"GIF89a\x00\x00\x00\x00" + b"\x00" * 20,  # zero width and height
        b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + b"\x00" * 40,  # segments but no frame header
        b"RIFF\x00\x00\x00\x00WEBPVP8 " + b"\x00" * 30,
    ],
    ids=["truncated-png", "bad-ihdr", "empty-gif", "jpeg-without-frame", "bad-webp"],
)
async def test_a_signature_without_a_header_that_parses_is_binary(root: Path, data: bytes) -> None:
    (root / "broken.bin").write_bytes(data)
    async with Workspace.sandbox(root) as workspace:
        result = await workspace.session().call("read", {"file_path": "broken.bin"})
    assert result.code == "FS_NOT_TEXT"
    assert result.text == f'Error: cannot read "{root}/broken.bin": binary file'


async def test_offset_or_limit_with_an_image_is_invalid_args(root: Path) -> None:
    async with Workspace.sandbox(root) as workspace:
        session = workspace.session()
        results = [
            await session.call("read", {"file_path": "red.png", **window})
            for window in ({"offset": 1}, {"limit": 10})
        ]
    for result in results:
        assert result.code == "INVALID_ARGS"
        assert result.text == (
            "Error: offset and limit cannot be used with an image (image/png); read it without them"
        )


async def test_an_image_over_the_cap_is_too_large_and_the_cap_is_configurable(
    root: Path,
) -> None:
    (root / "big.png").write_bytes(png(padding=MAX_IMAGE_BYTES))
    size = (root / "big.png").stat().st_size
    async with Workspace.sandbox(root) as workspace:
        refused = await workspace.session().call("read", {"file_path": "big.png"})
    async with Workspace.sandbox(root, max_image_bytes=size) as workspace:
        allowed = await workspace.session().call("read", {"file_path": "big.png"})
    async with Workspace.sandbox(root, max_image_bytes=10) as workspace:
        small = await workspace.session().call("read", {"file_path": "red.gif"})
    assert refused.code == "FS_TOO_LARGE"
    assert refused.text == (
        f'Error: cannot read "{root}/big.png": image of {size} bytes is over the '
        f"{MAX_IMAGE_BYTES}-byte limit"
    )
    assert allowed.value == {"path": f"{root}/big.png", "mime_type": "image/png", "size": size}
    assert small.text == (
        f'Error: cannot read "{root}/red.gif": image of {len(GIF)} bytes is over the 10-byte limit'
    )


async def test_a_5_gib_sparse_file_with_a_png_header_is_refused_without_being_read(
    root: Path,
) -> None:
    path = root / "huge.png"
    with path.open("wb") as out:
        out.write(png()[:33])
        out.truncate(5 << 30)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    async with Workspace.sandbox(root) as workspace:
        result = await workspace.session().call("read", {"file_path": "huge.png"})
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert result.code == "FS_TOO_LARGE"
    assert result.text == (
        f'Error: cannot read "{path}": image of {5 << 30} bytes is over the '
        f"{MAX_IMAGE_BYTES}-byte limit"
    )
    assert grown_kib < 64 * 1024  # far from the file's 5 GiB (a streamed chunk at most)
    os.truncate(path, 0)
