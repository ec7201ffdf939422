"""The folders say what is deployed: the web service is `api/web/`, and nothing the workers run
imports it. The workers' processes load the service core (`api/store/`, `api/dispatch.py`,
`api/settings.py`) and the engine (`judge/`), never the FastAPI app, its pages or its middleware.

Read from the sources with `ast`, counting imports made inside functions too, so a lazy import
cannot hide one; docs/architecture.md, "Layout", says what lives where and why."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.imports import imports, module_name

ROOT = Path(__file__).resolve().parents[1]
WEB = "api.web"


def _is_web(module: str) -> bool:
    return module == WEB or module.startswith(WEB + ".")


# The code the workers' processes load, besides the engine: workers/ and the service core.
WORKER_SIDE = sorted(
    [
        *(ROOT / "workers").rglob("*.py"),
        *(ROOT / "api" / "store").rglob("*.py"),
        ROOT / "api" / "dispatch.py",
        ROOT / "api" / "settings.py",
    ]
)


def _repo_modules() -> dict[str, Path]:
    """The modules of the service's packages, by dotted name (judge/ never imports api: its own
    test, tests/judge/test_import_graph.py)."""
    return {module_name(p): p for top in ("api", "workers") for p in (ROOT / top).rglob("*.py")}


def test_the_layout_is_what_this_test_reads() -> None:
    """The files exist and the reader sees their imports: the checks below cannot pass on nothing."""
    for path in WORKER_SIDE:
        assert path.is_file(), path
    assert (ROOT / "api" / "web" / "app.py").is_file()
    assert "api.store.runs" in imports(ROOT / "workers" / "tasks.py")
    assert "api.settings" in imports(ROOT / "api" / "dispatch.py")


@pytest.mark.parametrize("path", WORKER_SIDE, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_worker_side_never_imports_the_web(path: Path) -> None:
    bad = sorted(target for target in imports(path) if _is_web(target))
    assert not bad, f"{path.relative_to(ROOT)} imports {', '.join(bad)}: the workers never load api/web/"


def test_nothing_the_workers_reach_imports_the_web() -> None:
    """Followed through every module of api/ and workers/ a worker-side module imports (say the
    CLI, which starts the web server): none of them leads to api.web either."""
    modules = _repo_modules()
    seen: dict[str, str] = {}  # module -> the module that imported it
    todo = [module_name(p) for p in WORKER_SIDE]
    for name in todo:
        seen.setdefault(name, "")
    while todo:
        name = todo.pop()
        for target in imports(modules[name]):
            if target in modules and target not in seen:
                seen[target] = name
                if not _is_web(target):  # the first web module on a path is the one to name
                    todo.append(target)
    reached = sorted(name for name in seen if _is_web(name))

    def chain(name: str) -> str:
        path = [name]
        while seen.get(path[-1]):
            path.append(seen[path[-1]])
        return " <- ".join(path)

    assert not reached, "the workers reach api/web/: " + "; ".join(chain(name) for name in reached)
