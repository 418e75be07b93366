"""The JSON shapes shared by the generator, both runners and the comparison.

A case is one JSON object (one line of a JSON-lines file):

``{"id", "policy", "files": [Put], "steps": [Step]}``

- paths in external operations are relative to the case's scratch root, whose ``work/``
  folder is the tools' working directory and whose ``home/`` folder is ``$HOME``;
- a ``call`` step carries its tool arguments as raw JSON text (``"args"``), so that both
  sides parse the very same bytes (``2.0``, ``1e3``, ``-0``, ``100000000000000000000``,
  ``"\\ud800"`` reach each JSON parser as written);
- every other step is an out-of-band change made by the harness, not by a tool.

A result is ``{"id", "case_sha", "steps": [StepResult | None], "files": {path: Entry}}``
with every scratch path already replaced by a placeholder (see `normalize`).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal, TypedDict

from typing_extensions import NotRequired

__all__ = [
    "Case",
    "Entry",
    "Part",
    "Result",
    "Step",
    "StepResult",
    "case_sha",
    "dump_line",
]


class Part(TypedDict):
    """A run of bytes: ``b64`` decoded, repeated ``repeat`` times."""

    b64: str
    repeat: int


class Step(TypedDict):
    """One step: a tool ``call`` or an out-of-band change (put/touch/delete/mkdir/...)."""

    op: Literal["call", "put", "touch", "delete", "mkdir", "symlink", "fifo", "chmod"]
    name: NotRequired[str]
    args: NotRequired[str]
    session: NotRequired[str]
    path: NotRequired[str]
    b64: NotRequired[str]
    parts: NotRequired[list[Part]]
    mtime: NotRequired[int]
    target: NotRequired[str]
    mode: NotRequired[int]


class Case(TypedDict):
    """A generated case."""

    id: str
    policy: bool
    files: list[Step]
    steps: list[Step]


class StepResult(TypedDict):
    """What one tool call returned."""

    is_error: bool
    text: str
    code: str | None
    error_name: NotRequired[str | None]


class Entry(TypedDict):
    """One entry of the scratch root after the case (a file, a folder, a link, other).

    A file of at most 64 KiB carries its bytes (``b64``); a larger one its ``size`` and
    ``sha256``.
    """

    type: Literal["file", "dir", "symlink", "other"]
    mode: NotRequired[int]
    b64: NotRequired[str]
    size: NotRequired[int]
    sha256: NotRequired[str]
    target: NotRequired[str]


class Result(TypedDict):
    """One case's outcome on one side, normalized."""

    id: str
    case_sha: str
    steps: list[StepResult | None]
    files: dict[str, Entry]
    crash: NotRequired[str]


def dump_line(value: Any) -> str:
    """One JSON-lines record: ASCII only (a lone surrogate survives as ``\\udXXX``)."""
    return json.dumps(value, ensure_ascii=True, sort_keys=True, separators=(",", ":"))


def case_sha(case: Case) -> str:
    """A fingerprint of the case, stored beside each recorded result (stale recordings)."""
    return hashlib.sha256(dump_line(case).encode("ascii")).hexdigest()[:16]
