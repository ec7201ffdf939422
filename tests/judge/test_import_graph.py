"""The engine's import graph: `judge/` never imports the service (`api`, `workers`), and its
modules import each other without a cycle, counting the imports made inside functions too (a
function-level import is how a cycle hides). docs/architecture.md draws the layers."""

from __future__ import annotations

import graphlib
from pathlib import Path

import pytest

from tests.imports import imports, module_name

ROOT = Path(__file__).resolve().parents[2]
JUDGE = ROOT / "judge"


Graph = dict[str, set[str]]


def _graph() -> tuple[Graph, Graph]:
    """(module -> the judge modules it imports, module -> every name it imports)."""
    files = {module_name(p): p for p in JUDGE.rglob("*.py")}
    raw = {name: imports(path, name) for name, path in files.items()}
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
    assert "judge.pipeline" in imports(source, "judge.m")


if __name__ == "__main__":  # pragma: no cover
    pytest.main([__file__])
