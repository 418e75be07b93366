"""The fsspec walk asks S3 for one listing, not one per directory."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from dsh_fs.providers import FsspecFileSystem
from tests.s3_server import S3Server, shared_server

pytestmark = pytest.mark.anyio


@pytest.fixture
def s3() -> S3Server:
    return shared_server()


@pytest.fixture
def requests(s3: S3Server) -> Iterator[list[str]]:
    """The requests the S3 server answers while the test runs."""
    with s3.counting() as seen:
        yield seen


async def test_walking_forty_prefixes_costs_a_constant_number_of_requests(
    s3: S3Server, requests: list[str]
) -> None:
    bucket = s3.new_bucket()
    for d in range(40):
        for f in range(3):
            s3.client().put_object(Bucket=bucket, Key=f"repo/d{d:02}/sub/f{f}.txt", Body=b"x")
    fs = FsspecFileSystem.from_url(f"s3://{bucket}/repo", **s3.storage_options())
    requests.clear()
    async with fs.walk(await fs.resolve(".")) as batches:
        found = [entry.path async for batch in batches for entry in batch]
    await fs.aclose()
    assert len(found) == 40 + 40 + 120
    assert len(requests) <= 3, requests
