"""`--peers`: the same workloads on the tools a user would pick instead, side by side.

Peers are installed on demand into ``bench/.peers`` (gitignored), never into the project's
environment: the MCP reference filesystem server with npm, OpenHands ACI with pip into its
own venv. A peer that cannot be installed is reported as such, with the installer's words.
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench._data import MARKER
from bench._mcp import McpPipe, dsh_fs_server, reference_server, time_calls

__all__ = ["PeerRow", "install_aci", "install_reference", "peer_rows", "render_peers"]

PEERS = Path(__file__).parent / ".peers"
REFERENCE_PACKAGE = "@modelcontextprotocol/server-filesystem"
ALT = MARKER.replace("unique line", "edited line")

Times = list[float]


@dataclass(frozen=True, slots=True, kw_only=True)
class PeerRow:
    """One workload: dsh-fs's times and each peer's (times, or why there are none)."""

    workload: str
    ours: Times
    peers: dict[str, Times | str] = field(default_factory=dict)


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def install_reference() -> Path | str:
    """`node_modules` holding the reference server, or why it could not be installed."""
    modules = PEERS / "node_modules"
    if (modules / REFERENCE_PACKAGE / "dist" / "index.js").exists():
        return modules
    if shutil.which("npm") is None:
        return "npm is not available"
    PEERS.mkdir(parents=True, exist_ok=True)
    out = subprocess.run(
        ["npm", "install", "--prefix", str(PEERS), "--no-audit", "--no-fund", REFERENCE_PACKAGE],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        return f"npm install failed: {_last_line(out.stderr)}"
    return modules


def install_aci() -> Path | str:
    """The peers venv's python with openhands-aci, or why it could not be installed."""
    venv = PEERS / "venv"
    python = venv / "bin" / "python"
    probe = [str(python), "-c", "import openhands_aci.editor"]
    if python.exists() and subprocess.run(probe, capture_output=True, check=False).returncode == 0:
        return python
    PEERS.mkdir(parents=True, exist_ok=True)
    subprocess.run(["python3", "-m", "venv", str(venv)], check=True)
    out = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "openhands-aci"],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        return f"pip install openhands-aci failed: {_last_line(out.stderr)}"
    return python


