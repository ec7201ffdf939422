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
