"""What a worker of the command server must share with its client beyond the environment
and the streams: the process context the kernel keeps for each process, read from
/proc (Linux).

What confines a process — its groups and capabilities, seccomp and no_new_privs (which
landlock and most sandboxes need), its namespaces, root folder, control groups and
security label — must be the worker's already: a worker cannot take it on, and a
client in a sandbox must not have its command run outside it. Such a client is
refused, and runs its command itself. What a worker can take on, it does: the client's
resource limits (`ulimit`), nice value, CPU affinity, scheduling policy and OOM score
adjustment. Its I/O priority (`ionice`) is not carried over.
"""

from __future__ import annotations

import contextlib
import os
import resource

_STATUS = (
    "Gid:",
    "Groups:",
    "NoNewPrivs:",
    "Seccomp:",
    "CapInh:",
    "CapPrm:",
    "CapEff:",
    "CapBnd:",
    "CapAmb:",
)
_NAMESPACES = ("cgroup", "ipc", "mnt", "net", "pid", "time", "user", "uts")
_LIMITS = [getattr(resource, n) for n in dir(resource) if n.startswith("RLIMIT_")]


def confinement(pid: int | str) -> tuple[str, ...] | None:
    """What confines process `pid` ("self" for this one); None when it cannot be read."""
    base = f"/proc/{pid}"
    try:
        with open(f"{base}/status", encoding="utf-8", errors="replace") as fh:
            status = [line.rstrip() for line in fh if line.startswith(_STATUS)]
        with open(f"{base}/cgroup", encoding="utf-8", errors="replace") as fh:
            groups = fh.read()
        links = [os.readlink(f"{base}/root")]
        for name in _NAMESPACES:
            try:
                links.append(os.readlink(f"{base}/ns/{name}"))
            except FileNotFoundError:  # a kernel without that namespace
                links.append("")
    except OSError:
        return None
    try:
        with open(f"{base}/attr/current", encoding="utf-8", errors="replace") as fh:
            label = fh.read()
    except OSError:
        label = ""  # no security module that labels processes
    return (*status, groups, *links, label)


def adopt(pid: int) -> bool:
    """Whether this process may run a command for process `pid`: the same confinement,
    and `pid`'s resource limits, nice value and CPU affinity taken on (False when a
    limit is above what this process may raise its own to)."""
    mine = confinement("self")
    if mine is None or confinement(pid) != mine:
        return False
    try:
        limits = [(which, resource.prlimit(pid, which)) for which in _LIMITS]
    except OSError:
        return False
    for which, wanted in limits:
        if resource.getrlimit(which) == wanted:
            continue
        try:
            resource.setrlimit(which, wanted)
        except (OSError, ValueError):
            return False
    with contextlib.suppress(OSError):
        nice = os.getpriority(os.PRIO_PROCESS, pid)
        if nice != os.getpriority(os.PRIO_PROCESS, 0):
            os.setpriority(os.PRIO_PROCESS, 0, nice)
    with contextlib.suppress(OSError):
        cpus = os.sched_getaffinity(pid)
        if cpus != os.sched_getaffinity(0):
            os.sched_setaffinity(0, cpus)
    with contextlib.suppress(OSError):
        policy = os.sched_getscheduler(pid)  # SCHED_BATCH, SCHED_IDLE (chrt)
        if policy != os.sched_getscheduler(0):
            os.sched_setscheduler(0, policy, os.sched_getparam(pid))
    with contextlib.suppress(OSError, ValueError):
        with open(f"/proc/{pid}/oom_score_adj") as fh:
            theirs = fh.read().strip()
        with open("/proc/self/oom_score_adj", "r+") as fh:
            if fh.read().strip() != theirs:
                fh.seek(0)
                fh.write(theirs)  # (lowering it needs a privilege: then it stays)
    return True
