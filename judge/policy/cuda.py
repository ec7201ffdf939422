"""Policy rules of the CUDA track: CUDA C++ built by nvcc into one shared library.

On top of the rules every C/C++ backend shares (judge/policy/common.py):
- no vendor library for the attention itself (cuBLAS, cuBLASLt, cuDNN, cuSPARSE, CUTLASS/CuTe,
  FlashAttention, FlashInfer, torch): torch has them all loaded in the runner, so the
  library's undefined symbols are checked too, not only the source;
- no device-wide state changes (cudaDeviceReset, cudaSetDevice, limits, persisting L2);
- no streams, events or graphs of the kernel's own, and no host synchronisation: all work
  goes on `args->stream`, which the judge synchronises and times (work elsewhere would run
  off the clock);
- no allocation (the workspace is given) and no synchronous copies or memsets;
- no driver API (it reaches everything the runtime rules refuse), no timer reads on the
  device (clock64, the PTX wrappers of %clock/%globaltimer).
After the build, the library may import only the C/C++ runtime and the CUDA runtime's
launch path (`CUDART_IMPORTS`), and may need only libcudart besides the C/C++ runtime.
"""

from __future__ import annotations

from judge.policy.common import (
    COMMON_BANNED,
    COMMON_HEADER_HINTS,
    CXX_FORBIDDEN_EXPORTS,
    CXX_RUNTIME_IMPORTS,
    CXX_RUNTIME_NEEDED,
    CXX_RUNTIME_PATTERNS,
    HOST_FORBIDDEN_BYTE_SEQUENCES,
    HOST_FORBIDDEN_INSTRUCTIONS,
    LIBC_IMPORTS,
    MATH_IMPORTS,
)
from judge.policy.rules import BackendRules, BannedName

_VENDOR = (
    "calling a library's matrix or attention routine is not allowed (`{name}`); write the kernel yourself with CUDA C++"
)
_STATE = "kernels may not change the device's state (`{name}`): the judge owns the device"
_STREAM = (
    "all work must go on args->stream, which the judge synchronises and times: "
    "`{name}` (streams, events, graphs or host synchronisation of your own) is refused"
)
_ALLOC = "kernels may not allocate device or pinned memory (`{name}`): ask for a workspace with kernel_workspace_bytes"
_SYNC_COPY = "`{name}` waits outside args->stream: use the ...Async form on args->stream"
_DRIVER = "the CUDA driver API (`{name}`) is not available: use the runtime's <<<...>>> launches"
_TIMER = "kernels may not read clocks or cycle counters: `{name}` is refused (the judge does the timing)"


def _names(pattern_body: str, rule: str, message: str) -> BannedName:
    """Any use of these names (a call, a function pointer, a macro argument), not only a call."""
    return BannedName(rf"(?<![\w$])(?:{pattern_body})\b", rule, message)


