"""The starter kernel's host half (sfag_host.cpp), compiled here with the host compiler.

The kernels need CANN and a device; the planning and the launches do not. sfag_host.cpp is compiled
with the host pass's flags against the aclrtlaunch_*.h headers CANN 8.5.0's own generator wrote for
the starter's kernel files (data/cann_v8.5.0/generator/out/sfag_library/include, made by its regen.sh;
acl/acl_base.h is a stand-in holding only aclrtStream), and a stub defines the three generated
launchers, recording what kernel_run enqueues: argument checks, the tiling and the launches are tested.
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path

import pytest

from judge.abi import kernel_args_struct, pack_args
from judge.tracks.npu.project import HOST_FLAGS
from tests.judge.npu.conftest import DATA, HEADER, REPO

STARTER = REPO / "reference_kernels" / "sparse_flash_attention_grad" / "npu"
GENERATOR = DATA / "cann_v8.5.0" / "generator"
GENERATED = GENERATOR / "out" / "sfag_library" / "include"  # the generator's headers for the three kernel files
STANDIN = GENERATOR / "standin_host_include"

# The generated launchers, as host_stub.cpp defines them: (blockDim, stream, the kernel's parameters with
# the tiling struct by pointer). Each records its call.
STUB = r"""
#include <stddef.h>
#include <stdint.h>
#include "sfag_tiling.h"
static SfagTiling last;
static void *last_stream, *last_workspace, *last_dq;
static uint32_t last_blocks;
static int launches;
static char order[256];  /* which launcher ran, in order (this module makes far fewer than 255 calls) */
static uint32_t fail_at = 0;  /* 1-based launch to refuse, 0: none */
static uint32_t record(char which, uint32_t blocks, void *stream, void *workspace, SfagTiling *tiling) {
    order[launches % 255] = which; ++launches;
    last = *tiling; last_stream = stream; last_workspace = workspace; last_blocks = blocks;
    return (uint32_t)launches == fail_at ? 507015u : 0u;
}
extern "C" uint32_t aclrtlaunch_sfag_zero(uint32_t b, void *s, void *ws, SfagTiling *t) {
    return record('z', b, s, ws, t);
}
extern "C" uint32_t aclrtlaunch_sfag_main(uint32_t b, void *s, void *q, void *qr, void *k, void *kr, void *v,
        void *idx, void *dout, void *out, void *mx, void *sm, void *dq, void *dqr, void *ws, SfagTiling *t) {
    last_dq = dq; return record('m', b, s, ws, t);
}
extern "C" uint32_t aclrtlaunch_sfag_finalize(uint32_t b, void *s, void *dk, void *dkr, void *dv, void *ws,
        SfagTiling *t) { return record('f', b, s, ws, t); }
extern "C" size_t test_tiling_size(void) { return sizeof(SfagTiling); }
extern "C" const SfagTiling *test_last_tiling(void) { return &last; }
extern "C" void *test_last_stream(void) { return last_stream; }
extern "C" void *test_last_workspace(void) { return last_workspace; }
extern "C" void *test_last_dq(void) { return last_dq; }
extern "C" uint32_t test_last_blocks(void) { return last_blocks; }
extern "C" int test_launches(void) { return launches; }
extern "C" const char *test_order(void) { return order; }
extern "C" void test_fail_at(uint32_t n) { fail_at = n; }
"""


def _compile_host(out: Path, *sources: Path, extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    # The host pass's flags (judge/tracks/npu/project.py, and the template's old-ABI define).
    return subprocess.run(["g++", *HOST_FLAGS, "-D_GLIBCXX_USE_CXX11_ABI=0", "-shared", "-Wall", "-Werror",
                           f"-I{STARTER}", f"-I{HEADER.parent}", f"-I{GENERATED}", f"-I{STANDIN}", *extra,
                           *map(str, sources), "-o", str(out)], capture_output=True, text=True)


class Tiling(ctypes.Structure):
    """sfag_tiling.h's SfagTiling, field for field (test_tiling_size guards the layout)."""

    _fields_ = [(n, ctypes.c_int64) for n in ("B", "S1", "S2", "N1", "N2", "G", "D", "Dr", "K", "blockSize",
                                              "sparseMode")] + [("scale", ctypes.c_float)] + [
        (n, ctypes.c_int32) for n in ("dtype", "headsPerItem", "tokensPerChunk", "dPad", "drPad", "rowPad",
                                      "blocks")] + [
        (n, ctypes.c_int64) for n in ("items", "accRows", "accDkOffset", "accDkrOffset", "accDvOffset",
                                      "workspaceBytes")]


