"""The runner: a child process that loads a built kernel and calls it, and the
worker-side sessions that drive it. The child holds no oracle data.

- Worker side (the judge's process): `session.py` (start the child in the sandbox and
  drive it), `baseline_session.py` (the baseline's own child), `spec.py` (what a child is
  started with), `pipes.py` (its pipes' plumbing) and `failures.py` (whose failure a
  child's error is).
- Child side (inside the sandbox): the subpackage `child/`, run as
  `python -m judge.runner.child`.
- Shared by both: `protocol.py` (the typed messages), `framing.py` (their frames on the
  pipe) and `message_checks.py` (the field checks `protocol.py` decodes with).
"""
