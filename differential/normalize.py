"""Scratch paths to placeholders, so both sides' outputs compare byte for byte.

Each case runs in a fresh scratch root with ``work/`` (the tools' working directory) and
``home/`` (``$HOME``). In every text, ``<root>/work`` becomes ``<cwd>``, ``<root>/home``
becomes ``<home>`` and any other mention of the root becomes ``<root>``.
"""

from __future__ import annotations

from typing import Any

from .model import Entry, Result, StepResult

__all__ = ["normalize_result", "normalize_text"]


def normalize_text(text: str, root: str) -> str:
    """Replace the scratch root (and its two folders) in `text`."""
    for path, placeholder in (
        (f"{root}/work", "<cwd>"),
        (f"{root}/home", "<home>"),
        (root, "<root>"),
    ):
        text = text.replace(path, placeholder)
    return text


def _step(raw: Any, root: str) -> StepResult | None:
    if raw is None:
        return None
    step: StepResult = {
        "is_error": bool(raw["is_error"]),
        "text": normalize_text(str(raw["text"]), root),
        "code": raw.get("code"),
    }
    if raw.get("error_name") is not None:
        step["error_name"] = str(raw["error_name"])
    return step


def _entry(raw: Any, root: str) -> Entry:
    entry: Entry = {"type": raw["type"]}
    if "mode" in raw:
        entry["mode"] = int(raw["mode"])
    if "size" in raw:
        entry["size"] = int(raw["size"])
    if "b64" in raw:
        entry["b64"] = str(raw["b64"])
    if "sha256" in raw:
        entry["sha256"] = str(raw["sha256"])
    if "target" in raw:
        entry["target"] = normalize_text(str(raw["target"]), root)
    return entry


def normalize_result(raw: Any, sha: str) -> Result:
    """A raw driver/runner record (with its ``root``) as a normalized `Result`."""
    root = str(raw.get("root", ""))
    result: Result = {"id": str(raw["id"]), "case_sha": sha, "steps": [], "files": {}}
    if "crash" in raw:
        result["crash"] = normalize_text(str(raw["crash"]), root) if root else str(raw["crash"])
        return result
    result["steps"] = [_step(step, root) for step in raw["steps"]]
    result["files"] = {name: _entry(entry, root) for name, entry in raw["files"].items()}
    return result
