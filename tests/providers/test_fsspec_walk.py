"""The fsspec walk asks S3 for one listing, not one per directory."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from dsh_fs.providers import FsspecFileSystem
from tests.s3_server import S3Server, shared_server

pytestmark = pytest.mark.anyio


@pytest.fixture
def s3() -> S3Server:
    return shared_server()


@pytest.fixture
def requests(s3: S3Server) -> Iterator[list[str]]:
    """The requests the S3 server answers while the test runs (method and query)."""
    assert s3._server is not None
    app = s3._server.app
    seen: list[str] = []

    def counting(environ: dict[str, Any], start_response: Any) -> Any:
        seen.append(f"{environ['REQUEST_METHOD']} {environ.get('QUERY_STRING', '')}")
        return app(environ, start_response)

    s3._server.app = counting
    try:
        yield seen
    finally:
        s3._server.app = app


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
