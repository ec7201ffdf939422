"""What a worker reports on start, probed in a child process."""

from __future__ import annotations

import pytest

from judge.backends import Backend
from workers.hostinfo import describe_worker


@pytest.mark.slow
def test_a_cpu_worker_reports_its_compiler_device_and_sandbox(ctx) -> None:
    info = describe_worker(Backend.CPU, ctx.host_config(Backend.CPU), queue="judge.cpu")
    assert info["queue"] == "judge.cpu" and info["backend"] == "cpu" and info["host"]
    assert info["toolchain"].startswith("g++"), info
    assert info["device"] and info["device"] != "unavailable"
    assert info["sandbox"] in ("strict", "degraded", "off", "unavailable"), info
    assert "host.torch" in info and "probe" not in info
