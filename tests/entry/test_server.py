"""The command server (entry/server.py) and its clients (entry/relay.py, entry/client.c):
a command handed over runs as it would in its own process — arguments, environment,
working folder, umask, standard streams, exit code, signals — and a server that must not
take it (another installation, changed code, another user's folder) is passed by.

Each test gets an installation of its own: a launcher whose sys.path carries one more,
empty folder, so that its identity, and so its server, is the test's alone (stopped at
the end)."""

from __future__ import annotations

import array
import json
import os
import resource
import select
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from git_checkpoint.core import rendezvous
from git_checkpoint.entry import relay

from ..conftest import Repo

PATHS = [p for p in sys.path if p]


class Install:
    """Launchers of an installation of their own, and its server."""

    def __init__(self, root: Path) -> None:
        self.root = root
        (root / "identity").mkdir(parents=True)
        self.paths = [str(root / "identity"), *PATHS]
        self.identity = "\n".join([sys.executable, *self.paths])
        self.bin = self.launchers(
            f"#!{sys.executable} -IS\nimport sys\nsys.path[:] = {self.paths!r}\n"
        )
        self.socket = rendezvous.socket_path(self.identity)

    def launchers(self, head: str) -> Path:
        """bin/ with both launchers, each `head` and then the call of its entry."""
        folder = self.root / "bin"
        folder.mkdir()
        for name, call in (("git-checkpoint", "launch"), ("git-checkpoint-hook", "hook")):
            script = folder / name
            script.write_text(f"{head}from git_checkpoint.entry.{call} import main\nmain()\n")
            script.chmod(0o755)
        return folder

    def run(
        self,
        repo: Repo,
        *args: str,
        env: dict[str, str] | None = None,
        program: str = "git-checkpoint",
        **kw: object,
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.bin / program), *args],
            cwd=kw.pop("cwd", repo.path),
            env={**os.environ, **(env or {})},
            capture_output=True,
            text=True,
            timeout=60,
            **kw,  # type: ignore[call-overload]
        )

    def own_copy(self) -> Path:
        """Run a copy of the package of its own (to change under a running server)."""
        package = self.root / "copy"
        shutil.copytree(Path(relay.__file__).parents[1], package / "git_checkpoint")
        self.paths.insert(1, str(package))
        self.identity = "\n".join([sys.executable, *self.paths])
        self.socket = rendezvous.socket_path(self.identity)
        for script in self.bin.iterdir():
            text = script.read_text().splitlines()
            text[2] = f"sys.path[:] = {self.paths!r}"
            script.write_text("\n".join(text) + "\n")
        return package

    def state(self, repo: Repo) -> dict[str, object]:
        proc = self.run(repo, "server", "status", "--json")
        assert proc.returncode == 0, proc.stderr
        state: dict[str, object] = json.loads(proc.stdout)
        return state

    def up(self, repo: Repo) -> int:
        """Start the server (a command it takes), wait until it answers; its pid."""
        deadline = time.monotonic() + 30
        self.run(repo, "status")
        while time.monotonic() < deadline:
            state = self.state(repo)
            if state["running"] and self.socket and os.path.exists(self.socket):
                pid = state["pid"]
                assert isinstance(pid, int)
                return pid
            time.sleep(0.05)
        raise AssertionError(f"no server came up: {self.state(repo)}")

    def stop(self, repo: Repo) -> None:
        self.run(repo, "server", "stop")


@pytest.fixture(autouse=True)
def served(monkeypatch: pytest.MonkeyPatch) -> None:
    """The command server on (the other tests run each command in its own process)."""
    monkeypatch.delenv("GIT_CHECKPOINT_SERVER", raising=False)


@pytest.fixture
def install(tmp_path: Path, repo: Repo) -> Iterator[Install]:
    own = Install(tmp_path / "install")
    yield own
    own.stop(repo)


def git_spy(tmp_path: Path, repo: Repo) -> tuple[Path, Path]:
    """A `git` first on PATH that writes down, per call, its parent (the process that ran
    git) and that one's parent."""
    folder = tmp_path / "spy"
    folder.mkdir()
    log = tmp_path / "spy.log"
    real = shutil.which("git")
    (folder / "git").write_text(
        f'#!/bin/sh\necho "$PPID $(ps -o ppid= -p $PPID)" >> {log}\nexec {real} "$@"\n'
    )
    (folder / "git").chmod(0o755)
    return folder, log


