"""The review page's speed (issue 38, SPEC §11.1): the sessions page of a journal of 10,000
entries opens in under 1 s, and a 1 MB change's diff reaches the page without freezing it
(its first chunk in under 1 s, at most `CHUNK_ROWS` rows a chunk). Run:

    .venv/bin/python -m bench.review [--entries 10000] [--repeat 5]

The journal is made for real: agents' writes through the tools (200 sessions), into one store
on a real disk. The page is served for real (uvicorn on loopback) and asked over HTTP; each
time is the median of `repeat` requests, each reading the store afresh (the page caches a
reading for half a second). Where Chromium and Playwright are installed, the browser's time
from "Show diff" to the first rows of the 1 MB diff is measured too.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import anyio
import httpx
from anyio.from_thread import start_blocking_portal

from dsh_fs import Workspace
from dsh_fs.mcp.http import bind_socket
from dsh_fs.review import Review, ReviewSource, review_url, serve_review

CHROMIUM = "/usr/bin/chromium"
_TOKEN = "bench-review-token-0123456789abcdef"
_SESSIONS = 200


async def _journal(root: Path, store: Path, entries: int) -> None:
    """`entries` journaled writes by `_SESSIONS` sessions (creates, then rewrites)."""
    async with Workspace.sandbox(root, journal=store) as ws:
        sessions = [ws.session(label=f"agent{n:03d}") for n in range(_SESSIONS)]
        for n in range(entries):
            session = sessions[n % _SESSIONS]
            name = f"f{n % 1000:04d}.txt"
            if (root / name).exists():
                await session.call("read", {"file_path": name})
            result = await session.call("write", {"file_path": name, "content": f"{n}\n"})
            assert not result.is_error, result.text
        big = [f"line {n} of a large file, long enough to matter\n" for n in range(23_000)]
        await ws.session(label="big").call(
            "write", {"file_path": "big.txt", "content": "".join(big)}
        )
        # The same 1 MB file with an edit every 23 lines: 1,000 hunks all through it.
        scattered = ws.session(label="scattered")
        await scattered.call("read", {"file_path": "big.txt"})
        for n in range(0, len(big), 23):
            big[n] = f"edited line {n}\n"
        result = await scattered.call("write", {"file_path": "big.txt", "content": "".join(big)})
        assert not result.is_error, result.text


def _median(repeat: int, measure: Callable[[], float]) -> float:
    return statistics.median(measure() for _ in range(repeat))


def _browser_first_rows(url: str) -> float | None:
    """Seconds from pressing "Show diff" on the 1 MB change to its first rows on screen."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if not os.access(CHROMIUM, os.X_OK):
        return None
    args = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=args)
        try:
            page = browser.new_page()
            page.goto(url)
            page.get_by_role("link", name="big-", exact=False).click()
            page.wait_for_selector("ol#changes")
            start = time.perf_counter()
            page.get_by_role("button", name="Show diff").click()
            page.wait_for_selector("table.difftab tr.added")
            return time.perf_counter() - start
        finally:
            browser.close()


def review_rows(entries: int, repeat: int) -> list[str]:
    """The table's rows (a header, then one per measure with its target and met / not met);
    `make bench` prints them in its run."""
    rows = ["| measure | median (wall) | target | |", "|---|---|---|---|"]
    with tempfile.TemporaryDirectory(dir=".") as tmp:
        root, store = Path(tmp) / "ws", Path(tmp) / "store"
        root.mkdir()
        made = time.perf_counter()
        anyio.run(_journal, root, store, entries)
        made = time.perf_counter() - made
        with start_blocking_portal() as portal:
            workspace = portal.call(partial(Workspace.sandbox, root, journal=store))
            journal = workspace.journal
            assert journal is not None
            recorded = portal.call(journal.entries)
            label = next(e.session for e in recorded if e.session.startswith("agent"))
            big_id = next(e.id for e in recorded if e.session.startswith("big"))
            scattered_id = next(e.id for e in recorded if e.session.startswith("scattered"))
            review = Review([ReviewSource(root=str(root), journal=journal)])
            sock = bind_socket("127.0.0.1", 0)
            ready = threading.Event()
            serving = portal.start_task_soon(
                partial(serve_review, review, sock, token=_TOKEN, on_ready=ready.set)
            )
            try:
                assert ready.wait(60)
                base = f"http://127.0.0.1:{sock.getsockname()[1]}"
                headers = {"X-Dsh-Fs-Token": _TOKEN}
                cpus: dict[str, list[float]] = {}
                with httpx.Client(base_url=base, headers=headers, timeout=300) as client:

                    def timed(path: str, **params: str | int) -> float:
                        # The page reuses a reading of the store for half a second: past
                        # it, each request reads the store afresh, as after a new change.
                        time.sleep(0.6)
                        start, cpu = time.perf_counter(), time.process_time()
                        response = client.get(path, params=params)
                        assert response.status_code == 200, response.text
                        cpus.setdefault(path, []).append(time.process_time() - cpu)
                        return time.perf_counter() - start

                    page = _median(repeat, lambda: timed("/"))
                    session = _median(repeat, lambda: timed("/session", store=0, label=label))
                    chunk = timed("/api/diff", store=0, id=big_id)  # the diff made, then cut
                    spread = timed("/api/diff", store=0, id=scattered_id)
                    spread_cpu = cpus["/api/diff"][-1]
                    more = _median(repeat, lambda: timed("/api/diff", store=0, id=big_id, chunk=9))
                browser = _browser_first_rows(review_url(sock, _TOKEN))
            finally:
                serving.cancel()
                portal.call(workspace.aclose)
                sock.close()
    cpu = {path: statistics.median(times) for path, times in cpus.items()}
    rows.append(_row(f"sessions page, {len(recorded):,} entries", page, cpu["/"]))
    rows.append(
        _row(f"a session's page ({entries // _SESSIONS} changes)", session, cpu["/session"])
    )
    rows.append(_row("1 MB change: its diff's first chunk (server, diff made)", chunk))
    rows.append(_row("1 MB change: a later chunk (400 rows; server)", more))
    measure = "1 MB change, 1,000 edits all through it: its diff's first chunk (server)"
    rows.append(_row(measure, spread, spread_cpu))
    if browser is not None:
        rows.append(_row("1 MB change: Show diff to its first rows (Chromium)", browser))
    else:
        rows.append("| 1 MB change: Show diff in Chromium | not measured (no Chromium) | < 1 s | |")
    rows.append(f"| (making the journal: {entries:,} journaled writes) | {made:.0f} s | | |")
    return rows


def _row(measure: str, seconds: float, cpu: float | None = None, target: float = 1.0) -> str:
    """A row: the median wall time (and the process's CPU time during the request, which
    a busy machine's load does not inflate), the target, met or not."""
    met = "met" if seconds < target else "NOT met"
    spent = f" (CPU {cpu * 1000:.0f} ms)" if cpu is not None else ""
    return f"| {measure} | {seconds * 1000:.0f} ms{spent} | < {target:g} s | {met} |"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.review", description=__doc__)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    print("\n".join(review_rows(args.entries, args.repeat)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
