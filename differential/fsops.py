"""Out-of-band changes and the after-case snapshot, done the same way the upstream driver
does them (see README.md): the two sides must start from, and be judged on, equal disks."""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import stat

from .model import Entry, Step

__all__ = ["SNAPSHOT_INLINE_BYTES", "apply", "snapshot"]

SNAPSHOT_INLINE_BYTES = 65536


def _payload(step: Step) -> bytes:
    if "parts" in step:
        return b"".join(base64.b64decode(part["b64"]) * part["repeat"] for part in step["parts"])
    return base64.b64decode(step.get("b64", ""))


def apply(root: str, step: Step) -> None:
    """Apply one out-of-band step (anything but ``call``) under the scratch `root`."""
    path = os.path.join(root, step["path"])
    op = step["op"]
    if op == "put":
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(_payload(step))
        if "mtime" in step:
            _set_mtime(path, step["mtime"])
    elif op == "touch":
        _set_mtime(path, step["mtime"])
    elif op == "delete":
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.unlink(path)
    elif op == "mkdir":
        os.makedirs(path, exist_ok=True)
    elif op == "symlink":
        os.makedirs(os.path.dirname(path), exist_ok=True)
        os.symlink(step["target"], path)
    elif op == "fifo":
        os.mkfifo(path)
    elif op == "chmod":
        os.chmod(path, step["mode"])
    else:
        raise ValueError(f"unknown op {op!r}")


def _set_mtime(path: str, seconds: int) -> None:
    ns = seconds * 1_000_000_000
    os.utime(path, ns=(ns, ns))


def snapshot(root: str) -> dict[str, Entry]:
    """Every entry under `root`, keyed by its ``/``-separated relative path."""
    out: dict[str, Entry] = {}

    def walk(rel: str) -> None:
        folder = os.path.join(root, rel) if rel else root
        for name in sorted(os.listdir(folder)):
            child = f"{rel}/{name}" if rel else name
            full = os.path.join(root, child)
            info = os.lstat(full)
            mode = stat.S_IMODE(info.st_mode)
            if stat.S_ISLNK(info.st_mode):
                out[child] = {"type": "symlink", "target": os.readlink(full)}
            elif stat.S_ISDIR(info.st_mode):
                out[child] = {"type": "dir", "mode": mode}
                walk(child)
            elif stat.S_ISREG(info.st_mode):
                with open(full, "rb") as handle:
                    data = handle.read()
                if len(data) <= SNAPSHOT_INLINE_BYTES:
                    out[child] = {
                        "type": "file",
                        "mode": mode,
                        "b64": base64.b64encode(data).decode("ascii"),
                    }
                else:
                    out[child] = {
                        "type": "file",
                        "mode": mode,
                        "size": len(data),
                        "sha256": hashlib.sha256(data).hexdigest(),
                    }
            else:
                out[child] = {"type": "other"}

    walk("")
    return out