def parents(log: Path) -> set[tuple[int, int]]:
    return {(int(a), int(b)) for a, b in (line.split() for line in log.read_text().splitlines())}


def test_a_command_runs_in_a_worker_of_the_server_once_it_is_up(
    install: Install, repo: Repo, tmp_path: Path
) -> None:
    server = install.up(repo)
    spy, log = git_spy(tmp_path, repo)
    repo.write("src/app.py", "print('changed')\n")
    proc = install.run(repo, "save", "-m", "served", env={"PATH": f"{spy}:{os.environ['PATH']}"})
    assert proc.returncode == 0, proc.stderr
    assert "checkpoint saved: cp_001" in proc.stdout
    callers = parents(log)
    assert callers and all(grand == server for _, grand in callers), (callers, server)
    assert all(worker != server for worker, _ in callers)


class EditableInstall(Install):
    """An install as `pip install -e` makes it: launchers that start Python with its site
    step, in a venv whose .pth files put the package on the import path through a finder
    of their own (as setuptools' editable finder does), not through a folder on sys.path."""

    def __init__(self, root: Path) -> None:
        self.root = root
        venv = root / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        (site,) = venv.glob("lib/python*/site-packages")
        checkout = Path(relay.__file__).parents[2]
        deps = [p for p in PATHS if p != str(checkout) and Path(p).is_dir()]
        (site / "deps.pth").write_text("".join(f"{p}\n" for p in deps))
        (site / "editable_finder.py").write_text(
            "import importlib.machinery, sys\n"
            "class Finder:\n"
            "    @classmethod\n"
            "    def find_spec(cls, name, path=None, target=None):\n"
            "        if name != 'git_checkpoint':\n"
            "            return None\n"
            f"        return importlib.machinery.PathFinder.find_spec(name, [{str(checkout)!r}])\n"
            "def install():\n"
            "    sys.meta_path.append(Finder)\n"
        )
        (site / "editable.pth").write_text("import editable_finder; editable_finder.install()\n")
        self.bin = self.launchers(f"#!{venv}/bin/python\n")
        probe = self.bin / "probe"
        probe.write_text(
            f"#!{venv}/bin/python\nimport json, sys\n"
            "print(json.dumps([sys.executable, *sys.path]))\n"
        )
        probe.chmod(0o755)
        found = subprocess.run([str(probe)], capture_output=True, text=True, check=True)
        self.identity = "\n".join(json.loads(found.stdout))
        self.socket = rendezvous.socket_path(self.identity)


def test_an_editable_install_starts_its_server_and_hands_commands_over(
    tmp_path: Path, repo: Repo
) -> None:
    """The package found only through an import hook that site installs: the server
    starts with the site step too, so it comes up and the next save runs in its worker."""
    editable = EditableInstall(tmp_path / "editable")
    try:
        server = editable.up(repo)
        spy, log = git_spy(tmp_path, repo)
        repo.write("src/app.py", "print('changed')\n")
        env = {"PATH": f"{spy}:{os.environ['PATH']}"}
        proc = editable.run(repo, "save", "-m", "served", env=env)
        assert proc.returncode == 0, proc.stderr
        assert {grand for _, grand in parents(log)} == {server}
    finally:
        editable.stop(repo)


def test_a_server_whose_package_cannot_be_imported_is_marked_and_not_started_again(
    install: Install, repo: Repo
) -> None:
    """A launcher that found the package where the server cannot (here: the package
    moved away after the launcher loaded it) leaves the reason in the server's log and
    the mark that keeps the next commands from starting one again for a while."""
    package = install.own_copy()
    (package / "git_checkpoint" / "entry" / "server.py").write_text(
        'raise ImportError("the server module cannot be loaded")\n'
    )
    assert install.socket is not None
    stem = install.socket[: -len(".sock")]
    assert install.run(repo, "status").returncode == 0
    deadline = time.monotonic() + 30
    while not os.path.exists(stem + ".broken") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "the server module cannot be loaded" in Path(stem + ".log").read_text()
    assert not install.state(repo)["running"]


