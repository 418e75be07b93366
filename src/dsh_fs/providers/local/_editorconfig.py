"""`.editorconfig` ``charset`` for the local provider (SPEC §12): the codec the
EditorConfig files between a root and a file declare for it.

Files are looked for in each directory from the root down to the file's (a ``root = true``
file forgets the ones above it); sections are matched as EditorConfig matches them, the
last one that sets ``charset`` wins. Each file is parsed once per (size, mtime).
"""

from __future__ import annotations

import os
import re
import stat as st_mode
import threading

__all__ = ["EDITORCONFIG_CHARSETS", "EditorConfigs"]

EDITORCONFIG_CHARSETS = {
    "latin1": "iso8859-1",
    "utf-8": "utf-8",
    "utf-8-bom": "utf-8-sig",
    "utf-16le": "utf-16-le",
    "utf-16be": "utf-16-be",
}
"""EditorConfig's ``charset`` values and Python's codec for each."""

_MAX_BYTES = 64 * 1024
"""A larger ``.editorconfig`` is not read (none is that large)."""

_CACHED = 1024

_Section = tuple["re.Pattern[str]", str | None]


class EditorConfigs:
    """The parsed ``.editorconfig`` files of one provider, by path and (size, mtime)."""

    def __init__(self) -> None:
        self._files: dict[str, tuple[tuple[int, int], bool, list[_Section]]] = {}
        self._lock = threading.Lock()

    def charset(self, path: str, root: str) -> str | None:
        """The codec the EditorConfig files from `root` down declare for the file `path`
        (below `root`), or None."""
        relative = path[len(root) :].strip("/")
        if not relative:
            return None
        parts = relative.split("/")
        found: str | None = None
        for depth in range(len(parts)):
            directory = os.path.join(root, *parts[:depth])
            parsed = self._parsed(os.path.join(directory, ".editorconfig"))
            if parsed is None:
                continue
            is_root, sections = parsed
            if is_root:
                found = None
            below = "/".join(parts[depth:])
            for pattern, charset in sections:
                if pattern.fullmatch(below):
                    found = charset
        return found

    def _parsed(self, path: str) -> tuple[bool, list[_Section]] | None:
        try:
            info = os.stat(path, follow_symlinks=False)
        except OSError:
            return None
        if not st_mode.S_ISREG(info.st_mode) or info.st_size > _MAX_BYTES:
            return None
        stamp = (info.st_size, info.st_mtime_ns)
        with self._lock:
            cached = self._files.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1], cached[2]
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            data = os.read(fd, _MAX_BYTES + 1)
        except OSError:
            return None
        finally:
            os.close(fd)
        is_root, sections = parse(data.decode("utf-8", "replace"))
        with self._lock:
            if len(self._files) >= _CACHED:
                self._files.clear()
            self._files[path] = (stamp, is_root, sections)
        return is_root, sections


def parse(text: str) -> tuple[bool, list[_Section]]:
    """``root = true`` before any section, and each section's pattern with the ``charset``
    it sets (None: ``unset`` or another value; a section without it is left out)."""
    is_root = False
    sections: list[_Section] = []
    pattern: re.Pattern[str] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            pattern = _glob(line[1:-1])
            continue
        key, sep, value = line.partition("=")
        if not sep:
            continue
        key, value = key.strip().lower(), value.strip().lower()
        if pattern is None:
            if key == "root":
                is_root = value == "true"
        elif key == "charset":
            sections.append((pattern, EDITORCONFIG_CHARSETS.get(value)))
    return is_root, sections


def _glob(glob: str) -> re.Pattern[str]:
    """An EditorConfig section glob as a regex over paths relative to its file's directory:
    without a ``/`` it matches a name at any depth; ``*`` stays within a component, ``**``
    crosses them; ``?``, ``[…]``, ``[!…]``, ``{a,b}`` and ``{n1..n2}`` as EditorConfig
    reads them."""
    anchored = "/" in glob
    glob = glob.lstrip("/")
    out: list[str] = []
    i, depth = 0, 0
    while i < len(glob):
        char = glob[i]
        if char == "\\" and i + 1 < len(glob):
            out.append(re.escape(glob[i + 1]))
            i += 2
            continue
        if char == "*":
            if glob.startswith("**", i):
                out.append(".*")
                i += 2
                continue
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = glob.find("]", i + 1)
            if end == -1:
                out.append(re.escape(char))
            else:
                body = glob[i + 1 : end]
                negated = body.startswith("!")
                body = body[1:] if negated else body
                out.append(("[^" if negated else "[") + body.replace("\\", "\\\\") + "]")
                i = end + 1
                continue
        elif char == "{":
            end = glob.find("}", i + 1)
            body = glob[i + 1 : end] if end != -1 else ""
            numbers = re.fullmatch(r"([+-]?\d+)\.\.([+-]?\d+)", body)
            if numbers:
                low, high = sorted((int(numbers[1]), int(numbers[2])))
                if high - low > 1000:  # any integer: wider than the range, never a huge regex
                    out.append(r"[+-]?\d+")
                else:
                    out.append("(?:" + "|".join(str(n) for n in range(low, high + 1)) + ")")
                i = end + 1
                continue
            if end != -1 and "," in body:
                out.append("(?:")
                depth += 1
            else:
                out.append(re.escape(char))
        elif char == "," and depth:
            out.append("|")
        elif char == "}" and depth:
            out.append(")")
            depth -= 1
        else:
            out.append(re.escape(char))
        i += 1
    body = "".join(out) + ")" * depth
    return re.compile(body if anchored else f"(?:.*/)?{body}")
