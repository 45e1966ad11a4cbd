"""Whether a process named by a pid in one of our records (a restore's journal, a
push's temporary refs, an index lock set_stats took) still runs. Standard library only.
"""

from __future__ import annotations

import os


def running(pid: int) -> bool:
    """Whether process `pid` runs: it exists and is no zombie (a zombie holds nothing
    and writes nothing more; it only waits for its parent to read its end). A process
    whose first thread ended while another runs on shows as a zombie too: it runs. A
    process of another user counts as running; this one does too."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            if fh.read().rsplit(b")", 1)[1].split()[0] != b"Z":
                return True
        return _threads(pid) > 1  # its first thread ended, another runs on
    except FileNotFoundError:
        return False
    except (OSError, IndexError, ValueError):
        pass  # (no /proc here)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # (another user's)
        return True
    return True


def _threads(pid: int) -> int:
    """The threads /proc counts in process `pid`, its zombie first thread included."""
    with open(f"/proc/{pid}/status", "rb") as fh:
        for line in fh:
            if line.startswith(b"Threads:"):
                return int(line.split()[1])
    return 1
