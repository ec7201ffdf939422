"""The CPU track's profiler (judge/profiling/context.py's seam): threads and hardware counters."""

from judge.profiling.cpu import profile_case as profile_case
