"""`opjudge doctor`'s checks of the CUDA track (judge/doctor.py): nvcc, a GPU torch sees, true float32."""

from __future__ import annotations

import os
from collections.abc import Mapping

from judge.doctor import Unavailable, toolchain_version
from judge.host_config import HostConfig
from judge.tracks import DoctorCheck


def _cuda_device() -> str:
    import torch

    if not torch.cuda.is_available():
        build = "a CPU-only torch build" if torch.version.cuda is None else f"torch built for CUDA {torch.version.cuda}"
        raise Unavailable(f"no CUDA GPU visible to torch ({build})")
    return f"{torch.cuda.device_count()} GPU(s), first: {torch.cuda.get_device_name(0)}"


def _cuda_float32(environ: Mapping[str, str]) -> str:
    from judge.track_settings.cuda import CudaSettings
    from judge.tracks.cuda import refuse_tf32_override

    refuse_tf32_override(CudaSettings.from_env(environ))
    return "true float32 (TF32 not forced)"


def doctor_checks(host: HostConfig) -> list[DoctorCheck]:
    return [("compiler", lambda: toolchain_version("cuda", host)), ("device", _cuda_device),
            ("float32 matmul", lambda: _cuda_float32(os.environ))]