CUDA_BANNED: tuple[BannedName, ...] = (
    _names(
        r"cublas\w*|cublasLt\w*|cudnn\w*|cusparse\w*|cusparseLt\w*|cufft\w*|curand\w*|cusolver\w*|"
        r"flash_attn\w*|flashinfer\w*|scaled_dot_product\w*|mha_(?:fwd|bwd|varlen)\w*",
        "vendor-routine",
        _VENDOR,
    ),
    BannedName(r"\b(?:cutlass|cute|at|torch|c10|flashinfer|thrust)\s*::", "vendor-routine", _VENDOR),
    _names(
        r"cudaDeviceReset|cudaSetDevice|cudaSetDeviceFlags|cudaSetValidDevices|cudaDeviceSetLimit|"
        r"cudaDeviceSetCacheConfig|cudaDeviceSetSharedMemConfig|cudaDeviceSetMemPool|cudaDeviceSetGraphMemAttribute|"
        r"cudaCtxResetPersistingL2Cache|cudaStreamSetAttribute|cudaDeviceFlushGPUDirectRDMAWrites|"
        r"cudaProfilerStart|cudaProfilerStop|cudaIpc\w+|cudaThreadExit|cudaThreadSetLimit",
        "device-state",
        _STATE,
    ),
    _names(
        r"cudaStreamCreate\w*|cudaStreamDestroy|cudaStreamSynchronize|cudaStreamQuery|cudaStreamWaitEvent|"
        r"cudaStreamAddCallback|cudaLaunchHostFunc|cudaStreamAttachMemAsync|cudaStreamBeginCapture\w*|"
        r"cudaStreamEndCapture|cudaStreamIsCapturing|cudaStreamGetCaptureInfo\w*|cudaStreamUpdateCaptureDependencies\w*|"
        r"cudaThreadExchangeStreamCaptureMode|cudaGraph\w+|cudaUserObject\w+|"
           r"cudaEvent(?:Create|Record|Synchronize|Query|ElapsedTime|Destroy)\w*|"
        r"cudaDeviceSynchronize|cudaThreadSynchronize|cudaStreamPerThread|cudaStreamLegacy|"
        r"cudaStreamNonBlocking|cudaLaunchDevice|cudaGetDriverEntryPoint\w*",
        "stream-control",
        _STREAM,
    ),
    _names(
        r"cudaMalloc\w*|cudaFree\w*|cudaHostAlloc|cudaHostRegister|cudaHostUnregister|cudaMemPool\w+|"
        r"cudaMallocManaged|cudaMemAdvise|cudaMemPrefetchAsync",
        "device-allocation",
        _ALLOC,
    ),
    _names(
        r"cudaMemcpy|cudaMemcpy2D|cudaMemcpy3D|cudaMemcpyToSymbol|cudaMemcpyFromSymbol|cudaMemcpyPeer|"
        r"cudaMemset|cudaMemset2D|cudaMemset3D|cudaMemcpyToArray|cudaMemcpyFromArray",
        "synchronous-copy",
        _SYNC_COPY,
    ),
    # Driver API entry points are cu + CamelCase (cuLaunchKernel, cuCtxSynchronize, cuTensorMapEncodeTiled).
    BannedName(
        r"(?<![\w$.>:])cu(?:Ctx|Stream|Event|Graph|Mem|Module|Library|Kernel|Launch|Func|Device|Init|"
        r"TensorMap|Get|Profiler|Ipc|Occupancy|Pointer|Array|Tex|Surf|Link|Driver|Coredump|Green)\w*\s*\(",
        "driver-api",
        _DRIVER,
    ),
    _names(r"clock64|__clock64|get_sreg_clock\w*|get_sreg_globaltimer\w*|globaltimer\w*", "timer-read", _TIMER),
)

# The CUDA runtime's launch path: what nvcc's generated code and a plain kernel_run import.
CUDART_IMPORTS = frozenset(
    """
    __cudaRegisterFatBinary __cudaRegisterFatBinaryEnd __cudaUnregisterFatBinary __cudaRegisterFunction
    __cudaRegisterVar __cudaRegisterManagedVar __cudaRegisterTexture __cudaRegisterSurface __cudaInitModule
    __cudaPushCallConfiguration __cudaPopCallConfiguration __cudaLaunchKernel __cudaGetKernel
    cudaLaunchKernel cudaLaunchKernelExC cudaLaunchCooperativeKernel
    cudaGetLastError cudaPeekAtLastError cudaGetErrorString cudaGetErrorName
    cudaMemsetAsync cudaMemcpyAsync cudaMemset2DAsync cudaMemcpy2DAsync cudaMemcpyToSymbolAsync
    cudaMemcpyFromSymbolAsync cudaGetSymbolAddress cudaGetSymbolSize
    cudaFuncSetAttribute cudaFuncGetAttributes cudaFuncSetCacheConfig
    cudaGetDevice cudaGetDeviceCount cudaDeviceGetAttribute cudaGetDeviceProperties cudaGetDeviceProperties_v2
    cudaOccupancyMaxActiveBlocksPerMultiprocessor cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags
    cudaOccupancyAvailableDynamicSMemPerBlock cudaOccupancyMaxPotentialClusterSize cudaOccupancyMaxActiveClusters
    cudaDriverGetVersion cudaRuntimeGetVersion cudaPointerGetAttributes
    """.split()
)

