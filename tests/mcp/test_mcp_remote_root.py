"""``dsh-fs mcp s3://bucket/prefix`` and ``dsh-fs log|diff|undo|review s3://…`` (SPEC §14).

The S3 server is moto on loopback in this test's process; every ``dsh-fs`` is a process of
its own that finds it only through the standard AWS environment (``AWS_ENDPOINT_URL`` and
dummy keys), as a machine in a fleet would. The server's changes are journaled on the
bucket, so a ``dsh-fs log`` started elsewhere sees them and ``undo`` puts them back.
"""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from dsh_fs.cli import main

from ..s3_server import S3Server, shared_server
from .mcp_testing import BOTH_ERAS, Era
from .test_mcp_stdio import TIMEOUT, code_of, text_of

pytestmark = pytest.mark.anyio

NOTES = b"alpha\nbeta\ngamma\n"


def _environment(s3: S3Server, tmp_path: Path) -> dict[str, str]:
    """A process's environment that reaches `s3` only through the standard AWS variables;
    its home and state folders in `tmp_path`."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {
        **os.environ,
        "AWS_ENDPOINT_URL": s3.endpoint_url,
        "HOME": str(home),
        "XDG_STATE_HOME": str(home / "state"),
    }


def _dsh_fs(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dsh_fs", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def _review_page(env: dict[str, str], *args: str) -> tuple[str, str]:
    """``dsh-fs review --no-open ARGS`` in a process of its own: what it said on stderr up
    to its URL, and the page at that URL."""
    command = [sys.executable, "-m", "dsh_fs", "review", "--no-open", *args]
    with subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env) as review:
        try:
            assert review.stderr is not None
            lines = []
            for line in review.stderr:
                lines.append(line)
                if "open http" in line:
                    break
            said = "".join(lines)
            url = re.search(r"http://\S+", said)
            assert url is not None, said
            page = httpx.get(url.group(0), timeout=TIMEOUT)
            assert page.status_code == 200, page.text
            return said, page.text
        finally:
            review.terminate()
            review.wait(timeout=TIMEOUT)


def _object(s3: S3Server, bucket: str, key: str) -> bytes:
    body: Any = s3.client().get_object(Bucket=bucket, Key=key)["Body"]
    return bytes(body.read())


@BOTH_ERAS
async def test_a_remote_root_is_served_over_stdio_and_another_process_logs_and_undoes_it(
    tmp_path: Path, era: Era
) -> None:
    s3 = shared_server()
    bucket = s3.new_bucket()
    s3.client().put_object(Bucket=bucket, Key="project/notes.txt", Body=NOTES)
    url = f"s3://{bucket}/project"
    env = _environment(s3, tmp_path)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "dsh_fs", "mcp", url], env=env
    )
    edit = {"file_path": "notes.txt", "old_string": "beta", "new_string": "BETA"}
    with anyio.fail_after(TIMEOUT):
        async with Client(params, mode=era) as client:
            unread = await client.call_tool("edit", edit)
            assert code_of(unread) == "FS_NOT_OBSERVED"
            read = await client.call_tool("read", {"file_path": "notes.txt"})
            assert "beta" in text_of(read)
            assert not (await client.call_tool("edit", edit)).is_error
            written = await client.call_tool("write", {"file_path": "new.txt", "content": "x\n"})
            assert not written.is_error
    assert _object(s3, bucket, "project/notes.txt") == b"alpha\nBETA\ngamma\n"

    logged = _dsh_fs(env, "log", "--json", url)
    assert logged.returncode == 0, logged.stderr
    entries = json.loads(logged.stdout)
    assert [(e["tool"], e["path"]) for e in entries] == [
        ("write", f"{url}/new.txt"),
        ("edit", f"{url}/notes.txt"),
    ]
    edited = entries[1]["id"]
    shown = _dsh_fs(env, "log", url, "notes.txt")
    # The store is the root's hidden sibling on the bucket, found from another process.
    assert f"1 change shown; the journal at s3://{bucket}/.dsh-fs-journal/" in shown.stdout
    assert shown.stdout.rstrip().endswith("notes.txt")

    diff = _dsh_fs(env, "diff", url, edited)
    assert diff.returncode == 0, diff.stderr
    assert "-beta\n+BETA\n" in diff.stdout

    undone = _dsh_fs(env, "undo", url, edited)
    assert undone.returncode == 0, undone.stderr
    assert undone.stdout.startswith(f"undone {edited} ")
    assert _object(s3, bucket, "project/notes.txt") == NOTES
    again = _dsh_fs(env, "undo", url, edited)
    assert again.returncode == 1
    assert "refused" in again.stdout


async def test_a_remote_roots_journal_may_be_named_on_the_same_storage(tmp_path: Path) -> None:
    s3 = shared_server()
    bucket = s3.new_bucket()
    s3.client().put_object(Bucket=bucket, Key="ws/a.txt", Body=b"one\n")
    url = f"s3://{bucket}/ws"
    env = _environment(s3, tmp_path)
    journal = ["--journal", f"s3://{bucket}/elsewhere/journal"]
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "dsh_fs", "mcp", *journal, url], env=env
    )
    with anyio.fail_after(TIMEOUT):
        async with Client(params, mode="legacy") as client:
            assert not (await client.call_tool("read", {"file_path": "a.txt"})).is_error
            change = {"file_path": "a.txt", "old_string": "one", "new_string": "two"}
            assert not (await client.call_tool("edit", change)).is_error
    keys = [o["Key"] for o in s3.client().list_objects_v2(Bucket=bucket)["Contents"]]
    assert any(key.startswith("elsewhere/journal/") for key in keys)
    assert not any(key.startswith(".dsh-fs-journal/") for key in keys)
    logged = _dsh_fs(env, "log", "--json", *journal, url)
    assert len(entries := json.loads(logged.stdout)) == 1, logged.stderr
    assert "No changes are recorded" in _dsh_fs(env, "log", url).stdout

    # The review page reads the same store from another process.
    said, page = _review_page(env, *journal, url)
    assert f"s3://{bucket}/elsewhere/journal/" in said
    assert html.escape(entries[0]["session"]) in page


def test_a_remote_journal_elsewhere_than_its_storage_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_serving: None
) -> None:
    assert main(["mcp", "--journal", str(tmp_path), "memory://ws"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dsh-fs mcp: memory://ws: the journal store ")
    assert "must be a memory:// URL on the same storage" in err
