"""What the fsspec provider remembers of content it read or wrote, for size + mtime versions."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

from dsh_fs.fs import FsTarget, FsVersion

from ._store import is_content_version

__all__ = ["ContentDigests"]

_DIGESTS_KEPT = 4096


class ContentDigests:
    """Content digests of what this instance read or wrote, per (target, version).

    Only consulted for size + mtime versions, where a same-size rewrite within one mtime
    tick keeps the token: the content then tells. Bounded; touched from worker threads.
    """

    def __init__(self) -> None:
        self._seen: OrderedDict[tuple[str, FsVersion], bytes] = OrderedDict()
        self._lock = threading.Lock()

    def record(self, target: FsTarget, version: FsVersion, data: bytes) -> None:
        if is_content_version(version):
            return
        key = (str(target.target_key), version)
        digest = hashlib.sha256(data).digest()
        with self._lock:
            self._seen[key] = digest
            self._seen.move_to_end(key)
            while len(self._seen) > _DIGESTS_KEPT:
                self._seen.popitem(last=False)

    def matches(self, target: FsTarget, version: FsVersion, data: bytes) -> bool:
        with self._lock:
            seen = self._seen.get((str(target.target_key), version))
        return seen is None or seen == hashlib.sha256(data).digest()
