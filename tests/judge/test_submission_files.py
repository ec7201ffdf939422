import pytest

from judge.errors import SubmissionFormatError
from judge.limits import Limits
from judge.submission import make_sources, read_sources

LIMITS = Limits(max_source_files=3, source_limit_bytes=100)


@pytest.mark.parametrize("name", ["../x.cpp", "a/b.cpp", ".hidden.cpp", "x.exe", "a b.cpp", "", "x\x00.cpp"])
def test_bad_names_refused(name):
    with pytest.raises(SubmissionFormatError):
        make_sources([(name, b"int x;")], LIMITS)


def test_limits():
    with pytest.raises(SubmissionFormatError, match="at most 3"):
        make_sources([(f"f{i}.cpp", b"") for i in range(4)], LIMITS)
    with pytest.raises(SubmissionFormatError, match="bytes"):
        make_sources([("big.cpp", b"x" * 101)], LIMITS)
    with pytest.raises(SubmissionFormatError, match="twice"):
        make_sources([("a.cpp", b""), ("a.cpp", b"")], LIMITS)


def test_good_files(tmp_path):
    path = tmp_path / "kernel.cpp"
    path.write_text("int x;")
    assert read_sources([path], LIMITS)[0].content == b"int x;"
    with pytest.raises(SubmissionFormatError, match="no such file"):
        read_sources([tmp_path / "missing.cpp"], LIMITS)


def test_binary_and_non_utf8_files_are_refused_before_they_cost_a_run() -> None:
    elf = b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 8
    with pytest.raises(SubmissionFormatError, match="binary .a NUL byte at offset 7"):
        make_sources([("kernel.cpp", elf)], LIMITS)
    with pytest.raises(SubmissionFormatError, match="not UTF-8 text"):
        make_sources([("kernel.cpp", b"int x; // caf\xe9\n")], LIMITS)
    assert make_sources([("kernel.cpp", "int x; // café, π\n".encode())], LIMITS)[0].name == "kernel.cpp"
