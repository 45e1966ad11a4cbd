"""Runs `git checkpoint` commands in forked children of one process that has already
imported git_checkpoint (an exec of the real entry point spends ~130 ms importing).

Each line on stdin is a JSON request {"argv", "cwd", "env", "out", "err"}; the child is
the git-checkpoint process the fault-injecting git kills. Each reply line is the child's
exit status as subprocess gives it (-9 when killed) and the CPU seconds its children
have used so far.
"""

import contextlib
import importlib
import json
import os
import resource
import signal
import sys

from git_checkpoint.entry.cli import main
from git_checkpoint.entry.cmdline import CommandLine
from git_checkpoint.fast import prescan

# What the product imports on first use: paid once here. A module that does not import
# (the tree is mid-edit) is left to fail in the child, as it would in a real run.
for _name in (
    "pygit2",
    "yaml",
    "git_checkpoint.restore.run",
    "git_checkpoint.app.restore",
    "git_checkpoint.app.undo",
    "git_checkpoint.app.save",
    "git_checkpoint.app.drop",
    "git_checkpoint.app.status",
):
    with contextlib.suppress(Exception):
        importlib.import_module(_name)


# File system calls of the product itself (writes between two git calls): with FI_FS_LOG
# each is logged (with "[failed: …]" when it raised); with FI_FS_KILL_AT=N the child
# SIGKILLs itself instead of making the N-th. Writes git makes are the wrapper's business;
# open()+write of a new temp file is not counted, the rename that publishes it is.
FS_CALLS = (
    "write",
    "rename",
    "replace",
    "unlink",
    "remove",
    "rmdir",
    "mkdir",
    "symlink",
    "link",
    "chmod",
    "truncate",
    "ftruncate",
)


def watch_fs(kill_at: int, log_path: str) -> None:
    log = open(log_path, "a")  # noqa: SIM115 - lives as long as the child
    count = [0]

    def wrap(name: str, real):  # type: ignore[no-untyped-def]
        def call(*args, **kwargs):  # type: ignore[no-untyped-def]
            count[0] += 1
            if count[0] == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
            what = args[0] if args else ""
            if isinstance(what, int):  # a file descriptor: name its file
                with contextlib.suppress(OSError):
                    what = os.readlink(f"/proc/self/fd/{what}")
            try:
                result = real(*args, **kwargs)
            except OSError as exc:
                log.write(f"{name} {what} [failed: {type(exc).__name__}]\n")
                log.flush()
                raise
            log.write(f"{name} {what}\n")
            log.flush()
            return result

        return call

    for name in FS_CALLS:
        setattr(os, name, wrap(name, getattr(os, name)))


def child(request: dict) -> None:
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    for fd, name, flags in (
        (0, os.devnull, os.O_RDONLY),
        (1, request["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
        (2, request["err"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
    ):
        os.dup2(os.open(name, flags, 0o644), fd)
    sys.argv = ["git-checkpoint", *request["argv"]]
    if os.environ.get("FI_FS_LOG"):
        watch_fs(int(os.environ.get("FI_FS_KILL_AT") or 0), os.environ["FI_FS_LOG"])
    code = 0
    cmdline = CommandLine(request["argv"])
    early = prescan.start() if cmdline.scans_early else None  # as launch.main does
    try:
        main(cmdline, early)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # as an uncaught exception would
        import traceback

        traceback.print_exc()
        code = 1
    if early is not None:
        early.discard()  # as console.exit_now does
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


for line in sys.stdin:
    request = json.loads(line)
    pid = os.fork()
    if pid == 0:
        child(request)
    _, status = os.waitpid(pid, 0)
    code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(code, used.ru_utime + used.ru_stime, flush=True)
