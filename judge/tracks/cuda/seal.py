"""Which runtime rules (judge/sandbox/seal.py) the CUDA track's runner bears, and why: every rule decided
with the evidence read (judge/sandbox/seal_tracks.py says what each status means; docs/security.md, 4b).
"""

from __future__ import annotations

from judge.sandbox.seal import RuntimeRule
from judge.sandbox.seal_tracks import Decision, Status

_R, _C, _S = Status.RUNTIME, Status.CANDIDATE, Status.STATIC_ONLY
_RULE = RuntimeRule

_NVIDIA_COMM = (
    "NVIDIA's driver (570+) opens /proc/<pid>/task/<tid>/comm for writing when it starts its "
    "threads, and fails with CUDA error 304 when refused: nolabs-ai/nono issues #924 and PRs "
    "#673, #1276; compiler-explorer/compiler-explorer PR #7362; NVIDIA/OpenShell issue #1486"
)
_NVIDIA_MAP_FD = (
    "each new CPU mapping of device memory is an mmap of a freshly opened /dev/nvidia<N> "
    "(O_RDWR): the NV_ESC_RM_MAP_MEMORY request carries that descriptor "
    "(nv_ioctl_nvos33_parameters_with_fd, open-gpu-kernel-modules "
    "src/nvidia/arch/nvalloc/unix/include/nv-unix-nvos-params-wrappers.h; the same sequence in "
    "tinygrad/tinygrad tinygrad/runtime/ops_nv.py, `_gpu_map_to_cpu`)"
)

DECISIONS = (
    Decision(_RULE.SIGNAL_HANDLERS, _S,
             "a CUDA workload was seen installing signal actions long after start-up "
             "(yalue/onnxruntime_go issue #140: during inference with batches over 1; which "
             "library installs them was not found); libcuda is closed, so when it may do so "
             "cannot be read"),
    Decision(_RULE.EXECUTABLE_MEMORY, _C,
             "no public source shows libcuda making anonymous memory executable (its CPU "
             "mappings of device memory are PROT_READ|PROT_WRITE: tinygrad ops_nv.py, "
             "`_gpu_map_to_cpu`), but libcuda is closed, and another GPU runtime did map RWX "
             "anonymous memory until 2026 (ROCm/rocm-systems PR #10158, libhsakmt)"),
    Decision(_RULE.MAPPED_CODE, _S,
             "libraries are loaded on first use: torch dlopens NVRTC the first time it needs "
             "it (pytorch/pytorch aten/src/ATen/cuda/detail/LazyNVRTC.cpp), and the CUDA "
             "runtime reaches the driver itself through dlopen (forum.snapcraft.io 'Hello "
             "World CUDA Analysis': libcuda.so.1 and its loader library are dlopened)"),
    Decision(_RULE.FILE_WRITES, _S, _NVIDIA_COMM + "; " + _NVIDIA_MAP_FD),
    Decision(_RULE.NEW_FILTERS, _R,
             "no CUDA component loads a seccomp filter; sandboxes that run CUDA filter it "
             "from outside (NVIDIA/OpenShell issue #1696: the driver needs memfd_create, "
             "which the deny-list allows)"),
    Decision(_RULE.SHARED_MEMORY, _S,
             "the NVIDIA driver needs memfd_create after start-up (NVIDIA/OpenShell issue #1696, "
             "a sandbox that refused it broke CUDA); the memory limit on this track is the "
             "device's, and the static checks refuse the names"),
)
