"""The starter kernel's host half (sfag_host.cpp), compiled here with the host compiler.

The kernels need CANN and a device; the planning code does not: a stub `sfag_launch` records
what kernel_run would enqueue, so argument checks, the tiling and the workspace are tested.
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess

import pytest

from judge.abi import kernel_args_struct, pack_args
from tests.judge.npu.conftest import HEADER, REPO

STARTER = REPO / "reference_kernels" / "sparse_flash_attention_grad" / "npu"

STUB = r"""
#include <stddef.h>
#include "sfag_tiling.h"
static SfagTiling last;
static SfagPointers last_ptr;
static void *last_stream;
static int launches;
extern "C" void sfag_launch(void *stream, const SfagPointers *ptr, const SfagTiling *tiling) {
    last = *tiling; last_ptr = *ptr; last_stream = stream; ++launches;
}
extern "C" size_t test_tiling_size(void) { return sizeof(SfagTiling); }
extern "C" const SfagTiling *test_last_tiling(void) { return &last; }
extern "C" void *test_last_stream(void) { return last_stream; }
extern "C" void *test_last_workspace(void) { return last_ptr.workspace; }
extern "C" int test_launches(void) { return launches; }
"""


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
    subprocess.run(["g++", "-std=c++17", "-O1", "-fPIC", "-shared", "-Wall", "-Werror", f"-I{STARTER}",
                    f"-I{HEADER.parent}", str(STARTER / "sfag_host.cpp"), str(folder / "stub.cpp"), "-o",
                    str(library)], check=True, capture_output=True)
    lib = ctypes.CDLL(str(library))
    lib.test_tiling_size.restype = ctypes.c_size_t
    lib.test_last_tiling.restype = ctypes.POINTER(Tiling)
    lib.test_last_stream.restype = ctypes.c_void_p
    lib.test_last_workspace.restype = ctypes.c_void_p
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


def test_kernel_run_launches_once_on_the_callers_stream(starter: ctypes.CDLL) -> None:
    before = starter.test_launches()
    args = _args({"stream": 0xABC000, "workspace": 0x7000000})
    assert starter.kernel_run(ctypes.byref(args)) == 0
    assert starter.test_launches() == before + 1
    assert starter.test_last_stream() == 0xABC000 and starter.test_last_workspace() == 0x7000000
    assert starter.test_last_tiling().contents.headsPerItem == 8


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