@pytest.fixture(scope="module")
def starter(tmp_path_factory: pytest.TempPathFactory) -> ctypes.CDLL:
    if shutil.which("g++") is None:
        pytest.skip("needs g++")
    folder = tmp_path_factory.mktemp("starter")
    (folder / "stub.cpp").write_text(STUB)
    library = folder / "starter_host.so"
    built = _compile_host(library, STARTER / "sfag_host.cpp", folder / "stub.cpp")
    assert built.returncode == 0, built.stderr
    lib = ctypes.CDLL(str(library))
    lib.test_tiling_size.restype = ctypes.c_size_t
    lib.test_last_tiling.restype = ctypes.POINTER(Tiling)
    lib.test_last_stream.restype = ctypes.c_void_p
    lib.test_last_workspace.restype = ctypes.c_void_p
    lib.test_last_dq.restype = ctypes.c_void_p
    lib.test_order.restype = ctypes.c_char_p
    lib.kernel_workspace_bytes.restype = ctypes.c_int64
    assert lib.test_tiling_size() == ctypes.sizeof(Tiling)
    return lib


OFFICIAL = {"B": 1, "S1": 2048, "S2": 8192, "N1": 128, "N2": 1, "D": 512, "Dr": 64, "K": 32, "block_size": 64,
            "sparse_mode": 3, "scale": 1 / 24.0, "dtype": 2}


def _args(pointers: dict[str, int | None] | None = None, **sizes: float) -> ctypes.Structure:
    struct = kernel_args_struct(HEADER)
    names = [name for name, ctype in struct._fields_ if ctype is ctypes.c_void_p]
    values: dict[str, int | None] = {name: 0x1000 * (i + 1) for i, name in enumerate(names)}
    values.update(pointers or {})
    scalars = {**OFFICIAL, **sizes}
    scalars["workspace_bytes"] = scalars.get("workspace_bytes", 1 << 40)
    return pack_args(struct, pointers=values, scalars=scalars)


def _plan(lib: ctypes.CDLL, args: ctypes.Structure) -> tuple[int, Tiling]:
    tiling = Tiling()
    status = lib.sfag_plan(ctypes.byref(args), ctypes.byref(tiling))
    return status, tiling