def test_without_a_server_the_command_runs_in_its_own_process(
    install: Install, repo: Repo, tmp_path: Path
) -> None:
    spy, log = git_spy(tmp_path, repo)
    repo.write("src/app.py", "print('changed')\n")
    env = {"PATH": f"{spy}:{os.environ['PATH']}", "GIT_CHECKPOINT_SERVER": "off"}
    proc = install.run(repo, "save", "-m", "alone", env=env)
    assert proc.returncode == 0, proc.stderr
    assert not install.state(repo)["running"]  # off: none was started either
    assert {grand for _, grand in parents(log)} == {os.getpid()}


def test_the_worker_takes_the_clients_environment_folder_and_umask(
    install: Install, repo: Repo
) -> None:
    install.up(repo)
    repo.write("src/new.txt", "new\n")
    repo.cp("save", "-m", "with a new file")
    (repo.path / "src" / "new.txt").unlink()
    # Restore from a subfolder, in a task named by the environment, under umask 077: the
    # file it brings back is written as this process would write it.
    proc = install.run(
        repo,
        "restore",
        "cp_001",
        env={"CHECKPOINT_TASK": "main"},
        cwd=repo.path / "src",
        preexec_fn=lambda: os.umask(0o077),
    )
    assert proc.returncode == 0, proc.stderr
    assert "restored main/cp_001" in proc.stdout
    assert stat.S_IMODE((repo.path / "src" / "new.txt").stat().st_mode) == 0o600
    other = install.run(repo, "save", "-m", "elsewhere", env={"CHECKPOINT_TASK": "other"})
    assert other.returncode == 0, other.stderr
    assert "other" in repo.git("for-each-ref", "refs/checkpoints/other/")


def test_exit_codes_and_one_line_errors_are_the_commands_own(install: Install, repo: Repo) -> None:
    install.up(repo)
    env = {"GIT_CHECKPOINT_SERVER": "off"}
    for args in (["restore", "nope"], ["save", "--bogus"], ["undo"]):
        served = install.run(repo, *args)
        alone = install.run(repo, *args, env=env)
        assert (served.returncode, served.stdout, served.stderr) == (
            alone.returncode,
            alone.stdout,
            alone.stderr,
        ), args
        assert served.returncode != 0 and len(served.stderr.strip().splitlines()) == 1


def bash_call(repo: Repo, command: str) -> str:
    """Claude Code's PreToolUse payload for a Bash command in `repo`."""
    return json.dumps(
        {
            "session_id": "s1",
            "cwd": str(repo.path),
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command},
        }
    )


def test_a_hook_reads_its_payload_from_the_clients_stdin(install: Install, repo: Repo) -> None:
    install.up(repo)
    repo.write("src/app.py", "print('about to be reset')\n")
    payload = bash_call(repo, "git reset --hard")
    proc = install.run(
        repo, "claude-code", "PreToolUse", program="git-checkpoint-hook", input=payload
    )
    assert proc.returncode == 0, proc.stderr
    assert "checkpoint saved" in proc.stderr
    assert repo.git("for-each-ref", "--format=%(refname)", "refs/checkpoints/").strip()


def slow_git(tmp_path: Path, marker: Path) -> Path:
    """A `git` that, on a save's status scan, says it started and then waits."""
    folder = tmp_path / "slow"
    folder.mkdir()
    real = shutil.which("git")
    (folder / "git").write_text(
        "#!/bin/sh\n"
        'case "$*" in *status*) echo $PPID > ' + str(marker) + "; sleep 30;; esac\n"
        f'exec {real} "$@"\n'
    )
    (folder / "git").chmod(0o755)
    return folder


