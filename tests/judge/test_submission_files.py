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


def test_each_backend_accepts_the_file_types_its_policy_does() -> None:
    """One list per backend, the policy's: upload, CLI and source check agree."""
    from judge.backends import Backend
    from judge.policy import check_sources, rules_for
    from judge.submission import source_suffixes

    for backend in Backend:
        assert set(source_suffixes(backend)) == rules_for(backend).source_suffixes
        for suffix in source_suffixes(backend):  # what the upload takes, the policy takes as a file type
            source = make_sources([(f"k{suffix}", b"int x;\n")], LIMITS, backend)
            assert not [f for f in check_sources(backend, source, LIMITS) if f.rule == "file-type"], suffix
    make_sources([("util.hh", b"int x;"), ("impl.inl", b"int y;")], LIMITS, Backend.CPU)  # refused at 422 before
    for name, backend in (("kernel.txt", Backend.CPU), ("kernel.cu", Backend.CPU), ("x.inc", Backend.CPU),
                          ("README.txt", Backend.NPU), ("kernel.cu", Backend.NPU)):
        with pytest.raises(SubmissionFormatError, match=f"not a source file for the {backend.value} backend"):
            make_sources([(name, b"int x;")], LIMITS, backend)
    assert "kernel.cu" == make_sources([("kernel.cu", b"int x;")], LIMITS, Backend.CUDA)[0].name


def test_a_name_the_policy_would_refuse_as_too_long_is_refused_here() -> None:
    make_sources([("a" * 60 + ".cpp", b"int x;")], LIMITS)
    with pytest.raises(SubmissionFormatError, match="the limit is 64"):
        make_sources([("a" * 61 + ".cpp", b"int x;")], LIMITS)
