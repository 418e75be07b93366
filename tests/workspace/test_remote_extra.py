"""`Workspace.remote` without fsspec installed names the extra that brings it."""

from __future__ import annotations

import subprocess
import sys

# fsspec is installed here; None in sys.modules makes importing it fail as if it were not.
WITHOUT_FSSPEC = """
import sys
sys.modules["fsspec"] = None
from dsh_fs import Workspace
try:
    Workspace.remote("memory://x")
except ModuleNotFoundError as exc:
    print(exc.name, exc, sep="|")
"""


def test_remote_without_fsspec_names_the_remote_and_s3_extras() -> None:
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_FSSPEC], capture_output=True, text=True, check=True
    )
    name, message = done.stdout.strip().split("|")
    assert name == "fsspec"
    assert "pip install 'dsh-fs[remote]'" in message
    assert "pip install 'dsh-fs[s3]'" in message
