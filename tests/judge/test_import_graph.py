"""The engine's import graph: `judge/` never imports the service (`api`, `workers`), and its
modules import each other without a cycle, counting the imports made inside functions too (a
function-level import is how a cycle hides). docs/architecture.md draws the layers."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
JUDGE = ROOT / "judge"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, name: str) -> set[str]:
    """Every module the file imports, at any depth of its code, relative imports resolved."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


Graph = dict[str, set[str]]


def _graph() -> tuple[Graph, Graph]:
    """(module -> the judge modules it imports, module -> every name it imports)."""
    files = {_module_name(p): p for p in JUDGE.rglob("*.py")}
    raw = {name: _imports(path, name) for name, path in files.items()}
    # `from judge.x import y` names judge.x (and judge.x.y when y is a module)
    graph = {name: {t for t in raw[name] if t in files and t != name} for name in files}
    return graph, raw


def test_judge_never_imports_the_service() -> None:
    _, raw = _graph()
    bad = sorted(
        f"{module} imports {target}"
        for module, targets in raw.items()
        for target in targets
        if target.split(".")[0] in {"api", "workers"}
    )
    assert not bad, "judge/ is a library without the web or the database: " + "; ".join(bad)


def _package_edges(graph: Graph) -> Graph:
    """A package's `__init__` importing its own submodules is how a package is assembled, and a
    submodule importing a sibling through the package is not a cycle of logic: drop the
    edges between a package and its own submodules."""
    return {
        a: {b for b in targets if not (b.startswith(a + ".") or a.startswith(b + "."))}
        for a, targets in graph.items()
    }


def _cycle(graph: Graph) -> list[str]:
    """One import cycle of the graph, or [] when it has none."""
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as error:
        return list(error.args[1])
    return []


def test_no_import_cycle_between_judge_modules() -> None:
    graph, _ = _graph()
    cycle = _cycle(_package_edges(graph))
    assert not cycle, "an import cycle in judge/: " + " -> ".join(cycle)


def test_the_cycle_test_can_fail(tmp_path: Path) -> None:
    """The graph is built from real files: two modules importing each other form a component."""
    assert _cycle(_package_edges({"judge.a": {"judge.b"}, "judge.b": {"judge.a"}}))
    assert not _cycle(_package_edges({"judge.a": {"judge.a.b"}, "judge.a.b": {"judge.a"}}))
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from judge.pipeline import run_pipeline\n")
    assert "judge.pipeline" in _imports(source, "judge.m")


if __name__ == "__main__":  # pragma: no cover
    pytest.main([__file__])
