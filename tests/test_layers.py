"""The house rules import-linter cannot state, checked on the source with `ast`.

- A private module ``a.b._m`` is imported only from inside package ``a.b`` (or its
  subpackages): what another package needs is exported from that package's ``__init__``
  (or is a public module, like ``dsh_fs.fs.messages``).
- No import circles between modules: every import counts, at module level, inside a
  function, and under ``if TYPE_CHECKING:`` too (a circle of types is a circle of ideas: the
  shared names belong in one place).
- The built-in plugins use only the public tool-writing API: discovery imports nothing
  private of `dsh_fs.tools`, and the dialects' internal tools import from their sibling
  modules only names `dsh_fs.tools` exports.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

import dsh_fs.tools

SRC = Path(__file__).resolve().parent.parent / "src"


@dataclass(frozen=True)
class _Import:
    importer: str
    target: str
    names: tuple[str, ...]
    where: str
    runs: bool


def _modules() -> dict[str, tuple[Path, bool]]:
    modules: dict[str, tuple[Path, bool]] = {}
    for path in sorted(SRC.rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        modules[".".join(parts)] = (path, is_package)
    return modules


def _type_checking_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


@functools.cache
def _imports() -> tuple[_Import, ...]:
    """Every import of a `dsh_fs` module in the source (parsed once per process: each test
    here reads the same list)."""
    modules = _modules()
    found: list[_Import] = []
    for name, (path, is_package) in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        typing_only = _type_checking_lines(tree)
        relative = path.relative_to(SRC.parent)
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            where = f"{relative}:{node.lineno}"
            runs = node.lineno not in typing_only
            if isinstance(node, ast.Import):
                for alias in node.names:
                    found.append(_Import(name, alias.name, (), where, runs))
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = name.split(".") if is_package else name.split(".")[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                plain = tuple(a.name for a in node.names if f"{module}.{a.name}" not in modules)
                if plain:
                    found.append(_Import(name, module, plain, where, runs))
                for alias in node.names:
                    if f"{module}.{alias.name}" in modules:
                        found.append(_Import(name, f"{module}.{alias.name}", (), where, runs))
    return tuple(i for i in found if i.target.split(".")[0] == "dsh_fs")


def _private_owner(module: str) -> str | None:
    """The package a private module belongs to (``a.b`` for ``a.b._m.x``), if any."""
    parts = module.split(".")
    for index, part in enumerate(parts):
        if part.startswith("_") and part != "__init__":
            return ".".join(parts[:index])
    return None


def test_no_private_module_is_imported_from_another_package() -> None:
    offending = []
    for each in _imports():
        owner = _private_owner(each.target)
        if owner is None or owner == "dsh_fs":  # dsh_fs._version is the package's own
            continue
        if each.importer != owner and not each.importer.startswith(owner + "."):
            offending.append(f"{each.where}: {each.importer} imports {each.target}")
    assert offending == [], "\n".join(offending)


def test_no_module_takes_part_in_an_import_circle() -> None:
    graph: dict[str, set[str]] = {}
    for each in _imports():
        if each.target != each.importer:
            graph.setdefault(each.importer, set()).add(each.target)
    circles: list[list[str]] = []
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()

    def connect(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    assert circles == [], "\n".join(" <-> ".join(circle) for circle in circles)


def test_the_dialects_and_discovery_use_only_the_public_tool_api() -> None:
    public = set(dsh_fs.tools.__all__)
    offending = []
    for each in _imports():
        from_tools = each.target == "dsh_fs.tools" or each.target.startswith("dsh_fs.tools.")
        if not from_tools:
            continue
        if each.importer.startswith("dsh_fs.discovery"):
            if each.target != "dsh_fs.tools":
                offending.append(f"{each.where}: {each.target}")
            offending += [f"{each.where}: {n}" for n in each.names if n not in public]
        if each.importer == "dsh_fs.tools._dialects":
            offending += [f"{each.where}: {n}" for n in each.names if n not in public]
    assert offending == [], "\n".join(offending)
