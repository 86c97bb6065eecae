"""trajudge's import graph between files, read from the source (AST), not from a run.

Every ``import`` counts, at module level or inside a function, but those under
``if TYPE_CHECKING:`` (never executed). ``from P import N`` goes to the module that defines
``N``: a package's lazy export table (``_EXPORTS``) names it, or ``P.N`` is a module itself.
"""

from __future__ import annotations

import ast
import importlib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import trajudge

SRC = Path(trajudge.__file__).parent


@dataclass
class Graph:
    files: dict[str, Path]
    edges: dict[str, set[str]] = field(default_factory=dict)
    #: (module, line) of each import placed inside a function
    inner: list[tuple[str, int, str]] = field(default_factory=list)


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    name = ".".join(parts)
    return name.removesuffix(".__init__")


@cache
def _lazy_table(package: str) -> dict[str, str]:
    module = importlib.import_module(package)
    table = getattr(module, "_EXPORTS", None)
    return dict(table) if isinstance(table, dict) else {}


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for n in ast.walk(node))
    return skip


def _inside_function(tree: ast.AST) -> set[int]:
    inner: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            inner.update(id(n) for n in ast.walk(node) if n is not node)
    return inner


def build() -> Graph:
    files = {_module_name(p): p for p in sorted(SRC.rglob("*.py"))}
    graph = Graph(files, {m: set() for m in files})

    def resolve(name: str) -> str | None:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        skip = _type_checking_nodes(tree)
        inner = _inside_function(tree)
        for node in ast.walk(tree):
            if id(node) in skip or not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, *([base] if base else [])])
                if not base.startswith("trajudge"):
                    continue
                targets.append(base)
                lazy = _lazy_table(base) if base in files else {}
                for alias in node.names:
                    if alias.name in lazy:
                        targets.append(lazy[alias.name])
                    elif f"{base}.{alias.name}" in files:
                        targets.append(f"{base}.{alias.name}")
            ours = [t for t in targets if t.startswith("trajudge")]
            if ours and id(node) in inner:
                graph.inner.append((module, node.lineno, ast.unparse(node)))
            for target in ours:
                found = resolve(target)
                if found is not None and found != module:
                    graph.edges[module].add(found)
    return graph


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one file (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def closure(edges: dict[str, set[str]], start: str, stop: set[str]) -> set[str]:
    """Every module reachable from ``start``, not walking on from a module in ``stop``."""
    seen = {start}
    todo = [start]
    while todo:
        for w in edges.get(todo.pop(), ()):
            if w not in seen:
                seen.add(w)
                if w not in stop:
                    todo.append(w)
    return seen
