"""The NPU track's profiler (judge/profiling/context.py's seam): `msprof op` from one untimed pass.

The command line and the output's parsing are judge/tracks/npu/msprof_op.py's
(`msprof_op_prefix(kernel_name, out_dir, launch_count) -> list[str]`, the tool's path first, and
`parse_msprof_op_dir(path) -> ProfileSection`); this module runs the pass, one profiling task per
host at a time, and is safe without them.
"""

from __future__ import annotations

from judge.profiling import ProfileSection, unavailable
from judge.profiling.context import ProfileContext
from judge.profiling.device import one_at_a_time, one_profiled_pass, run_folder, tool_path

TOOL = "msprof"
# Every kernel the submission launches in the profiled call: msprof op matches names by prefix and
# takes "*" as a wildcard (MindStudio msprof op guide, see docs/profiles.md); without a name it
# profiles only the first kernel launched. Team kernels have names of their own choosing.
KERNEL_NAME = "*"
LAUNCH_COUNT = 8  # kernel launches profiled: a tiling kernel may launch a few per call


def profile_case(ctx: ProfileContext) -> list[ProfileSection]:
    try:
        from judge.tracks.npu.msprof_op import msprof_op_prefix, parse_msprof_op_dir
    except ImportError:
        return [unavailable(TOOL, "this judge has no msprof op support (judge/tracks/npu/msprof_op.py)")]
    found = tool_path(TOOL)
    if found is None:
        return [unavailable(TOOL, "msprof is not installed on this worker")]
    out_dir = run_folder(ctx) / "msprof"
    out_dir.mkdir(parents=True, exist_ok=True)
    prefix = msprof_op_prefix(KERNEL_NAME, out_dir, LAUNCH_COUNT)
    prefix[0] = found if prefix and prefix[0] == TOOL else prefix[0]
    with one_at_a_time(TOOL):
        one_profiled_pass(ctx, prefix)
    return [parse_msprof_op_dir(out_dir)]
