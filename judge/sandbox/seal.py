"""The runner child's runtime rules once the submission's library is loaded (docs/security.md, 4b).

The static checks (judge/policy/) refuse what a source names and what a library imports, but
they are not a wall: from the address of any allowed import (malloc) a kernel can walk a loaded
library's ELF tables to `sigaction`, `mprotect`, `dlsym` or the interpreter's C API, with nothing
imported and every name in a string literal. So what a kernel must never do is also refused by
the process itself, with a seccomp filter stacked on the lockdown (judge/sandbox/lockdown.py)
right after the libraries are loaded, before any of their functions is called:

- `signal_handlers`: no new signal action (rt_sigaction with a new action kills; reading one is
  allowed). A handler is how deferred work runs after the clock stops (a fault on protected
  outputs computes them) and how a kernel survives its own faults.
- `executable_memory`: no memory made executable: anonymous mmap with PROT_EXEC, mprotect and
  pkey_mprotect with PROT_EXEC, shmat with SHM_EXEC, `personality` changes such as
  READ_IMPLIES_EXEC. Code written at run time is code no check has read: `rdtsc`, `syscall`,
  anything. glibc's loader never needs these (it maps code from the file, and makes only the
  stack of a library that asks for one executable, which the library policy refuses).
- `mapped_code`: no code mapped from a file (mmap with PROT_EXEC and a descriptor): that is how
  dlopen maps a library, so the rule waits until the submission's are loaded; dlopen from the
  kernel is refused with it. A device runtime that loads its plugins lazily needs it off.
- `file_writes`: no file opened for writing (open/openat with write access, creat; openat2,
  whose flags a filter cannot read, answers ENOSYS). Above all /proc/self/mem, whose writes
  ignore page protections: a kernel could patch the runner's code or read-only data with it,
  without mprotect (pygpubench's proc_mem_bypass). The runner's own files are open by then.
- `new_filters`: no further seccomp filter (seccomp(), prctl(PR_SET_SECCOMP)), which could make
  the runner's own system calls fail on the kernel's terms.
- `shared_memory`: no memory outside the address-space limit: memfd_create (its pages are shmem,
  not the process's RLIMIT_AS; a kernel kept 2 GiB in memfds for a run) and SysV shmget (no
  per-segment bound). A kernel gets its memory from malloc and the workspace.

Processes, programs, other processes' memory, sockets, perf counters, ptrace and namespaces are
refused from the start by the launcher's deny-list and the lockdown (judge/sandbox/seccomp.py).
What no filter can see (the vDSO clock, writes into the runner's own memory, the C API) is
checked by the worker, which never trusts the child's account.

A refused call kills the process with SIGSYS (`SCMP_ACT_KILL_PROCESS`): verdict SV. Each track
says which rules it can bear (`Track.runtime_rules`), from its decisions (judge/tracks/<backend>/seal.py,
statuses in judge/sandbox/seal_tracks.py), which cite for every rule what its runtime does after it started.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable
from enum import StrEnum

PROT_EXEC = 0x4
MAP_ANONYMOUS = 0x20
O_ACCMODE = 0o3
SHM_EXEC = 0o100000
PR_SET_SECCOMP = 22
PERSONALITY_QUERY = 0xFFFFFFFF


class RuntimeRule(StrEnum):
    SIGNAL_HANDLERS = "signal_handlers"
    EXECUTABLE_MEMORY = "executable_memory"
    MAPPED_CODE = "mapped_code"
    FILE_WRITES = "file_writes"
    NEW_FILTERS = "new_filters"
    SHARED_MEMORY = "shared_memory"


ALL_RULES: tuple[RuntimeRule, ...] = tuple(RuntimeRule)


def _add_rules(flt, rule: RuntimeRule) -> None:  # type: ignore[no-untyped-def]
    import pyseccomp as sc

    kill = sc.KILL_PROCESS
    if rule is RuntimeRule.SIGNAL_HANDLERS:
        flt.add_rule(kill, "rt_sigaction", sc.Arg(1, sc.NE, 0))  # a new action; NULL only reads
    elif rule is RuntimeRule.EXECUTABLE_MEMORY:
        flt.add_rule(kill, "mmap", sc.Arg(2, sc.MASKED_EQ, PROT_EXEC, PROT_EXEC),
                     sc.Arg(3, sc.MASKED_EQ, MAP_ANONYMOUS, MAP_ANONYMOUS))
        for name in ("mprotect", "pkey_mprotect"):
            flt.add_rule(kill, name, sc.Arg(2, sc.MASKED_EQ, PROT_EXEC, PROT_EXEC))
        flt.add_rule(kill, "shmat", sc.Arg(2, sc.MASKED_EQ, SHM_EXEC, SHM_EXEC))
        flt.add_rule(kill, "personality", sc.Arg(0, sc.NE, PERSONALITY_QUERY))
    elif rule is RuntimeRule.MAPPED_CODE:
        flt.add_rule(kill, "mmap", sc.Arg(2, sc.MASKED_EQ, PROT_EXEC, PROT_EXEC),
                     sc.Arg(3, sc.MASKED_EQ, MAP_ANONYMOUS, 0))
    elif rule is RuntimeRule.FILE_WRITES:
        flt.add_rule(kill, "open", sc.Arg(1, sc.MASKED_EQ, O_ACCMODE, os.O_WRONLY))
        flt.add_rule(kill, "open", sc.Arg(1, sc.MASKED_EQ, O_ACCMODE, os.O_RDWR))
        flt.add_rule(kill, "openat", sc.Arg(2, sc.MASKED_EQ, O_ACCMODE, os.O_WRONLY))
        flt.add_rule(kill, "openat", sc.Arg(2, sc.MASKED_EQ, O_ACCMODE, os.O_RDWR))
        flt.add_rule(kill, "creat")
        flt.add_rule(sc.ERRNO(errno.ENOSYS), "openat2")
    elif rule is RuntimeRule.NEW_FILTERS:
        flt.add_rule(kill, "seccomp")
        flt.add_rule(kill, "prctl", sc.Arg(0, sc.EQ, PR_SET_SECCOMP))
    elif rule is RuntimeRule.SHARED_MEMORY:
        for name in ("memfd_create", "shmget"):
            flt.add_rule(kill, name)


def build_seal(rules: Iterable[RuntimeRule | str]):  # type: ignore[no-untyped-def]
    """The filter of `rules`, not loaded (a test can export it and read what it refuses)."""
    import pyseccomp as sc

    flt = sc.SyscallFilter(sc.ALLOW)
    flt.set_attr(sc.Attr.CTL_TSYNC, 1)
    try:
        flt.set_attr(sc.Attr.CTL_SSB, 1)  # as judge/sandbox/seccomp.py: no speculation mitigation cost
    except OSError:
        pass
    for rule in dict.fromkeys(RuntimeRule(r) for r in rules):
        _add_rules(flt, rule)
    return flt


def seal_runner(rules: Iterable[RuntimeRule | str]) -> None:
    """Stack the filter of `rules` on every thread of the calling process, for good.

    Raises OSError when seccomp cannot load it; does nothing for no rules."""
    chosen = [RuntimeRule(r) for r in rules]
    if not chosen:
        return
    build_seal(chosen).load()
