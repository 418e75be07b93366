"""The dsh-fs side: each case through `dsh_fs.Workspace` in a fresh scratch root.

``$HOME`` points at the case's scratch ``home/`` while the case runs, so a ``~/x`` path can
never reach the real home directory; `HomeGuard` checks that the real home is untouched.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from typing import Any

from dsh_fs import Session, Workspace
from dsh_fs.runtime import parse_json

from . import fsops
from .model import Case, Result, StepResult, case_sha
from .normalize import normalize_result

__all__ = ["HomeGuard", "run_case"]


class HomeGuard:
    """Remembers the real home directory's listing; `check` fails if a case changed it."""

    def __init__(self) -> None:
        self.home = os.path.expanduser("~")
        self._before = self._state()

    def _state(self) -> set[str]:
        try:
            return set(os.listdir(self.home))
        except OSError:
            return set()

    def check(self) -> None:
        """Raise if a case created something in the real home directory."""
        added = sorted(self._state() - self._before)
        if added:
            raise RuntimeError(f"a case created {added} in the real home directory {self.home}")


def _refuse_escape(root: str, name: str, args_json: str) -> None:
    """A harness safety net: a write or edit whose path would leave the scratch root
    (through ``~user`` or an absolute path) is a generator bug, never run."""
    if name not in {"write", "edit"}:
        return
    try:
        path = json.loads(args_json).get("file_path")
    except AttributeError:
        return
    if not isinstance(path, str) or "\x00" in path:
        return
    expanded = os.path.expanduser(path)
    if os.path.isabs(expanded):
        resolved = os.path.realpath(os.path.normpath(expanded))
        if os.path.commonpath([resolved, root]) != root:
            raise RuntimeError(f"unsafe case: {name} of {path!r} would leave the scratch root")


def _scratch(scratch_base: str | None) -> tuple[str, str]:
    """A fresh scratch root with its ``work/`` and ``home/`` folders; ``$HOME`` → home."""
    root = os.path.realpath(tempfile.mkdtemp(prefix="dshdiff-", dir=scratch_base))
    work = os.path.join(root, "work")
    home = os.path.join(root, "home")
    os.mkdir(work)
    os.mkdir(home)
    os.environ["HOME"] = home
    if os.path.expanduser("~") != home:
        raise RuntimeError("HOME override did not take effect")
    return root, work


async def run_case(case: Case, scratch_base: str | None = None) -> Result:
    """Run `case` through dsh-fs and return its normalized result (runs the blocking
    scratch setup inline: the harness runs one case at a time)."""
    saved_home = os.environ.get("HOME")
    root, work = _scratch(scratch_base)
    try:
        raw: dict[str, Any] = {"id": case["id"], "root": root}
        for step in case["files"]:
            fsops.apply(root, step)
        steps: list[StepResult | None] = []
        workspace = Workspace.local(cwd=work, policy=case["policy"])
        sessions: dict[str, Session] = {}
        try:
            for step in case["steps"]:
                if step["op"] != "call":
                    fsops.apply(root, step)
                    steps.append(None)
                    continue
                _refuse_escape(root, step["name"], step["args"])
                key = step.get("session", "a")
                if key not in sessions:
                    sessions[key] = workspace.session()
                steps.append(await _call(sessions[key], step["name"], step["args"]))
        finally:
            await workspace.aclose()
        raw["steps"] = steps
        raw["files"] = fsops.snapshot(root)
        return normalize_result(raw, case_sha(case))
    finally:
        if saved_home is None:
            os.environ.pop("HOME", None)
        else:
            os.environ["HOME"] = saved_home
        _remove(root)


async def _call(session: Session, name: str, args_json: str) -> StepResult:
    # as the OpenAI adapter and the MCP pipe transport parse them (`-0` stays negative)
    arguments = parse_json(args_json)
    try:
        result = await session.call(name, arguments)
    except Exception as exc:  # a tool failure must be a result; record the escape
        return {
            "is_error": True,
            "text": f"THROWN: {type(exc).__name__}: {exc}",
            "code": "THROWN",
            "error_name": type(exc).__name__,
        }
    step: StepResult = {"is_error": result.is_error, "text": result.text, "code": result.code}
    if result.error_name is not None:
        step["error_name"] = result.error_name
    return step


def _remove(root: str) -> None:
    for folder, dirs, _files in os.walk(root):
        for name in dirs:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                os.chmod(path, 0o700)
    shutil.rmtree(root, ignore_errors=True)
