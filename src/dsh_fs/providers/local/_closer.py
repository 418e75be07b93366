"""Closing the descriptors of replaced files in a thread of their own.

A publication renames its file over the old one. When nothing else holds the old file, the
rename is where the kernel frees it: its pages and its blocks, a quarter of a millisecond
for 1 MB here, all of it on the path to the caller's answer (ext4 frees a 100 MB file's
blocks in tens of milliseconds). A mutation keeps the descriptor it read the old file
through open across the rename and hands it to `close_later`: the last close, and with it
the freeing, happens here, after the caller has its answer. Nothing else changes: the old
file is unlinked all the same (an orphan until the close; on a crash, the filesystem's
recovery frees it as it does an unnamed file's).
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading

__all__ = ["MOST_PENDING", "close_later"]

_pending: queue.SimpleQueue[int] = queue.SimpleQueue()
_started = False
_start_lock = threading.Lock()


MOST_PENDING = 64
"""Descriptors waiting for the closer at most: past that, `close_later` closes at once, so
replacements of large files faster than the closer frees them never pile up descriptors
toward the process's limit."""


def close_later(fd: int) -> None:
    """Close `fd` soon, in the closer thread (started on first use); now when
    `MOST_PENDING` are waiting already."""
    global _started
    if _pending.qsize() >= MOST_PENDING:
        with contextlib.suppress(OSError):
            os.close(fd)
        return
    if not _started:
        with _start_lock:
            if not _started:
                threading.Thread(target=_close_forever, name="dsh-fs-closer", daemon=True).start()
                _started = True
    _pending.put(fd)


def _close_forever() -> None:
    while True:
        fd = _pending.get()
        with contextlib.suppress(OSError):  # nothing a caller could do now: it is replaced
            os.close(fd)


def _after_fork_in_child() -> None:
    """A forked child has no closer thread: it closes what was pending itself and starts
    one of its own when it next needs one."""
    global _started, _start_lock
    _started, _start_lock = False, threading.Lock()
    while True:
        try:
            fd = _pending.get_nowait()
        except queue.Empty:
            return
        with contextlib.suppress(OSError):
            os.close(fd)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