def test_official_sizes_split_into_rows_and_head_groups_that_fit_the_unified_buffer(starter: ctypes.CDLL) -> None:
    status, t = _plan(starter, _args())
    assert status == 0
    assert (t.tokensPerChunk, t.headsPerItem, t.dPad, t.drPad, t.rowPad) == (8, 8, 512, 64, 8)
    assert t.G == 128 and t.items == 1 * 2048 * 1 * (128 // 8) and t.blocks == 40
    assert t.scale == pytest.approx(1 / 24.0) and t.dtype == 2


def test_float32_needs_more_buffer_so_takes_fewer_heads(starter: ctypes.CDLL) -> None:
    status, t = _plan(starter, _args(dtype=0))
    assert status == 0 and t.tokensPerChunk == 8 and t.headsPerItem == 4


def test_heads_per_item_divides_the_group_and_small_cases_launch_few_cores(starter: ctypes.CDLL) -> None:
    status, t = _plan(starter, _args(N1=6, N2=2, S1=4, B=1, D=64, Dr=0))
    assert status == 0 and t.G == 3 and 3 % t.headsPerItem == 0
    assert t.items == 4 * 2 * (3 // t.headsPerItem) and t.blocks == min(t.items, 40)
    assert t.drPad == 0


def test_workspace_holds_three_float_accumulators(starter: ctypes.CDLL) -> None:
    args = _args()
    status, t = _plan(starter, args)
    rows = 1 * 8192 * 1
    assert status == 0 and t.accRows == rows
    assert (t.accDkOffset, t.accDvOffset, t.accDkrOffset) == (0, rows * 512 * 4, 2 * rows * 512 * 4)
    assert t.workspaceBytes == 2 * rows * 512 * 4 + rows * 64 * 4
    # The 16 MiB system workspace CANN's wrapper keeps in front (HAVE_WORKSPACE, see sfag_tiling.h).
    assert starter.kernel_workspace_bytes(ctypes.byref(args)) == (16 << 20) + t.workspaceBytes
    status = starter.kernel_run(ctypes.byref(_args({"workspace": 0x7000000}, workspace_bytes=t.workspaceBytes)))
    assert status == 4  # the accumulators alone, without the system part: refused


def test_kernel_run_launches_the_three_kernels_in_order_on_the_callers_stream(starter: ctypes.CDLL) -> None:
    before = starter.test_launches()
    args = _args({"stream": 0xABC000, "workspace": 0x7000000, "dq": 0x9000000})
    assert starter.kernel_run(ctypes.byref(args)) == 0
    assert starter.test_launches() == before + 3
    assert starter.test_order().decode()[before:before + 3] == "zmf"
    assert starter.test_last_stream() == 0xABC000 and starter.test_last_workspace() == 0x7000000
    assert starter.test_last_dq() == 0x9000000
    tiling = starter.test_last_tiling().contents
    assert tiling.headsPerItem == 8 and starter.test_last_blocks() == tiling.blocks == 40


def test_a_refused_launch_is_kernel_runs_error_and_stops_the_rest(starter: ctypes.CDLL) -> None:
    before = starter.test_launches()
    starter.test_fail_at(before + 2)  # the runtime refuses sfag_main
    try:
        assert starter.kernel_run(ctypes.byref(_args())) == 5
    finally:
        starter.test_fail_at(0)
    assert starter.test_launches() == before + 2  # sfag_finalize never enqueued


def test_the_generated_headers_are_the_generators_for_the_three_kernel_files() -> None:
    names = sorted(p.name for p in GENERATED.glob("aclrtlaunch_*.h"))
    assert names == ["aclrtlaunch_sfag_finalize.h", "aclrtlaunch_sfag_main.h", "aclrtlaunch_sfag_zero.h",
                     "aclrtlaunch_triple_chevrons_func.h"]
    zero = (GENERATED / "aclrtlaunch_sfag_zero.h").read_text()
    assert "aclrtlaunch_sfag_zero(uint32_t blockDim, aclrtStream stream, void* workspace, SfagTiling* tiling)" in zero


def test_a_by_value_tiling_does_not_compile_against_the_generated_launcher(tmp_path: Path) -> None:
    """What the starter did before: `<<<>>>` with `*tiling`, which the host pass turns into a
    call of the triple-chevrons header's `sfag_zero(blocks, hold, stream, workspace, SfagTiling*)`."""
    if shutil.which("g++") is None:
        pytest.skip("needs g++")
    call = ('#include <stdint.h>\n#include "sfag_tiling.h"\n#include "aclrtlaunch_triple_chevrons_func.h"\n'
            'extern "C" uint32_t go(void *s, void *ws, SfagTiling *t) {{ return sfag_zero(1, nullptr, s, ws, {}); }}\n')
    (tmp_path / "by_value.cpp").write_text(call.format("*t"))
    (tmp_path / "by_pointer.cpp").write_text(call.format("t"))
    refused = _compile_host(tmp_path / "v.o", tmp_path / "by_value.cpp", extra=("-c",))
    assert refused.returncode != 0 and "SfagTiling" in refused.stderr
    accepted = _compile_host(tmp_path / "p.o", tmp_path / "by_pointer.cpp", extra=("-c",))
    assert accepted.returncode == 0, accepted.stderr


def test_the_generated_header_needs_the_tiling_declared_first(tmp_path: Path) -> None:
    if shutil.which("g++") is None:
        pytest.skip("needs g++")
    (tmp_path / "first.cpp").write_text('#include <stdint.h>\n#include "aclrtlaunch_sfag_zero.h"\n'
                                        '#include "sfag_tiling.h"\n')
    wrong = _compile_host(tmp_path / "f.o", tmp_path / "first.cpp", extra=("-c",))
    assert wrong.returncode != 0 and "SfagTiling" in wrong.stderr
    host = (STARTER / "sfag_host.cpp").read_text()
    assert host.index('#include "sfag_tiling.h"') < host.index('#include "aclrtlaunch_sfag_zero.h"')


@pytest.mark.parametrize(
    ("pointers", "sizes", "code"),
    [
        ({}, {"N1": 3, "N2": 2}, 1),  # N1 must be a multiple of N2
        ({}, {"sparse_mode": 1}, 1),
        ({}, {"dtype": 5}, 1),
        ({"q_rope": None}, {}, 2),  # Dr = 64 needs the rope pointers
        ({"dv": None}, {}, 2),
        ({}, {"D": 4096}, 3),  # wider than the starter's UB rows
        ({}, {"workspace_bytes": 1024}, 4),
        ({"workspace": None}, {}, 4),
    ],
)
def test_kernel_run_refuses_what_it_cannot_do_without_launching(starter: ctypes.CDLL, pointers: dict,
                                                                 sizes: dict, code: int) -> None:
    before = starter.test_launches()
    assert starter.kernel_run(ctypes.byref(_args(pointers, **sizes))) == code
    assert starter.test_launches() == before


def test_no_rope_means_null_rope_pointers(starter: ctypes.CDLL) -> None:
    nulls = {"q_rope": None, "k_rope": None, "dq_rope": None, "dk_rope": None}
    assert starter.kernel_run(ctypes.byref(_args(nulls, Dr=0))) == 0
