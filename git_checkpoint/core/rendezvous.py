"""Where a client and the command server of its installation meet: the folder of this
user's servers, the socket named by the installation's identity, and the wire format
they speak (entry/relay.py and entry/client.c are the clients, entry/server.py the
server, app/server.py shows and stops it).

Wire format (one Unix stream socket per command): the client sends b"GCP1", the body's
length (4 bytes, big-endian) and the body: NUL-separated identity, role, working
directory, umask (octal), the signals it ignores (comma-separated numbers), the number
of arguments, the arguments, then the environment (K=V); the first byte goes with its
stdin, stdout and stderr (SCM_RIGHTS). The server
answers b"P" + the worker's pid (4 bytes) or b"R" (refused: run it yourself), and
when the worker ends b"X" + its exit code or b"S" + the signal that killed it.

Standard library only: the hook path loads it.
"""

from __future__ import annotations

import os
import sys

OFF = "GIT_CHECKPOINT_SERVER"  # "off": every command runs in its own process
MISSED = "GIT_CHECKPOINT_SERVER_MISSED"  # the compiled client found no server: start one
IDLE = "GIT_CHECKPOINT_SERVER_IDLE"  # seconds the server waits for a command (600)
MAGIC = b"GCP2"
ROLES = ("cli", "hook")


def identity() -> str:
    """What makes two processes the same installation: the interpreter and the path it
    imports from. A server serves only clients of its own identity."""
    return "\n".join([sys.executable, *sys.path])


def key(ident: str) -> str:
    """The name of an identity's socket (the identity itself is checked on connect)."""
    from zlib import crc32

    return f"{crc32(ident.encode('utf-8', 'surrogateescape')):08x}"


def run_dir(create: bool = False, base: str | None = None) -> str | None:
    """The folder of this user's servers, /tmp/git-checkpoint-UID (or `base`): None
    unless it is a real folder owned by this user that no one else may enter."""
    path = base or f"/tmp/git-checkpoint-{os.getuid()}"
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        if not create:
            return None
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        except OSError:
            return None
        return run_dir(create=False, base=path)
    except OSError:
        return None
    if (st.st_mode & 0o170077) != 0o040000 or st.st_uid != os.getuid():
        return None  # not a folder, or others may reach into it
    return path


def server_file(suffix: str, ident: str | None = None) -> str | None:
    """One of the files of an installation's server: ".sock" (the socket), ".lock"
    (held while it runs, its pid inside), ".log" (its stderr), ".broken" (it could
    not start). None without a folder of this user's alone."""
    where = run_dir()
    return None if where is None else f"{where}/{key(ident or identity())}{suffix}"


def socket_path(ident: str | None = None) -> str | None:
    return server_file(".sock", ident)


def request(role: str, args: list[str], ident: str, ignored: list[int]) -> bytes:
    """The body of a request for `args` (without the program's name); `ignored`: the
    signals this process ignores (nohup, a background job), which the worker ignores."""
    fs = os.fsencode
    mask = b"%o" % _umask()
    fields = [fs(ident), fs(role), fs(os.getcwd()), mask, ",".join(map(str, ignored)).encode()]
    fields.append(b"%d" % len(args))
    fields += [fs(a) for a in args]
    fields += [k + b"=" + v for k, v in os.environb.items()]
    body = b"\0".join(fields)
    return MAGIC + len(body).to_bytes(4, "big") + body


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
