"""The CUDA track's settings (base.py: how a setting is declared).

Every setting read from a variable is that variable of the worker's own environment, and the
runner child (whose environment starts empty) gets it back (`child_environment`): it then sees
the very GPU the worker's own torch calls "cuda", where the checker makes the inputs again and
the oracle runs, with the same cuBLAS settings, so the two make the same input bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from judge.track_settings.base import TrackSettings, setting


def _view(variable: str, meaning: str) -> str | None:
    return setting(None, env=variable, empty_is_a_value=True, meaning=meaning)  # type: ignore[no-any-return]


@dataclass(frozen=True)
class CudaSettings(TrackSettings):
    track: ClassVar[str] = "cuda"

    visible_devices: str | None = _view("CUDA_VISIBLE_DEVICES", "the GPUs this worker sees; it judges on the first")
    device_order: str | None = _view("CUDA_DEVICE_ORDER", "how those GPUs are numbered (PCI_BUS_ID: as nvidia-smi)")
    cublas_workspace_config: str | None = _view("CUBLAS_WORKSPACE_CONFIG", "cuBLAS's workspace (its determinism)")
    nvidia_tf32_override: str | None = _view("NVIDIA_TF32_OVERRIDE", "the driver's TF32 switch")
    torch_allow_tf32_cublas_override: str | None = _view(
        "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "torch's forced TF32 in float32 matmuls (refused when set)")
    gpu_name: str | None = setting(None, meaning="the GPU's name where nvidia-smi cannot tell (the peak table)")
    # The toolkit the worker builds with (judge/tracks/cuda/toolchain.py); the runner child loads what it built.
    home: Path | None = setting(None, env="OPJUDGE_CUDA_HOME",
                                meaning="where nvcc lives (<home>/bin/nvcc); unset: the usual roots, then PATH")
    arch: str | None = setting(None, env="OPJUDGE_CUDA_ARCH",
                               meaning="the GPU architecture nvcc builds for (e.g. sm_80); unset: sm_90a")

    # Read by the worker's build only, never given to the runner child.
    BUILD_ONLY: ClassVar[frozenset[str]] = frozenset({"home", "arch"})

    def child_environment(self) -> dict[str, str]:
        """The variables the runner child gets: each set one of the GPU's view and numerics, under its own name."""
        return {item.declaration.env[0]: getattr(self, item.name) for item in self.declared().values()
                if item.declaration.env and item.name not in self.BUILD_ONLY and getattr(self, item.name) is not None}


SETTINGS = CudaSettings
