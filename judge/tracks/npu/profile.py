"""The NPU track's profiler (judge/profiling/context.py's seam): `msprof op` from one untimed pass.

The command line and the output's parsing are judge/tracks/npu/msprof_op.py's
(`msprof_op_prefix(kernel_name, out_dir, launch_count) -> list[str]`, the tool's path first, and
`parse_msprof_op_dir(path) -> ProfileSection`); this module runs the pass, one profiling task per
host at a time, and is safe without them.
"""

from __future__ import annotations

from pathlib import Path

from judge.profiling import ProfileSection, unavailable
from judge.profiling.context import ProfileContext
from judge.profiling.device import one_at_a_time, one_profiled_pass, run_folder, tool_path
from judge.tracks.npu.project import kernel_names_beside

TOOL = "msprof"
# msprof op at CANN 8.x takes kernel names of [A-Za-z0-9_] joined by "|" and matches them by prefix (the
# "*" wildcard is in 2026 msOpProf documents only); without a name it profiles only the first kernel
# launched. The build records the submission's kernel names beside its library (project.py), and all of
# them are named. LAUNCH_COUNT caps the launches profiled (1..100 at 8.x): a few kernels per call.
LAUNCH_COUNT = 8


def kernel_filter(library: Path) -> str | None:
    """msprof op's --kernel-name for the kernels the build of `library` recorded; None if it recorded none."""
    names = kernel_names_beside(library)
    return "|".join(dict.fromkeys(names)) if names else None


def profile_case(ctx: ProfileContext) -> list[ProfileSection]:
    try:
        from judge.tracks.npu.msprof_op import msprof_op_prefix, parse_msprof_op_dir
    except ImportError:
        return [unavailable(TOOL, "this judge has no msprof op support (judge/tracks/npu/msprof_op.py)")]
    found = tool_path(TOOL)
    if found is None:
        return [unavailable(TOOL, "msprof is not installed on this worker")]
    names = kernel_filter(ctx.session.libraries["submission"])
    if names is None:
        return [unavailable(TOOL, "the build recorded no kernel names to give msprof op (it profiles named "
                                  "kernels only)")]
    out_dir = run_folder(ctx) / "msprof"
    out_dir.mkdir(parents=True, exist_ok=True)
    prefix = msprof_op_prefix(names, out_dir, LAUNCH_COUNT)
    prefix[0] = found if prefix and prefix[0] == TOOL else prefix[0]
    with one_at_a_time(TOOL):
        one_profiled_pass(ctx, prefix)
    return [parse_msprof_op_dir(out_dir)]
