"""Keep this folder's CPU-runnable tests running on hosts without a GPU.

tests/conftest.py skips a test when `"cuda" in item.keywords`; keywords also hold the names of
the test's folders, so every test under tests/judge/cuda/ would be skipped as "needs an NVIDIA
GPU". Until that check reads real markers (`item.get_closest_marker("cuda")`), this hook, run
after it, takes that skip off the tests here that do not carry the `cuda` marker. Once the root
check is fixed it finds nothing to undo.
"""

from __future__ import annotations

from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _HERE not in Path(item.path).resolve().parents or item.get_closest_marker("cuda") is not None:
            continue
        item.own_markers[:] = [
            m for m in item.own_markers if not (m.name == "skip" and "NVIDIA GPU" in str(m.kwargs.get("reason", "")))
        ]
