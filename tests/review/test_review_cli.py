"""`dsh-fs review` as a user runs it: the URL with its token on stderr, the page behind it,
a bad ROOT or a network address without ``--allow-remote`` refused (exit 2)."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import httpx

from dsh_fs.adapters import SyncWorkspace
from dsh_fs.cli import main

_DSH_FS = str(Path(sys.executable).with_name("dsh-fs"))


def test_review_prints_its_url_with_a_token_and_serves_the_page(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    journal = tmp_path / "journal"
    env = {**os.environ, "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")}
    command = [_DSH_FS, "review", str(root), "--journal", str(journal), "--no-open"]
    with subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env) as server:
        try:
            assert server.stderr is not None
            lines = []
            for line in server.stderr:
                lines.append(line)
                if "open http" in line:
                    break
            url = re.search(r"http://\S+", "".join(lines))
            assert url is not None, lines
            assert "token=" in url.group(0)
            assert str(journal) in "".join(lines)
            page = httpx.get(url.group(0), timeout=60)
            assert page.status_code == 200
            assert "No changes are recorded yet." in page.text
            bare = httpx.get(url.group(0).split("?")[0], timeout=60)
            assert bare.status_code == 401
        finally:
            server.terminate()
            server.wait(timeout=60)


def test_review_of_a_missing_folder_is_a_usage_error(tmp_path: Path, capsys: object) -> None:
    missing = tmp_path / "nowhere"
    assert main(["review", str(missing), "--journal", str(tmp_path / "j"), "--no-open"]) == 2


def test_review_on_a_network_address_needs_allow_remote(tmp_path: Path) -> None:
    # 0.0.0.0 is every address of the machine: other machines could reach the page.
    args = ["review", str(tmp_path), "--journal", str(tmp_path.parent / "j"), "--no-open"]
    assert main([*args, "--host", "0.0.0.0"]) == 2
    assert main([*args, "--port", "70000"]) == 2


def test_review_reads_every_sub_store_as_log_does_and_shows_only_the_served_roots(
    tmp_path: Path,
) -> None:
    served, other = tmp_path / "served", tmp_path / "other"
    served.mkdir()
    other.mkdir()
    journal = tmp_path / "journal"
    # A server with two ROOTs records under its first: its change in `served` is in the
    # sub-store of `other`, next to a change outside the served ROOT.
    agents = SyncWorkspace.sandbox(str(other), str(served), journal=str(journal))
    try:
        session = agents.session(label="two-roots")
        assert not session.call(
            "write", {"file_path": f"{served}/in.txt", "content": "x\n"}
        ).is_error
        assert not session.call("write", {"file_path": "out.txt", "content": "y\n"}).is_error
    finally:
        agents.close()
    env = {**os.environ, "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")}
    command = [_DSH_FS, "review", str(served), "--journal", str(journal), "--no-open"]
    with subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env) as server:
        try:
            assert server.stderr is not None
            url = None
            for line in server.stderr:
                found = re.search(r"http://\S+", line)
                if found:
                    url = found.group(0)
                    break
            assert url is not None
            page = httpx.get(url, timeout=60).text
            assert "two-roots-" in page
            start = page.index('href="/session?')
            link = html.unescape(page[start + len('href="') : page.index('"', start + 6)])
            session_page = httpx.get(url.split("/?")[0] + link, timeout=60).text
            assert "in.txt" in session_page
            assert "out.txt" not in session_page  # outside the served ROOT
            assert "1 change to 1 file" in session_page
        finally:
            server.terminate()
            server.wait(timeout=60)