def wait_for(path: Path) -> int:
    """The worker's pid, once its slow git (slow_git) is asleep: a signal sent to the
    worker's group before `sleep` starts could miss it, and then the worker, reading
    git's output to its end, waits for it."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            worker = int(path.read_text())
            if "sleep" in commands_of_group(worker):
                return worker
        time.sleep(0.02)
    raise AssertionError("the worker never reached git")


def commands_of_group(group: int) -> list[str]:
    """The command names of the processes in process group `group`."""
    names = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    stat = fh.read()
            except OSError:
                continue
            name, _, rest = stat.partition(" (")[2].rpartition(") ")
            if int(rest.split()[2]) == group:
                names.append(name)
    return names


def gone(pid: int) -> bool:
    """Whether `pid` ends within seconds (a worker tells its client how it ended just
    before its process is torn down)."""
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not alive(pid)


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):  # gone before, or between open and read
        return False


def slow_save(
    install: Install,
    repo: Repo,
    tmp_path: Path,
    output: int = subprocess.DEVNULL,
    preexec_fn: Callable[[], None] | None = None,
) -> tuple[subprocess.Popen[str], int]:
    """A save handed to the server whose worker waits in its first git call: the
    client, and the worker's pid."""
    install.up(repo)
    marker = tmp_path / "worker"
    repo.write("src/app.py", "print('changed')\n")
    env = {**os.environ, "PATH": f"{slow_git(tmp_path, marker)}:{os.environ['PATH']}"}
    client = subprocess.Popen(
        [str(install.bin / "git-checkpoint"), "save", "-m", "x"],
        cwd=repo.path,
        env=env,
        stdout=output,
        stderr=output,
        text=True,
        preexec_fn=preexec_fn,
    )
    worker = wait_for(marker)
    assert worker != client.pid
    return client, worker


def test_ctrl_c_to_the_client_interrupts_the_worker(
    install: Install, repo: Repo, tmp_path: Path
) -> None:
    client, worker = slow_save(install, repo, tmp_path, output=subprocess.PIPE)
    client.send_signal(signal.SIGINT)
    out, err = client.communicate(timeout=30)
    assert client.returncode == 130, (out, err)
    assert "interrupted" in err
    assert gone(worker)


def test_a_client_killed_takes_its_worker_with_it(
    install: Install, repo: Repo, tmp_path: Path
) -> None:
    client, worker = slow_save(install, repo, tmp_path)
    client.kill()
    client.wait(timeout=10)
    assert gone(worker)


def test_a_worker_killed_by_a_signal_ends_its_client_by_the_same_signal(
    install: Install, repo: Repo, tmp_path: Path
) -> None:
    client, worker = slow_save(install, repo, tmp_path)
    os.kill(worker, signal.SIGKILL)
    assert client.wait(timeout=10) == -signal.SIGKILL


def test_a_changed_module_retires_the_server_and_the_command_still_runs(
    install: Install, repo: Repo, tmp_path: Path
) -> None:
    """An upgrade or an edit of the code under a running server: the server refuses, the
    command runs in its own process with the new code, and a new server follows."""
    package = install.own_copy()
    first = install.up(repo)
    module = package / "git_checkpoint" / "app" / "status.py"
    module.write_text(module.read_text() + "\n# changed\n")
    proc = install.run(repo, "status")
    assert proc.returncode == 0, proc.stderr
    assert gone(first)
    assert install.up(repo) != first


def test_the_server_exits_when_idle(install: Install, repo: Repo) -> None:
    proc = install.run(repo, "status", env={"GIT_CHECKPOINT_SERVER_IDLE": "2"})
    assert proc.returncode == 0
    deadline = time.monotonic() + 20
    seen = False
    while time.monotonic() < deadline:
        state = install.state(repo)
        seen = seen or bool(state["running"])
        if seen and not state["running"]:
            break
        time.sleep(0.05)
    assert seen and not install.state(repo)["running"]
    assert install.socket is not None and not os.path.exists(install.socket)


def ask(path: str, data: bytes, fds: list[int]) -> bytes:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(10)
        conn.connect(path)
        rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds).tobytes())]
        conn.sendmsg([data], rights if fds else [])
        return conn.recv(5)


def test_a_request_of_another_installation_or_malformed_is_refused(
    install: Install, repo: Repo
) -> None:
    install.up(repo)
    assert install.socket is not None
    null = os.open(os.devnull, os.O_RDWR)
    try:
        body = b"\0".join(
            [b"another identity", b"cli", os.fsencode(repo.path), b"22", b"1", b"status"]
        )
        request = rendezvous.MAGIC + len(body).to_bytes(4, "big") + body
        assert ask(install.socket, request, [null, null, null]) == b"R"
        assert ask(install.socket, b"GET / HTTP/1.0\r\n\r\n", []) == b"R"
        assert ask(install.socket, rendezvous.MAGIC + b"\xff\xff\xff\xff", [null]) == b"R"
    finally:
        os.close(null)
    proc = install.run(repo, "status")  # and it still serves
    assert proc.returncode == 0, proc.stderr


