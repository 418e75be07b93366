"""A monorepo-like tree for the discovery benchmarks, generated once into bench/data/.

About 50,000 files and 700 MB: 40 packages of nested Python and TypeScript sources, an
ignored ``node_modules/`` and ``build/``, docs, binary assets (with NUL bytes), a few large
data files, and a ``.git`` directory. `RARE` occurs in exactly two searchable files (and in
an ignored one); `REGEX` matches a few hundred lines.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

__all__ = ["FLAT", "MONOREPO", "RARE", "REGEX", "ensure_flat", "ensure_monorepo"]

DATA = Path(__file__).parent / "data"
MONOREPO = DATA / "monorepo"
FLAT = DATA / "flat-100k"
RARE = "XYZZY_RARE_TOKEN"
REGEX = r"TODO\([a-z]+\): fix \w+ before \d+"
_VERSION = "v1"

_PY = (
    "def handler_{n}(request, *, retries=3):\n"
    '    """Serve request {n}: parse, validate, answer."""\n'
    "    for attempt in range(retries):\n"
    "        value = compute(request.payload, attempt)  # step {n}\n"
    "        if value is not None:\n"
    "            return value\n"
    "    raise TimeoutError(f'handler {n} gave up')\n\n"
)
_TS = (
    "export function render{n}(props: Props): string {{\n"
    "  const items = props.items.map((item) => `${{item.id}}:{n}`);\n"
    "  return items.join(',');\n"
    "}}\n\n"
)


def _source(template: str, seed: int, blocks: int) -> bytes:
    text = "".join(template.format(n=seed * 100 + i) for i in range(blocks))
    if seed % 97 == 0:
        text += f"# TODO(owner): fix handler before {seed}\n"
    return text.encode()


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def ensure_monorepo() -> Path:
    """The tree (generated on first use; about a minute)."""
    stamp = MONOREPO / ".bench-complete"
    if stamp.exists() and stamp.read_text(encoding="utf-8") == _VERSION:
        return MONOREPO
    if MONOREPO.exists():
        shutil.rmtree(MONOREPO)
    seed = 0
    for p in range(40):
        package = MONOREPO / "packages" / f"pkg{p:02}"
        _write(package / "README.md", f"# pkg{p:02}\n".encode())
        _write(package / "package.json", b'{"name": "pkg", "version": "1.0.0"}\n')
        for m in range(20):
            for f in range(40):
                seed += 1
                if f % 2:
                    data = _source(_PY, seed, 34)
                    name = f"src/mod{m:02}/file{f:02}.py"
                else:
                    data = _source(_TS, seed, 56)
                    name = f"src/mod{m:02}/file{f:02}.ts"
                _write(package / name, data)
        for t in range(10):
            for f in range(10):
                seed += 1
                _write(package / f"tests/t{t}/test_{f}.py", _source(_PY, seed, 6))
    _write(MONOREPO / "packages/pkg07/src/mod03/special.py", f"KEY = '{RARE}'\n".encode())
    for d in range(200):
        for f in range(40):
            seed += 1
            _write(MONOREPO / f"node_modules/dep{d:03}/lib/f{f:02}.js", _source(_TS, seed, 25))
    _write(MONOREPO / "node_modules/dep000/rare.js", f"// {RARE}\n".encode())
    for f in range(2000):
        seed += 1
        _write(MONOREPO / f"build/out{f // 100:02}/o{f:04}.js", _source(_TS, seed, 25))
    for f in range(1000):
        _write(MONOREPO / f"docs/section{f // 50:02}/page{f:04}.md", b"# Page\n\nText.\n" * 50)
    for f in range(500):
        blob = (bytes(range(256)) * 200)[:50_000]
        _write(MONOREPO / f"assets/img{f // 100}/a{f:03}.png", b"\x89PNG\x00" + blob)
    line = b"2024-01-01T00:00:00Z INFO request served in 12 ms path=/api/items/42\n"
    for f in range(6):
        count = (60 << 20) // len(line)
        body = line * (count // 2) + (f"{RARE}\n".encode() if f == 3 else b"") + line * (count // 2)
        _write(MONOREPO / f"data/events{f}.txt", body)
    for f in range(3000):
        _write(MONOREPO / f".git/objects/{f % 256:02x}/{f:038x}", os.urandom(5000))
    _write(MONOREPO / ".git/HEAD", b"ref: refs/heads/main\n")
    _write(MONOREPO / ".gitignore", b"node_modules/\nbuild/\n*.log\n")
    stamp.write_text(_VERSION, encoding="utf-8")
    return MONOREPO


def ensure_flat() -> Path:
    """A directory of 100,000 empty files."""
    stamp = DATA / ".flat-100k-complete"
    if stamp.exists():
        return FLAT
    if FLAT.exists():
        shutil.rmtree(FLAT)
    FLAT.mkdir(parents=True)
    for i in range(100_000):
        (FLAT / f"entry{i:06}.txt").touch()
    stamp.touch()
    return FLAT
