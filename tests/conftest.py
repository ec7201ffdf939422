"""Shared fixtures and the rules for tests that need hardware or services.

A test that cannot run here is skipped with the reason, never passed silently.
.ci/run starts PostgreSQL and Redis and sets OPJUDGE_TEST_POSTGRES_URL and
OPJUDGE_TEST_REDIS_URL, so under CI those tests always run.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
# In-process workers of the tests time phases so short that any host looks "disturbed" (a score known
# only roughly from a few pairs): they never re-time (judge/retime.py); tests/judge/test_retime.py
# covers re-timing itself.
os.environ.setdefault("OPJUDGE_DISTURBED_TIMING_ATTEMPTS", "1")
os.environ.setdefault("OPJUDGE_MARK_DISTURBED_RUNS", "0")  # and such runs are not marked: tests/api cover marking


# Modules whose module-scoped fixtures start services or build many libraries: under pytest-xdist
# each runs whole on one worker, so the start-up is paid once (the rest of the suite is spread
# test by test).
ONE_WORKER_MODULES = ("tests/e2e/", "tests/judge/cuda/test_kernels_on_cpu.py")


def one_worker_scope(nodeid: str) -> str:
    """The unit pytest-xdist hands to one worker: the module for ONE_WORKER_MODULES, else the test."""
    module = nodeid.split("::", 1)[0]
    return module if module.startswith(ONE_WORKER_MODULES) else nodeid


if importlib.util.find_spec("xdist") is not None:  # a hook only pytest-xdist knows

    def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
        """`--dist loadgroup` with the groups above. Not xdist_group marks: pytest-xdist 3.8 groups
        by rewriting `item._nodeid`, which pytest 9.2 no longer reads (the marks had no effect)."""
        if config.getvalue("dist") != "loadgroup":
            return None
        from xdist.scheduler import LoadScopeScheduling

        class OneWorkerModules(LoadScopeScheduling):
            def _split_scope(self, nodeid: str) -> str:
                return one_worker_scope(nodeid)

        return OneWorkerModules(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    reasons: dict[str, str | None] = {
        "npu": None if _npu_available() else "needs an Ascend NPU host with CANN and torch_npu (none here)",
        "cuda": None if _cuda_available() else "needs an NVIDIA GPU (none here)",
        "browser": None if Path("/usr/bin/chromium").exists() else "needs /usr/bin/chromium (apt-get install chromium)",
        "sandbox": None if shutil.which("bwrap") else "needs bubblewrap (apt-get install bubblewrap)",
        "postgres": None if os.environ.get("OPJUDGE_TEST_POSTGRES_URL") else "set OPJUDGE_TEST_POSTGRES_URL",
        "redis": None if os.environ.get("OPJUDGE_TEST_REDIS_URL") else "set OPJUDGE_TEST_REDIS_URL",
        "memcg": _memcg_missing(),
    }
    for item in items:
        for marker, reason in reasons.items():
            # get_closest_marker, not keywords: a folder named like a marker (tests/judge/npu) is no marker.
            if reason and item.get_closest_marker(marker) is not None:
                item.add_marker(pytest.mark.skip(reason=reason))


def _memcg_missing() -> str | None:
    """Why this host gives the runner children no memory cgroup, or None. Under CI
    (OPJUDGE_TEST_REQUIRE_SERVICES=1) never a skip: CI's hosts have one, and a test that needs it fails
    with the reason instead."""
    from judge.sandbox.memcg import find_root

    root, reason = find_root()
    if root is not None or os.environ.get("OPJUDGE_TEST_REQUIRE_SERVICES") == "1":
        return None
    return f"no memory cgroup for the runner children here: {reason}"


def _npu_available() -> bool:
    import importlib.util

    return Path("/dev/davinci_manager").exists() and importlib.util.find_spec("torch_npu") is not None


def _cuda_available() -> bool:
    try:
        import torch

        return bool(torch.cuda.is_available())
    except Exception:  # torch missing or broken: no GPU either way
        return False


@pytest.fixture
def repo_root() -> Path:
    return REPO_ROOT
