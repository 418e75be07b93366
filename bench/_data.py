"""Source-like test files of 1 MB, 100 MB and 1 GB, generated once into bench/data/."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = [
    "DATA_DIR",
    "MARKER",
    "SIZES",
    "ensure_ascii",
    "ensure_encoded",
    "ensure_file",
    "small_file",
]

DATA_DIR = Path(__file__).parent / "data"
MARKER = "    return 'the unique line in the middle'  # dsh-fs bench marker\n"
SIZES = {"1MB": 1 << 20, "100MB": 100 << 20, "1GB": 1 << 30}

_BLOCK_LINES = [
    "def handler_{n}(request, *, retries=3):\n",
    '    """Serve request {n}: parse, validate, answer — déjà vu, naïve café."""\n',
    "    for attempt in range(retries):\n",
    "        value = compute(request.payload, attempt)  # ≈ {n} µs\n",
    "        if value is not None:\n",
    "            return value\n",
    "    raise TimeoutError(f'handler {n} gave up after {{retries}} tries')\n",
    "\n",
]


def _block(start: int, count: int) -> str:
    return "".join(line.format(n=n) for n in range(start, start + count) for line in _BLOCK_LINES)


def ensure_file(label: str) -> Path:
    """The `label`-sized file (``"1MB"``, ``"100MB"``, ``"1GB"``), generated on first use.

    The content is mostly ASCII with some multi-byte UTF-8; exactly one line in the middle
    is `MARKER`, so an edit of it is unique.
    """
    target = SIZES[label]
    path = DATA_DIR / f"source-{label}.py"
    if path.exists() and path.stat().st_size >= target:
        return path
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    written = 0
    n = 0
    marker_done = False
    with tmp.open("w", encoding="utf-8", newline="") as out:
        while written < target:
            chunk = _block(n, 512)
            n += 512
            if not marker_done and written + len(chunk) >= target // 2:
                chunk += MARKER
                marker_done = True
            out.write(chunk)
            written += len(chunk.encode("utf-8"))
    os.replace(tmp, path)
    return path


def ensure_encoded(label: str) -> tuple[Path, Path]:
    """The `label`-sized file as cp1252 (``≈``, which cp1252 lacks, as ``~``) and the same
    text as UTF-8: the pair the encodings row reads (SPEC §12), generated on first use."""
    source = ensure_file(label)
    legacy = DATA_DIR / f"legacy-{label}.cp1252"
    twin = DATA_DIR / f"legacy-{label}.utf8"
    if legacy.exists() and twin.exists():
        return legacy, twin
    with (
        source.open(encoding="utf-8", newline="") as text,
        legacy.with_suffix(".tmp1").open("wb") as out1,
        twin.with_suffix(".tmp2").open("wb") as out2,
    ):
        while chunk := text.read(1 << 20):
            chunk = chunk.replace("≈", "~")
            out1.write(chunk.encode("cp1252"))
            out2.write(chunk.encode("utf-8"))
    os.replace(legacy.with_suffix(".tmp1"), legacy)
    os.replace(twin.with_suffix(".tmp2"), twin)
    return legacy, twin


def ensure_ascii(label: str) -> Path:
    """The `label`-sized file with every non-ASCII character as ``?``: all ASCII, the
    text CPython encodes by one copy (the write row runs on both kinds of text)."""
    source = ensure_file(label)
    path = DATA_DIR / f"ascii-{label}.py"
    if path.exists():
        return path
    tmp = path.with_suffix(".tmp")
    with source.open(encoding="utf-8", newline="") as text, tmp.open("wb") as out:
        while chunk := text.read(1 << 20):
            out.write(chunk.encode("ascii", "replace"))
    os.replace(tmp, path)
    return path


def small_file() -> Path:
    """A 10-line file for the many-small-reads workloads."""
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    path = DATA_DIR / "small.py"
    content = "".join(f"line {i}: print('hello {i}')\n" for i in range(1, 11))
    if not path.exists() or path.read_text(encoding="utf-8") != content:
        path.write_text(content, encoding="utf-8")
    return path
