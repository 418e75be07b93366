"""The placeholder guard (SPEC §8.3) measured: false refusals on real text, catches on
placeholder writes built from it.

Run ``python -m edit_recovery.placeholders [--files N] [--root DIR]``. Real files are the
installed packages' sources (the running interpreter's site-packages, or `--root`), taken
in sorted path order, at most 1 MB each, UTF-8 only. It prints, on those files:

- ``written back whole``: each file written over itself (0 refusals expected: a line the
  file already has is never a placeholder);
- ``written over other text``: each file written over five lines it does not have, so that
  every line of the file is judged and the change removes 5 lines (the guard's worst case
  on real code: any line it takes for a placeholder is a false refusal);
- ``corpus edits``: every edit of ``edit_recovery`` (its cases) and ``edit_recovery/real``
  (old_string → new_string), judged as the edit tool judges it;
- ``placeholder writes``: for each file of at least 30 lines, a seeded random run of 5 to
  40 of its lines replaced by one placeholder line in the file's comment style (a template
  list drawn from what models write: ``// ... existing code ...``, ``# ... rest
  unchanged``, ``/* ... */``, ``...`` alone, ``...[truncated]`` and more), indented like
  the first line it replaces; the share refused is the catch rate.

The guard's rules were tuned on the first 3,000 files of the sorted paths of this
environment's site-packages (mostly Python); the default sample (spread over all the
paths) is what the figures report, and it overlaps that tuning set only in part.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import sysconfig
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from dsh_fs.tools._placeholders import find_placeholder

from .corpus import CASES
from .real import CASES_DIR

__all__ = ["TEMPLATES", "main", "placeholder_write", "real_files"]

_SUFFIXES = (
    ".py", ".pyi", ".js", ".mjs", ".ts", ".c", ".h", ".cpp", ".rs", ".go", ".java",
    ".md", ".rst", ".txt", ".toml", ".json", ".yaml", ".yml", ".cfg", ".ini", ".html",
    ".css", ".sh", ".pyx", ".pxd",
)  # fmt: skip

_HASH = ("#",)
_SLASH = ("//",)
_COMMENT_STYLE = {
    ".py": _HASH, ".pyi": _HASH, ".pyx": _HASH, ".pxd": _HASH, ".sh": _HASH, ".toml": _HASH,
    ".yaml": _HASH, ".yml": _HASH, ".cfg": _HASH, ".ini": _HASH, ".txt": _HASH, ".rst": _HASH,
    ".js": _SLASH, ".mjs": _SLASH, ".ts": _SLASH, ".c": _SLASH, ".h": _SLASH, ".cpp": _SLASH,
    ".rs": _SLASH, ".go": _SLASH, ".java": _SLASH, ".css": ("/*",), ".html": ("<!--",),
    ".md": ("<!--",), ".json": ("//",),
}  # fmt: skip

TEMPLATES: tuple[str, ...] = (
    "{c} ... existing code ...",
    "{c} ... rest of the code unchanged ...",
    "{c} ... rest unchanged",
    "{c} ...",
    "{c} ... (other methods)",
    "{c} Rest of the file remains unchanged",
    "{c} existing code here",
    "{c} ... existing imports ...",
    "{c} ... same as before ...",
    "{c} … rest of implementation …",
    "/* ... */",
    "...",
    "…",
    "...[truncated]",
    "[truncated]",
    "[... 120 lines truncated ...]",
    "<truncated 42 lines>",
    "(rest of file unchanged)",
    "[... rest of the file ...]",
    "{c} ... remaining tests unchanged ...",
)
"""Placeholder lines as models write them; ``{c}`` is the file's comment mark."""

_CLOSE = {"/*": " */", "<!--": " -->"}


def real_files(root: Path, limit: int) -> list[tuple[Path, str]]:
    """`limit` text files under `root` spread evenly over its sorted paths (so every
    package and language has its share; ≤ 1 MB, UTF-8, not empty)."""
    paths = sorted(_walk(root))
    step = max(1.0, len(paths) / limit)
    out: list[tuple[Path, str]] = []
    index = 0.0
    while int(index) < len(paths) and len(out) < limit:
        path = paths[int(index)]
        index += step
        try:
            if path.stat().st_size > 1 << 20:
                continue
            text = path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if not text.strip() or "\0" in text:
            continue
        out.append((path, text.replace("\r\n", "\n")))
    return out


def _walk(root: Path) -> Iterator[Path]:
    for path in root.rglob("*"):
        if path.suffix in _SUFFIXES and path.is_file() and not path.is_symlink():
            yield path


def placeholder_write(path: Path, text: str, rng: random.Random) -> tuple[str, str] | None:
    """`text` with a run of 5 to 40 of its lines replaced by one placeholder line, and the
    template used; None for a file of fewer than 30 lines."""
    lines = text.split("\n")
    if len(lines) < 30:
        return None
    size = rng.randint(5, min(40, len(lines) - 10))
    start = rng.randint(1, len(lines) - size - 1)
    template = rng.choice(TEMPLATES)
    mark = _COMMENT_STYLE.get(path.suffix, _HASH)[0]
    line = template.format(c=mark)
    if "{c}" in template and mark in _CLOSE:
        line += _CLOSE[mark]
    first = lines[start]
    indent = first[: len(first) - len(first.lstrip())]
    return "\n".join([*lines[:start], indent + line, *lines[start + size :]]), template


def _corpus_edits() -> list[tuple[str, str, str]]:
    edits = [(case.name, case.old, case.new) for case in CASES]
    for path in sorted(CASES_DIR.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        edits.append((data["id"], data["old_string"], data["new_string"]))
    return edits


def main(argv: list[str]) -> int:
    """Print the figures; exit 1 when a real file or edit is refused (the gate)."""
    parser = argparse.ArgumentParser(prog="python -m edit_recovery.placeholders")
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--root", type=Path, default=Path(sysconfig.get_paths()["purelib"]))
    parser.add_argument("-v", action="store_true", help="list every refusal and miss")
    args = parser.parse_args(argv)
    files = real_files(args.root, args.files)
    whole = [p for p, text in files if find_placeholder(text, text, path=str(p))]
    filler = "\n".join(f"a line of the old file, number {k}" for k in range(5))
    stress = [
        (p, found)
        for p, text in files
        if (found := find_placeholder(filler, text, path=str(p))) is not None
    ]
    edits = _corpus_edits()
    refused_edits = [name for name, old, new in edits if find_placeholder(old, new)]
    rng = random.Random(41)
    built = 0
    caught = 0
    missed: Counter[str] = Counter()
    for path, text in files:
        made = placeholder_write(path, text, rng)
        if made is None:
            continue
        built += 1
        if find_placeholder(text, made[0], path=str(path)) is not None:
            caught += 1
        else:
            missed[made[1]] += 1
    kinds = Counter(path.suffix for path, _ in files)
    print(f"real files: {len(files)} under {args.root}")
    print("  by kind: " + ", ".join(f"{kind} {n}" for kind, n in kinds.most_common()))
    print(f"written back whole: {len(whole)}/{len(files)} refused")
    print(f"written over other text: {len(stress)}/{len(files)} refused")
    print(f"corpus edits: {len(refused_edits)}/{len(edits)} refused")
    rate = caught / built if built else 0.0
    print(f"placeholder writes: {caught}/{built} refused ({rate:.1%})")
    if args.v:
        for path, found in stress:
            print(f"  refused {path}: line {found.line} {found.text!r}")
        for name in refused_edits:
            print(f"  refused edit {name}")
        for template, count in missed.most_common():
            print(f"  missed {count}x {template!r}")
    return 1 if whole or refused_edits else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
