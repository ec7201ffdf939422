"""Kernels the end-to-end tests upload, derived from the add_mul_relu fixtures."""

from __future__ import annotations

from tests.e2e.conftest import BASELINE, FIXTURES

ENTRY = 'extern "C" int kernel_run(const kernel_args* a) {'


def baseline() -> bytes:
    return BASELINE.read_bytes()


def wrong() -> bytes:
    """Expected WA: the ReLU is missing."""
    return (FIXTURES / "wrong_no_relu.cpp").read_bytes()


def _wrapped(body: str) -> bytes:
    source = (FIXTURES / "ok_simple.cpp").read_text()
    assert ENTRY in source, "ok_simple.cpp changed: update tests/e2e/kernels.py"
    source = source.replace(ENTRY, "static int plain_run(const kernel_args* a) {")
    return (source + "\n" + ENTRY + "\n" + body + "\n}\n").encode()


def repeated(times: int) -> bytes:
    """Expected AC, about `times` times slower than the baseline: the same work, `times` times."""
    return _wrapped(f"    int failed = 0;\n    for (int k = 0; k < {times}; ++k) failed |= plain_run(a);\n"
                    "    return failed;")


def spinning(spins: int) -> bytes:
    """Expected AC, but every call first spins `spins` times (seconds per call), so a run can be killed mid-way."""
    return _wrapped(f"    volatile unsigned long long spin = 0;\n    while (spin < {spins}ULL) spin = spin + 1;\n"
                    "    return plain_run(a);")
