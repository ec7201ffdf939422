"""Seccomp filters of the sandbox (docs/security.md, "3. Sandbox"), built with libseccomp through pyseccomp.

Two filters, both "allow by default, kill on the listed calls":

- the **deny-list**, loaded by the launcher before it executes anything in the
  sandbox (compilers and the runner child): calls a kernel never needs and that
  reach the network, other processes, the kernel's configuration or new
  namespaces;
- the **runner lockdown** (judge/sandbox/lockdown.py), stacked by the runner
  child on top once it has imported what it needs: no new process and no new
  program can start, only threads.

A forbidden call kills the whole process with SIGSYS (`SCMP_ACT_KILL_PROCESS`):
a submission cannot catch it, and the caller sees `returncode == -SIGSYS`,
which it reports as SV (see `violation_from_returncode`). Calls made through
another ABI (i386 `int 0x80`, x32) are killed the same way, because the filters
accept the native architecture only.
"""

from __future__ import annotations

import errno
import os
import signal

# Calls that reach the network, other processes, kernel state or namespaces.
# A kernel (and a compiler) needs none of them; each is killed on sight.
DENIED_SYSCALLS: tuple[str, ...] = (
    # network (socketpair stays: it reaches nothing outside the process tree; `socket` is
    # handled apart, see _add_denylist)
    "connect", "bind", "listen", "accept", "accept4",
    # other processes' memory and file descriptors
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
    # namespaces, mounts, the file system tree
    "unshare", "setns", "mount", "umount2", "pivot_root", "chroot",
    "fsopen", "fsmount", "fsconfig", "fspick", "move_mount", "open_tree", "mount_setattr",
    "open_by_handle_at", "name_to_handle_at",
    # kernel programming and observation
    "bpf", "perf_event_open", "userfaultfd", "fanotify_init", "lookup_dcookie", "syslog",
    # io_uring runs operations the filter never sees
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    # kernel keyring
    "keyctl", "add_key", "request_key",
    # modules, kexec, machine state, clocks
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
    "reboot", "swapon", "swapoff", "acct", "quotactl", "iopl", "ioperm", "vhangup",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
    "sethostname", "setdomainname",
)  # fmt: skip

# clone flags that create namespaces: clone() with one of them is `unshare` in disguise.
_CLONE_NEW_FLAGS = (
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
    0x00000080,  # CLONE_NEWTIME
)
_CLONE_THREAD = 0x00010000
AF_UNIX = 1

# The runner lockdown kills these outright: nothing may start a program or a process.
_LOCKDOWN_KILLED = ("execve", "execveat", "fork", "vfork")


def _new_filter():  # type: ignore[no-untyped-def]
    """An allow-by-default filter that kills foreign ABIs and syncs every thread."""
    import pyseccomp as sc

    flt = sc.SyscallFilter(sc.ALLOW)
    # Every thread of the process gets the filter, not only the caller (OpenMP
    # and torch threads already exist when the runner locks itself down).
    flt.set_attr(sc.Attr.CTL_TSYNC, 1)
    flt.set_attr(sc.Attr.ACT_BADARCH, sc.KILL_PROCESS)
    try:
        # Do not let loading a filter switch on Speculative Store Bypass Disable (kernels booted
        # with spec_store_bypass_disable=seccomp): it slows memory-bound kernels down, and the
        # sandboxed process holds no secret worth that price (the baseline runs beside it anyway).
        flt.set_attr(sc.Attr.CTL_SSB, 1)
    except OSError:
        pass  # libseccomp older than 2.5: the kernel's default applies
    return flt


def _add_denylist(flt) -> None:  # type: ignore[no-untyped-def]
    import pyseccomp as sc

    for name in DENIED_SYSCALLS:
        try:
            flt.add_rule(sc.KILL_PROCESS, name)
        except (OSError, ValueError):
            # A call this kernel or libseccomp does not know cannot be made either.
            continue
    # socket(): any network family kills. A local (AF_UNIX) one fails with EACCES instead: the
    # CUDA driver tries to reach the MPS control daemon that way when it starts, and carries on
    # without it when refused. Refused, it reaches nothing either.
    flt.add_rule(sc.ERRNO(errno.EACCES), "socket", sc.Arg(0, sc.EQ, AF_UNIX))
    flt.add_rule(sc.KILL_PROCESS, "socket", sc.Arg(0, sc.NE, AF_UNIX))
    for flag in _CLONE_NEW_FLAGS:
        flt.add_rule(sc.KILL_PROCESS, "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    # clone3 passes its flags in memory, which a filter cannot read: refuse it
    # with ENOSYS so that glibc falls back to clone(), whose flags are checked.
    flt.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")


def load_denylist() -> None:
    """Install the deny-list on the calling process (all threads); it cannot be removed."""
    flt = _new_filter()
    _add_denylist(flt)
    flt.load()


def load_lockdown(pid: int | None = None) -> None:
    """Install the runner lockdown: the deny-list, plus no process or program creation.

    Only threads can be made (clone with CLONE_THREAD); signals can be sent to
    this process only (`pid`, default the caller), so that even without a pid
    namespace it cannot signal the worker.
    """
    import pyseccomp as sc

    own = os.getpid() if pid is None else pid
    flt = _new_filter()
    _add_denylist(flt)
    for name in _LOCKDOWN_KILLED:
        flt.add_rule(sc.KILL_PROCESS, name)
    flt.add_rule(sc.KILL_PROCESS, "clone", sc.Arg(0, sc.MASKED_EQ, _CLONE_THREAD, 0))
    eperm = sc.ERRNO(errno.EPERM)
    for name in ("kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"):
        flt.add_rule(eperm, name, sc.Arg(0, sc.NE, own))
    for name in ("tkill", "pidfd_open", "pidfd_send_signal"):
        flt.add_rule(eperm, name)
    flt.load()


def seccomp_available() -> str | None:
    """None when libseccomp can be used here, else the reason it cannot."""
    try:
        import pyseccomp as sc

        sc.SyscallFilter(sc.ALLOW)
    except Exception as exc:  # noqa: BLE001 - any failure means "not usable", with its reason
        return f"{type(exc).__name__}: {exc}"
    return None


def violation_from_returncode(returncode: int) -> str | None:
    """What the sandbox caught, from a process's return code (negative: killed by a signal)."""
    if returncode == -signal.SIGSYS:
        return "seccomp: the program made a forbidden system call and was stopped (SIGSYS)"
    return None