def test_a_folder_others_may_enter_is_never_used(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    assert rendezvous.run_dir(base=str(shared)) is None
    shared.chmod(0o700)
    assert rendezvous.run_dir(base=str(shared)) == str(shared)
    link = tmp_path / "link"
    link.symlink_to(shared)
    assert rendezvous.run_dir(base=str(link)) is None


def test_the_quick_check_trusts_a_save_made_by_a_worker(install: Install, repo: Repo) -> None:
    """The server imported the quick check long before the command: what it took as the
    process's start is the command's (else every file written since the server started
    is racy, and an unchanged hook saves in full every time)."""
    install.up(repo)
    repo.write(".checkpoint.yaml", "verifiers: []\n")
    repo.write("src/app.py", "print('changed')\n")
    time.sleep(1.2)  # past the racy window: written before the save began
    assert install.run(repo, "save", "-m", "x").returncode == 0
    state = json.loads((repo.path / ".git" / "checkpoint" / "quick" / "state.json").read_text())
    assert state["config_file"] == "verifiers: []\n"


def test_status_and_stop(install: Install, repo: Repo) -> None:
    pid = install.up(repo)
    shown = install.run(repo, "server")
    assert f"command server: running (pid {pid})" in shown.stdout
    stopped = install.run(repo, "server", "stop")
    assert f"command server stopped (pid {pid})" in stopped.stdout
    assert gone(pid)
    assert "not running" in install.run(repo, "server", "status").stdout


# --- the compiled client ----------------------------------------------------------------


def c_string(text: str) -> str:
    return '"' + "".join(f"\\{b:03o}" for b in os.fsencode(text)) + '"'


@pytest.fixture
def compiled(install: Install, tmp_path: Path) -> Path:
    """entry/client.c built for this test's installation, as install.sh builds it."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    folder = tmp_path / "compiled"
    folder.mkdir()
    config = folder / "client_config.h"
    config.write_text(
        f"#define IDENTITY {c_string(install.identity)}\n"
        f"#define SOCKET_KEY {c_string(rendezvous.key(install.identity))}\n"
        f"#define LAUNCHER {c_string(str(install.bin / 'git-checkpoint'))}\n"
        f"#define HOOK_LAUNCHER {c_string(str(install.bin / 'git-checkpoint-hook'))}\n"
    )
    source = Path(relay.__file__).parents[1] / "entry" / "client.c"
    binary = folder / "git-checkpoint"
    subprocess.run(
        [cc, "-O2", "-Wall", "-Werror", f'-DCONFIG="{config}"', "-o", str(binary), str(source)],
        check=True,
    )
    os.link(binary, folder / "git-checkpoint-hook")
    return folder


def test_the_compiled_client_hands_commands_over_and_exits_as_the_worker(
    install: Install, compiled: Path, repo: Repo, tmp_path: Path
) -> None:
    install.up(repo)
    spy, log = git_spy(tmp_path, repo)
    repo.write("src/app.py", "print('changed')\n")
    env = {**os.environ, "PATH": f"{spy}:{os.environ['PATH']}"}
    proc = subprocess.run(
        [str(compiled / "git-checkpoint"), "save", "-m", "compiled"],
        cwd=repo.path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "checkpoint saved" in proc.stdout
    server = install.state(repo)["pid"]
    assert all(grand == server for _, grand in parents(log))
    bad = subprocess.run(
        [str(compiled / "git-checkpoint"), "restore", "nope"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    alone = install.run(repo, "restore", "nope", env={"GIT_CHECKPOINT_SERVER": "off"})
    assert (bad.returncode, bad.stderr) == (alone.returncode, alone.stderr)


def test_the_compiled_client_runs_the_python_launcher_for_what_it_does_not_hand_over(
    install: Install, compiled: Path, repo: Repo
) -> None:
    for args in (["--version"], ["log"], ["save", "-m", "x"]):
        proc = subprocess.run(
            [str(compiled / "git-checkpoint"), *args],
            cwd=repo.path,
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "GIT_CHECKPOINT_SERVER": "off"},
        )
        assert proc.returncode == 0, (args, proc.stderr)
    assert not install.state(repo)["running"]
    # No server yet: the launcher runs it and starts one for the next command.
    proc = subprocess.run(
        [str(compiled / "git-checkpoint"), "status"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    install.up(repo)


def test_the_compiled_hook_reads_its_payload_through_the_server(
    install: Install, compiled: Path, repo: Repo
) -> None:
    install.up(repo)
    payload = bash_call(repo, "ls -la")
    proc = subprocess.run(
        [str(compiled / "git-checkpoint-hook"), "claude-code", "PreToolUse"],
        cwd=repo.path,
        input=payload,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    wrong = subprocess.run(
        [str(compiled / "git-checkpoint-hook"), "claude-code", "NoSuchEvent"],
        cwd=repo.path,
        input=payload,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert wrong.returncode == 0 and "unknown claude-code event" in wrong.stderr


def test_a_worker_adds_what_it_used_to_the_usage_file(
    install: Install, repo: Repo, tmp_path: Path
) -> None:
    """What a command cost is where it ran: a benchmark asks the worker for it."""
    install.up(repo)
    used = tmp_path / "used"
    repo.write("src/app.py", "print('changed')\n")
    proc = install.run(repo, "save", "-m", "x", env={"GIT_CHECKPOINT_USAGE_FILE": str(used)})
    assert proc.returncode == 0, proc.stderr
    (line,) = used.read_text().splitlines()
    cpu_ms, rss_kb = line.split()
    assert float(cpu_ms) > 0 and int(rss_kb) > 1024


# --- what a command handed over keeps of its own process --------------------------------


def test_a_hook_with_stdin_closed_runs_and_returns(install: Install, repo: Repo) -> None:
    install.up(repo)
    hook = install.bin / "git-checkpoint-hook"
    proc = subprocess.run(
        ["bash", "-c", f"exec {hook} claude-code PreToolUse <&-"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0


@pytest.mark.parametrize(("args", "code"), [("save -m x >&-", 0), ("restore nope 2>&-", 2)])
def test_a_command_with_stdout_or_stderr_closed_ends_as_it_would_alone(
    install: Install, repo: Repo, args: str, code: int
) -> None:
    install.up(repo)
    for i in range(3):
        repo.write("src/app.py", f"print({i})\n")
        proc = subprocess.run(
            ["bash", "-c", f"exec {install.bin / 'git-checkpoint'} {args}"],
            cwd=repo.path,
            capture_output=True,
            timeout=60,
        )
        assert proc.returncode == code, proc.stderr


def test_the_server_keeps_no_descriptor_of_the_command_that_started_it(
    install: Install, repo: Repo
) -> None:
    """A pipe the first command was given sees its end when that command ends, not
    when the server it started goes."""
    proc = subprocess.run(
        ["bash", "-c", f"{install.bin / 'git-checkpoint'} status 5>&1 | cat"],
        cwd=repo.path,
        capture_output=True,
        timeout=30,
    )
    assert proc.returncode == 0


def test_the_server_is_idle_after_many_quick_commands(
    install: Install, compiled: Path, repo: Repo
) -> None:
    """Workers that end before the server has read which client they took are still
    told apart from spares that died: no pid is signalled again and again."""
    pid = install.up(repo)
    hook = str(compiled / "git-checkpoint-hook")
    for _ in range(300):
        subprocess.run(
            [hook, "claude-code", "PreToolUse"],
            input=b"{}",
            cwd=repo.path,
            capture_output=True,
            timeout=60,
        )
    time.sleep(1)

    def ticks() -> int:
        fields = Path(f"/proc/{pid}/stat").read_text().split(")")[1].split()
        return int(fields[11]) + int(fields[12])

    before = ticks()
    time.sleep(2)
    assert (ticks() - before) / os.sysconf("SC_CLK_TCK") < 0.2
    assert len(os.listdir(f"/proc/{pid}/fd")) < 12


def test_a_malformed_request_leaves_no_descriptor_behind(install: Install, repo: Repo) -> None:
    install.up(repo)
    assert install.socket is not None
    read_end, write_end = os.pipe()
    body = b"x\0y\0z"
    fds = array.array("i", [write_end] * 3).tobytes()
    with socket.socket(socket.AF_UNIX) as conn:
        conn.settimeout(10)
        conn.connect(install.socket)
        conn.sendmsg(
            [rendezvous.MAGIC + len(body).to_bytes(4, "big") + body],
            [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)],
        )
        assert conn.recv(5) == b"R"
    os.close(write_end)
    try:
        assert select.select([read_end], [], [], 5)[0], "a worker kept the pipe it was sent"
    finally:
        os.close(read_end)


def test_silent_connections_do_not_hold_up_the_next_command(install: Install, repo: Repo) -> None:
    install.up(repo)
    assert install.socket is not None
    silent = [socket.socket(socket.AF_UNIX) for _ in range(3)]
    for conn in silent:
        conn.connect(install.socket)
    try:
        start = time.monotonic()
        proc = install.run(repo, "status")
        took = time.monotonic() - start
    finally:
        for conn in silent:
            conn.close()
    assert proc.returncode == 0, proc.stderr
    assert took < 1.5, f"the command waited {took:.1f} s behind 3 silent connections"


def test_a_checkpoint_carries_the_clients_time_zone(
    install: Install, repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    install.run(repo, "status", env={"TZ": "UTC"})  # the server starts in UTC
    install.up(repo)
    monkeypatch.delenv("GIT_AUTHOR_DATE")
    monkeypatch.delenv("GIT_COMMITTER_DATE")
    tokyo = {"TZ": "Asia/Tokyo"}
    repo.write("src/app.py", "print('served')\n")
    assert install.run(repo, "save", "-m", "served", env=tokyo).returncode == 0
    repo.write("src/app.py", "print('alone')\n")
    alone = {**tokyo, "GIT_CHECKPOINT_SERVER": "off"}
    assert install.run(repo, "save", "-m", "alone", env=alone).returncode == 0
    zones = [
        repo.git("log", "-1", "--format=%ad", "--date=raw", f"refs/checkpoints/main/{c}").split()[1]
        for c in ("cp_001", "cp_002")
    ]
    assert zones == ["+0900", "+0900"]


def test_a_signal_the_client_ignores_is_ignored_by_the_command(
    install: Install, repo: Repo, tmp_path: Path
) -> None:
    """As under nohup: run in its own process, a save ignores a SIGHUP and finishes."""
    client, worker = slow_save(
        install,
        repo,
        tmp_path,
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN),
    )
    client.send_signal(signal.SIGHUP)
    os.kill(-worker, signal.SIGHUP)  # even sent to the worker's group itself
    subprocess.run(["pkill", "-g", str(worker), "-x", "sleep"], check=False)  # git goes on
    assert client.wait(timeout=30) == 0


def test_ctrl_z_stops_the_worker_with_the_client_and_fg_continues_both(
    install: Install, repo: Repo, tmp_path: Path
) -> None:
    # A job of its own, as a shell runs it: the kernel stops no process on a Ctrl-Z in
    # an orphaned process group, which the test's own may be (a session with no shell).
    client, worker = slow_save(install, repo, tmp_path, preexec_fn=os.setpgrp)
    try:
        client.send_signal(signal.SIGTSTP)
        # The client stops itself once it told the worker; a worker in a disk wait on a
        # loaded machine stops when the wait ends.
        deadline = time.monotonic() + 30
        while not stopped(worker) or state(client.pid) != "T":
            if time.monotonic() > deadline:
                break
            time.sleep(0.02)
        assert (stopped(worker), state(client.pid)) == (True, "T"), (state(worker), wchan(worker))
        client.send_signal(signal.SIGCONT)
        deadline = time.monotonic() + 10
        while state(worker) == "T" and time.monotonic() < deadline:
            time.sleep(0.02)
        assert state(worker) not in ("T", "")
    finally:
        client.kill()
        client.wait(timeout=10)


def stopped(pid: int) -> bool:
    """Whether `pid` is stopped, or waits on a child of its that is: a process that
    spawned a child with vfork waits, in state D, until the child runs exec, and a
    child stopped with its group before its exec holds the parent there until `fg`."""
    return state(pid) == "T" or (state(pid) == "D" and "vfork" in wchan(pid))


def wchan(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/wchan").read_text()
    except FileNotFoundError:
        return ""


def state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except FileNotFoundError:
        return ""


def test_the_clients_resource_limits_hold_for_the_command(install: Install, repo: Repo) -> None:
    install.up(repo)
    repo.write("src/app.py", "print('x')\n")

    def no_writes() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))

    alone = install.run(
        repo, "save", "-m", "x", env={"GIT_CHECKPOINT_SERVER": "off"}, preexec_fn=no_writes
    )
    served = install.run(repo, "save", "-m", "x", preexec_fn=no_writes)
    assert alone.returncode != 0
    assert (served.returncode, served.stderr) == (alone.returncode, alone.stderr)


def test_a_client_in_a_sandbox_runs_its_command_itself(
    install: Install, repo: Repo, tmp_path: Path
) -> None:
    """no_new_privs (what seccomp and landlock sandboxes set) differs from the server's:
    the worker could not take it on, so the command is not handed over."""
    server = install.up(repo)
    spy, log = git_spy(tmp_path, repo)
    repo.write("src/app.py", "print('sandboxed')\n")
    proc = install.run(
        repo,
        "save",
        "-m",
        "x",
        env={"PATH": f"{spy}:{os.environ['PATH']}"},
        preexec_fn=no_new_privs,
    )
    assert proc.returncode == 0, proc.stderr
    assert {grand for _, grand in parents(log)} == {os.getpid()} != {server}


def test_stop_removes_the_socket(install: Install, repo: Repo) -> None:
    install.up(repo)
    install.stop(repo)
    assert install.socket is not None and not os.path.exists(install.socket)


def test_a_server_that_cannot_start_is_not_started_again_for_a_while(
    install: Install, repo: Repo
) -> None:
    package = install.own_copy()
    (package / "git_checkpoint" / "app" / "unloadable.py").write_text(
        'raise ImportError("a module that cannot be loaded")\n'
    )
    assert install.socket is not None
    stem = install.socket[: -len(".sock")]
    assert install.run(repo, "status").returncode == 0  # run here; a server tried
    deadline = time.monotonic() + 30
    while not os.path.exists(stem + ".broken") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "a module that cannot be loaded" in Path(stem + ".log").read_text()
    log = os.stat(stem + ".log")
    assert install.run(repo, "status").returncode == 0
    time.sleep(1)
    assert os.stat(stem + ".log") == log  # no new server wrote it again
    assert not install.state(repo)["running"]


def no_new_privs() -> None:
    import ctypes

    ctypes.CDLL(None).prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS, as sandboxes set it


def test_a_server_started_in_another_context_makes_way_for_the_clients_it_refuses(
    install: Install, repo: Repo, tmp_path: Path
) -> None:
    """A server that a sandboxed command started cannot serve the commands outside the
    sandbox: after a few refusals in a row it retires, and theirs takes its place."""
    install.run(repo, "status", preexec_fn=no_new_privs)
    first = install.up(repo)  # (started by the sandboxed command, as sandboxed as it)
    for n in range(3):
        repo.write("src/app.py", f"print({n})\n")
        assert install.run(repo, "save", "-m", f"refused {n}").returncode == 0
    assert gone(first)
    second = install.up(repo)
    spy, log = git_spy(tmp_path, repo)
    repo.write("src/app.py", "print('served')\n")
    proc = install.run(repo, "save", "-m", "served", env={"PATH": f"{spy}:{os.environ['PATH']}"})
    assert proc.returncode == 0, proc.stderr
    assert {grand for _, grand in parents(log)} == {second}


def test_stop_while_a_command_runs_lets_it_finish_and_says_so(
    install: Install, repo: Repo, tmp_path: Path
) -> None:
    client, worker = slow_save(install, repo, tmp_path, output=subprocess.PIPE)
    server = install.state(repo)["pid"]
    stopping = install.run(repo, "server", "stop")
    assert f"command server stopping (pid {server})" in stopping.stdout
    assert not os.path.exists(str(install.socket))  # no new command is taken
    subprocess.run(["pkill", "-g", str(worker), "-x", "sleep"], check=False)  # git goes on
    out, err = client.communicate(timeout=60)
    assert client.returncode == 0, err
    assert "checkpoint saved" in out
    assert isinstance(server, int) and gone(server)