# Headers for computing: the C/C++ ones of the CPU track (no OpenMP or x86 intrinsics: the host
# side only launches) and the CUDA ones for device code.
_HEADERS = """
    algorithm array atomic bit cassert cfloat climits cmath cstddef cstdint cstdio cstdlib cstring
    initializer_list iterator limits memory new numeric tuple type_traits utility vector
    assert.h float.h limits.h math.h stddef.h stdint.h stdio.h stdlib.h string.h
    cuda_runtime.h cuda_runtime_api.h device_launch_parameters.h vector_types.h vector_functions.h
    cuda_fp16.h cuda_bf16.h cuda_fp8.h cuda_fp6.h cuda_fp4.h math_constants.h mma.h crt/mma.h
    cooperative_groups.h cooperative_groups/reduce.h cooperative_groups/scan.h cooperative_groups/memcpy_async.h
    cuda_pipeline.h cuda_pipeline_primitives.h cuda_awbarrier.h cuda_awbarrier_primitives.h cuda_awbarrier_helpers.h
    sm_60_atomic_functions.h sm_61_intrinsics.h sm_70_rt.h sm_80_rt.h sm_90_rt.h
    cuda/barrier cuda/pipeline cuda/ptx cuda/atomic cuda/annotated_ptr cuda/std/cstdint cuda/std/cstddef
    cuda/std/type_traits cuda/std/limits cuda/std/utility cuda/std/array cuda/std/bit cuda/std/cmath
    cuda/std/atomic cuda/std/barrier cuda/std/tuple cuda/std/functional cuda/std/span cuda/std/mdspan
    cub/cub.cuh cub/block/block_reduce.cuh cub/block/block_scan.cuh cub/block/block_load.cuh
    cub/block/block_store.cuh cub/block/block_exchange.cuh cub/block/block_radix_sort.cuh
    cub/warp/warp_reduce.cuh cub/warp/warp_scan.cuh cub/warp/warp_load.cuh cub/warp/warp_store.cuh
    cub/util_type.cuh cub/thread/thread_operators.cuh
"""

_CUDA_HEADER_HINTS = {
    "cuda.h": "the CUDA driver API is not available; use the runtime (<cuda_runtime.h>)",
    "cublas_v2.h": "cuBLAS is not allowed: write the kernel yourself",
    "cublasLt.h": "cuBLASLt is not allowed: write the kernel yourself",
    "cudnn.h": "cuDNN is not allowed: write the kernel yourself",
    "thrust/device_vector.h": "thrust allocates and synchronises outside args->stream; use CUB block primitives",
}

RULES = BackendRules(
    # Headers travel with the sources; nvcc compiles the .cu (and .cpp) files (judge/tracks/cuda/toolchain.py).
    source_suffixes=frozenset({".cu", ".cuh", ".cpp", ".cc", ".h", ".hpp", ".hh", ".inl"}),
    allowed_system_headers=frozenset(_HEADERS.split()),
    banned=COMMON_BANNED + CUDA_BANNED,
    header_hints={**COMMON_HEADER_HINTS, **_CUDA_HEADER_HINTS},
    allowed_imports=MATH_IMPORTS | LIBC_IMPORTS | CXX_RUNTIME_IMPORTS | CUDART_IMPORTS,
    allowed_import_patterns=(*CXX_RUNTIME_PATTERNS,),
    allowed_imports_in_words=(
        "math, memory and C++ runtime functions, and the CUDA runtime's kernel launches, "
        "async copies and memsets on args->stream, and device queries"
    ),
    forbidden_export_patterns=CXX_FORBIDDEN_EXPORTS,
    allowed_needed=(r"libcudart\.so\.\d+", *CXX_RUNTIME_NEEDED),
    # The host code is x86-64 (or AArch64): the same instructions as the CPU track are refused there.
    # Device code lives in .nv_fatbin, which is not an executable section of the ELF file.
    forbidden_instructions=HOST_FORBIDDEN_INSTRUCTIONS,
    forbidden_byte_sequences=dict(HOST_FORBIDDEN_BYTE_SEQUENCES),
    # frame_dummy, plus nvcc's registration of the device code (__sti____cudaRegisterAll) for the
    # one .cu translation unit the toolchain accepts.
    init_array_entries=2,
    fini_array_entries=1,
)
