"""Which runtime rules (judge/sandbox/seal.py) each track's runner bears, and why (docs/security.md, 4b).

Every rule is decided for every track, with the evidence behind the decision:

- `RUNTIME`: the seal refuses it on that track once the libraries are loaded;
- `CANDIDATE`: nothing read shows the track's runtime needing it, but the runtime is not
  open enough to be sure and no device check has run it sealed. It is not sealed: a rule that
  an honest driver trips makes every run SV. `tests/judge/sandbox/test_seal_tracks.py` has the
  hardware check (marked `cuda` / `npu`) that seals the real runtime with these rules too and
  launches kernels; where it passes, the rule moves to `RUNTIME` here, and nowhere else;
- `STATIC_ONLY`: the track's runtime does it by itself after it started, so only the static
  checks (the source, preprocessed and library policies refuse the names and imports) and the
  worker's checks stand against it there.

The evidence was read in public sources (repository and path, commit where it matters); the
driver and runtime binaries themselves are closed where said. Rules that hold on every track
from the start are not here: processes, programs, ptrace, other processes' memory, sockets,
perf counters, namespaces (judge/sandbox/seccomp.py, the launcher's deny-list and the runner's
lockdown, loaded on every track before any submission code runs).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from judge.sandbox.seal import RuntimeRule


class Status(StrEnum):
    RUNTIME = "runtime"
    CANDIDATE = "candidate"
    STATIC_ONLY = "static_only"


@dataclass(frozen=True)
class Decision:
    rule: RuntimeRule
    status: Status
    evidence: str


_R, _C, _S = Status.RUNTIME, Status.CANDIDATE, Status.STATIC_ONLY
_RULE = RuntimeRule

_CPU_EVIDENCE = (
    "the CPU runner imports everything it needs before the seal (the child switches torch's "
    "deterministic algorithms once before it, f81c5c0) and runs under every rule: "
    "tests/judge/sandbox/test_seal.py and the corpus judge the CPU track sealed"
)

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

TRACK_SEAL: dict[str, tuple[Decision, ...]] = {
    "cpu": tuple(Decision(rule, _R, _CPU_EVIDENCE) for rule in RuntimeRule),
    "cuda": (
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
    ),
    "npu": (
        Decision(_RULE.SIGNAL_HANDLERS, _S,
                 "CANN's log library sets a SIGPIPE action around every write to its log socket "
                 "(hicann/runtime src/dfx/log/liblog/slog/dlog_core.c, DlogWriteToSocket, at "
                 "681ef76); its trace library installs handlers for SIGSEGV, SIGBUS... when "
                 "loaded and puts the old ones back when one arrives, so a kernel's honest fault "
                 "would be SV instead of RE (src/dfx/trace/atrace/utrace/stacktrace/"
                 "stacktrace_signal.c); the driver's user library sets SIGUSR1 on buffer-pool use "
                 "and SIGUSR2 at queue init (hicann/driver src/ascend_hal/buff/dc/comm/"
                 "buff_recycle/buff_recycle.c, src/ascend_hal/queue/dc/core/queue_user_manage.c, "
                 "at ef377e9)"),
        Decision(_RULE.EXECUTABLE_MEMORY, _C,
                 "neither hicann/runtime (681ef76) nor hicann/driver (ef377e9) asks for PROT_EXEC "
                 "or calls mprotect anywhere in its sources; libascendcl, the graph engine and "
                 "the operator libraries are not all among them"),
        Decision(_RULE.MAPPED_CODE, _S,
                 "the runtime dlopens its parts on demand: libtsdclient.so "
                 "(hicann/runtime src/runtime/core/src/runtime.cc, TsdClientInit), plugins "
                 "'loaded in lazy mode' (src/runtime/core/src/plugin_manage/runtime_keeper.cc), "
                 "a kernel binary when a kernel's name is set (src/runtime/feature/xpu/"
                 "program_plat.cc), the AI CPU scheduler (src/runtime/core/src/utils/"
                 "aicpu_scheduler_agent.cc)"),
        Decision(_RULE.FILE_WRITES, _S,
                 "every plog record opens its log file O_CREAT|O_WRONLY|O_APPEND (hicann/runtime "
                 "src/dfx/log/liblog/slog/plog/plog_file_mgr.c, PlogWrite); the driver opens its "
                 "memory-pool device O_RDWR when a pool is first used (hicann/driver "
                 "src/ascend_hal/buff/dc/ascend_hal_base/buff_manage_kernel_api.c)"),
        Decision(_RULE.NEW_FILTERS, _R,
                 "no seccomp filter is loaded in hicann/runtime or hicann/driver's host sources "
                 "(the driver's AI CPU scheduler names libseccomp only in its CMake files)"),
        Decision(_RULE.SHARED_MEMORY, _S,
                 "CANN's log library creates SysV shared memory (hicann/runtime v8.5.0 "
                 "src/dfx/log/utils/share_mem.c, shmget) and the runtime maps host shared memory "
                 "with shm_open (src/runtime/feature/src/drv/npu_driver_mem.cc), both after start-up"),
    ),
}


def decisions(backend: str) -> tuple[Decision, ...]:
    """The decisions of a track, by its backend's name ('cpu', 'cuda', 'npu')."""
    return TRACK_SEAL[backend]


def rules_with(backend: str, status: Status) -> tuple[RuntimeRule, ...]:
    return tuple(d.rule for d in TRACK_SEAL[backend] if d.status is status)


def runtime_rules(backend: str) -> tuple[RuntimeRule, ...]:
    """What the track's runner is sealed with (`Track.runtime_rules`)."""
    return rules_with(backend, Status.RUNTIME)
