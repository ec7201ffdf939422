"""The runner child's last step before it loads a submission: no new process, ever (docs/security.md, layer 4).

`restrict_runner()` is called by `judge.runner.child.main` once it has imported torch
and numpy (they may start threads and read files while importing) and BEFORE
it dlopens the submission: a load-time constructor then already runs locked
down. It stacks a seccomp filter on whatever the launcher installed:

- execve/execveat, fork/vfork and clone without CLONE_THREAD kill the process
  (SIGSYS, reported as SV): only threads can be made, so OpenMP and torch
  pools keep working, but no program can start and nothing can outlive the
  child in another process;
- clone3 answers ENOSYS (its flags are out of a filter's reach; glibc then
  uses clone);
- signals reach this process only (kill/tgkill/sigqueue to another pid: EPERM);
- the sandbox deny-list again, so the lockdown holds under `off` too.

Seccomp filters cannot be removed, and every thread gets this one (TSYNC).
"""

from __future__ import annotations

from judge.sandbox.seccomp import load_lockdown


def restrict_runner() -> None:
    """Lock the calling process down for good; raises OSError when seccomp cannot be loaded."""
    load_lockdown()
