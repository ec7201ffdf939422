import ctypes

import pytest

from judge.abi import HeaderParseError, kernel_args_struct, pack_args, parse_kernel_args

HEADER = """
typedef struct kernel_args {
    int64_t B, S1;   /* sizes */
    double  scale;
    const void *q, *k;
    const int32_t *idx;
    void *out;
    void *stream;
} kernel_args;
"""


def test_fields_in_declaration_order():
    names = [(f.name, f.pointer) for f in parse_kernel_args(HEADER)]
    assert names == [("B", False), ("S1", False), ("scale", False), ("q", True), ("k", True), ("idx", True),
                     ("out", True), ("stream", True)]


def test_struct_layout_matches_c(tmp_path):
    header = tmp_path / "h.h"
    header.write_text(HEADER)
    struct = kernel_args_struct(header)
    assert ctypes.sizeof(struct) == 8 * 8
    args = pack_args(struct, pointers={"q": 16, "k": None, "idx": 32, "out": 48, "stream": None},
                     scalars={"B": 2, "S1": 3, "scale": 0.5})
    assert (args.B, args.S1, args.scale, args.q, args.k) == (2, 3, 0.5, 16, None)


def test_missing_value_is_an_error(tmp_path):
    header = tmp_path / "h.h"
    header.write_text(HEADER)
    with pytest.raises(Exception, match="scale"):
        pack_args(kernel_args_struct(header), pointers=dict.fromkeys(["q", "k", "idx", "out", "stream"]),
                  scalars={"B": 1, "S1": 1})


def test_unknown_type_refused():
    with pytest.raises(HeaderParseError):
        parse_kernel_args("typedef struct kernel_args { long double x; } kernel_args;")


def test_problem_headers_parse(repo_root):
    for header in repo_root.glob("problems/*/*.h"):
        fields = parse_kernel_args(header.read_text())
        assert {"workspace", "workspace_bytes", "stream", "dtype"} <= {f.name for f in fields}
