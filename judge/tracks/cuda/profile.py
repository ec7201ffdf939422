"""The CUDA track's profiler (judge/profiling/context.py's seam): Nsight Compute's speed-of-light
summary from one untimed pass, where `ncu` is installed.

The command line and the CSV's parsing are judge/tracks/cuda/ncu.py's (`ncu_prefix(kernel_regex,
out_path, launch_count) -> list[str]`, the tool's path first, writing its CSV report to `out_path`, and
`parse_ncu_csv(text) -> ProfileSection`); this module only runs the pass and is safe without them.
"""

from __future__ import annotations

from judge.profiling import ProfileSection, unavailable
from judge.profiling.context import ProfileContext
from judge.profiling.device import one_profiled_pass, run_folder, tool_path

TOOL = "ncu"
KERNEL_REGEX: str | None = None  # every kernel the submission launches in the profiled call
LAUNCH_COUNT = 8  # launches profiled: ncu stops after this many, a kernel_run may launch a few


def profile_case(ctx: ProfileContext) -> list[ProfileSection]:
    try:
        from judge.tracks.cuda.ncu import ncu_prefix, parse_ncu_csv
    except ImportError:
        return [unavailable(TOOL, "this judge has no Nsight Compute support (judge/tracks/cuda/ncu.py)")]
    found = tool_path(TOOL)
    if found is None:
        return [unavailable(TOOL, "ncu is not installed on this worker")]
    report = run_folder(ctx) / "ncu.csv"
    prefix = ncu_prefix(KERNEL_REGEX, report, LAUNCH_COUNT)
    prefix[0] = found if prefix and prefix[0] == TOOL else prefix[0]
    one_profiled_pass(ctx, prefix)
    if not report.exists() or not report.stat().st_size:
        return [unavailable(TOOL, "ncu wrote no report (no kernel matched, or the tool failed in the sandbox)")]
    return [parse_ncu_csv(report.read_text(errors="replace"))]
