"""How `make test` spreads the suite over pytest-xdist workers (tests/conftest.py)."""

from __future__ import annotations

from tests.conftest import one_worker_scope


def test_service_modules_go_whole_to_one_worker_and_the_rest_test_by_test() -> None:
    assert one_worker_scope("tests/e2e/test_pages.py::test_board_renders") == "tests/e2e/test_pages.py"
    assert one_worker_scope("tests/e2e/test_faults.py::test_a[x]") == "tests/e2e/test_faults.py"
    assert one_worker_scope("tests/judge/cuda/test_kernels_on_cpu.py::test_b[t01]") == (
        "tests/judge/cuda/test_kernels_on_cpu.py")
    corpus = "tests/judge/test_exploit_corpus.py::test_exploit_is_stopped[exploit_segfault-strict]"
    assert one_worker_scope(corpus) == corpus