def _aci(python: Path, spec: dict[str, Any]) -> Times | str:
    script = Path(__file__).with_name("_peer_aci.py")
    out = subprocess.run(
        [str(python), str(script), json.dumps(spec)],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    if out.returncode != 0:
        return f"failed: {_last_line(out.stderr)}"
    answer: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    if "error" in answer:
        return str(answer["error"])
    times: Times = answer["times"]
    return times


def _over_mcp(server: McpPipe, repeats: int, step: Callable[[McpPipe, int], object]) -> Times | str:
    try:
        return time_calls(repeats, lambda i: step(server, i))
    except RuntimeError as exc:
        return str(exc)[:200]
    finally:
        server.close()


def peer_rows(small: Path, source: Path, total_lines: int, *, quick: bool) -> list[PeerRow]:
    """Small read, 2000-line windows, an edit and a write of `source`, on every peer."""
    reference = install_reference()
    aci = install_aci()
    repeats = 10 if quick else 30
    root = source.parent
    copies = {name: root / f"work-{name}-{source.name}" for name in ("mcp-dsh", "mcp-ref")}
    for copy in copies.values():
        shutil.copyfile(source, copy)
    end = max(1, total_lines - 1999)
    content = source.read_text(encoding="utf-8")
    contents = [content, content + "# v2\n"]

    def dsh(step: Callable[[McpPipe, int], object], count: int = repeats) -> Times | str:
        return _over_mcp(dsh_fs_server(root), count, step)

    def ref(step: Callable[[McpPipe, int], object], count: int = repeats) -> Times | str:
        if isinstance(reference, str):
            return reference
        return _over_mcp(reference_server(reference, root), count, step)

    def aci_run(spec: dict[str, Any]) -> Times | str:
        if isinstance(aci, str):
            return aci
        return _aci(aci, {"repeats": repeats, "marker": MARKER, "alt": ALT, **spec})

    mine, theirs = copies["mcp-dsh"], copies["mcp-ref"]

    def dsh_edit(server: McpPipe, i: int) -> object:
        if i <= 0:
            server.call("read", {"file_path": str(mine), "limit": 1})
        old, new = (MARKER, ALT) if i % 2 == 0 else (ALT, MARKER)
        return server.call("edit", {"file_path": str(mine), "old_string": old, "new_string": new})

    def ref_edit(server: McpPipe, i: int) -> object:
        old, new = (MARKER, ALT) if i % 2 == 0 else (ALT, MARKER)
        return server.call(
            "edit_file", {"path": str(theirs), "edits": [{"oldText": old, "newText": new}]}
        )

    def dsh_write(server: McpPipe, i: int) -> object:
        if i <= 0:
            server.call("read", {"file_path": str(mine), "limit": 1})
        return server.call("write", {"file_path": str(mine), "content": contents[(i + 1) % 2]})

    def ref_write(server: McpPipe, i: int) -> object:
        return server.call("write_file", {"path": str(theirs), "content": contents[(i + 1) % 2]})

    small_n = 200 if quick else 1000
    rows = [
        PeerRow(
            workload="read a 10-line file (MCP stdio round trip)",
            ours=_times(dsh(lambda s, i: s.call("read", {"file_path": str(small)}), small_n)),
            peers={
                "MCP reference server": ref(
                    lambda s, i: s.call("read_text_file", {"path": str(small)}), small_n
                ),
                "OpenHands ACI": aci_run({"workload": "small-read", "path": str(small)}),
            },
        ),
        PeerRow(
            workload=f"read 2000 lines, {source.stat().st_size >> 20} MB, start",
            ours=_times(dsh(lambda s, i: s.call("read", {"file_path": str(source)}))),
            peers={
                "MCP reference server": ref(
                    lambda s, i: s.call("read_text_file", {"path": str(source), "head": 2000})
                ),
                "OpenHands ACI": aci_run({"workload": "read", "path": str(source), "offset": 1}),
            },
        ),
        PeerRow(
            workload="… middle",
            ours=_times(
                dsh(lambda s, i: s.call("read", {"file_path": str(source), "offset": end // 2}))
            ),
            peers={
                "MCP reference server": "no offset (head/tail only)",
                "OpenHands ACI": aci_run(
                    {"workload": "read", "path": str(source), "offset": end // 2}
                ),
            },
        ),
        PeerRow(
            workload="… end",
            ours=_times(
                dsh(lambda s, i: s.call("read", {"file_path": str(source), "offset": end}))
            ),
            peers={
                "MCP reference server": ref(
                    lambda s, i: s.call("read_text_file", {"path": str(source), "tail": 2000})
                ),
                "OpenHands ACI": aci_run({"workload": "read", "path": str(source), "offset": end}),
            },
        ),
        PeerRow(
            workload="edit one line (MCP: edit / edit_file; ACI: str_replace)",
            ours=_times(dsh(dsh_edit)),
            peers={
                "MCP reference server": ref(ref_edit),
                "OpenHands ACI": aci_run({"workload": "edit", "path": str(source)}),
            },
        ),
        PeerRow(
            workload="write (replace) the file",
            ours=_times(dsh(dsh_write)),
            peers={
                "MCP reference server": ref(ref_write),
                "OpenHands ACI": "cannot replace (create refuses an existing file)",
            },
        ),
    ]
    for copy in copies.values():
        copy.unlink(missing_ok=True)
    return rows


def _times(result: Times | str) -> Times:
    if isinstance(result, str):
        raise SystemExit(f"dsh-fs over MCP failed: {result}")
    return result


def _fmt(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.0f} µs"


def small_read_verdict(rows: list[PeerRow], target: float = 0.8) -> str:
    """The line judging issue 27's MCP row: dsh-fs's small read over stdio against the MCP
    reference server's, both medians from `rows` (the same raw client), with met / not met."""
    row = rows[0]
    reference = row.peers.get("MCP reference server")
    if not isinstance(reference, list):
        return (
            f"Small read over MCP stdio ≤ {target}× the MCP reference server: not measured "
            f"({reference}).\n"
        )
    ratio = statistics.median(row.ours) / statistics.median(reference)
    met = "met" if ratio <= target else "**not met**"
    return (
        f"Small read over MCP stdio (the first row): dsh-fs {_fmt(statistics.median(row.ours))}"
        f" / the MCP reference server {_fmt(statistics.median(reference))} = {ratio:.2f}×; "
        f"target ≤ {target}×: {met}.\n"
    )


def render_peers(rows: list[PeerRow]) -> str:
    """The side-by-side table: medians, and each peer's time as a multiple of dsh-fs's."""
    names = list(dict.fromkeys(name for row in rows for name in row.peers))
    head = "| workload | dsh-fs (MCP stdio) | " + " | ".join(names) + " |\n"
    head += "|---" * (2 + len(names)) + "|\n"
    lines = []
    notes: dict[str, int] = {}  # long reasons, shown once below the table
    for row in rows:
        ours = statistics.median(row.ours)
        cells = []
        for name in names:
            result = row.peers.get(name, "–")
            if isinstance(result, str) and len(result) > 50:
                number = notes.setdefault(result, len(notes) + 1)
                cells.append(f"n/a ({number})")
            elif isinstance(result, str):
                cells.append(result)
            else:
                theirs = statistics.median(result)
                cells.append(f"{_fmt(theirs)} ({theirs / ours:.1f}× dsh-fs)")
        lines.append(f"| {row.workload} | {_fmt(ours)} | " + " | ".join(cells) + " |")
    footer = "".join(f"\n({number}) {reason}\n" for reason, number in notes.items())
    return head + "\n".join(lines) + "\n" + footer


if __name__ == "__main__":  # pragma: no cover - a manual smoke run
    from bench._data import ensure_file, small_file

    src = ensure_file("1MB")
    with src.open("rb") as f:
        n = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))
    print(render_peers(peer_rows(small_file(), src, n, quick=True)))
    sys.exit(0)
