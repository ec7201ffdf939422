"""What runs inside the sandboxed runner child (`python -m judge.runner.child`).

- `main.py`: the child itself: reads the worker's commands, loads the built libraries, makes
  each call's inputs from the seed and calls `kernel_run`, and sends back the raw outputs.
- `kernel.py`: a built kernel library as the child loads it, and the faults that are the
  submission's.
- `guard.py`: the checks around one call against work deferred past the clock.
- `fpenv.py`, `openmp.py`: the floating-point and OpenMP state each call starts from.
- `threads.py`: the child's watch on its own threads (new ones, late work).

Nothing here is imported by the worker: the worker's side is `judge/runner/session.py`.
"""

import os

# The CPUs this process may use, read before torch loads its OpenMP runtime, which binds the main
# thread to the first of its places (OMP_PROC_BIND): a held call's inputs are made on any of
# them, so a timed pair's two children prepare at once (main.py, `Child.call`).
ALLOWED_CPUS = frozenset(os.sched_getaffinity(0))
