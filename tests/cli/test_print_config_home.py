"""`dsh-fs mcp ~ --print-config HOST`: the served folder holds the default journal store,
which the printed entry pins (`--journal <abs>`, SPEC §9.1). The server the host starts from
that entry, in the host's own environment (another HOME), must start and journal there,
fenced out, as `dsh-fs mcp ~` does: it refused ("a named store inside a served root")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = str(Path(sys.executable).parent / "dsh-fs")


def _env(home: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "XDG_STATE_HOME"}
    return {**env, "HOME": str(home)}


def test_the_entry_printed_for_the_home_folder_starts_in_the_hosts_environment(
    tmp_path: Path,
) -> None:
    home = (tmp_path / "home").resolve()
    home.mkdir()
    printed = subprocess.run(
        [SCRIPT, "mcp", str(home), "--print-config", "claude"],
        env=_env(home),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    entry = json.loads(printed.stdout)["mcpServers"]["dsh-fs"]
    store = str(home / ".local" / "state" / "dsh-fs" / "journal")
    assert entry["args"][entry["args"].index("--journal") + 1] == store
    # The host's environment: another HOME, no XDG_STATE_HOME.
    host_home = tmp_path / "host"
    host_home.mkdir()
    started = subprocess.run(
        [entry["command"], *entry["args"]],
        env=_env(host_home),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert started.returncode == 0, started.stderr
    assert f"dsh-fs: journal store {store}/" in started.stderr
    logged = subprocess.run(
        [SCRIPT, "log", str(home), "--journal", store],
        env=_env(host_home),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert logged.returncode == 0, logged.stderr
    assert not (host_home / ".local").exists()


def test_a_named_store_inside_a_served_root_in_another_layout_is_still_refused(
    tmp_path: Path,
) -> None:
    root = (tmp_path / "project").resolve()
    root.mkdir()
    refused = subprocess.run(
        [SCRIPT, "mcp", str(root), "--journal", str(root / ".journal")],
        env=_env(tmp_path),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2
    assert "inside a served root" in refused.stderr
    assert not (root / ".journal").exists()
