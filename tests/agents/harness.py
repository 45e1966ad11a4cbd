"""The real agent programs, as a user installs them, run headless against the scripted
model (model_server.py) with our hooks installed: the npm install into a cache reused
across runs, a network namespace where only loopback exists (its name server records
every host name looked up), the settings each agent needs to talk to 127.0.0.1 only,
and a logging `git-checkpoint-hook` first on the agent's PATH.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ..conftest import Repo

# Pinned: the versions these tests were written against (`npm view PACKAGE version`).
PACKAGES = {
    "claude-code": ("@anthropic-ai/claude-code", "2.1.332", "claude"),
    "codex": ("@openai/codex", "0.171.0", "codex"),
    "gemini-cli": ("@google/gemini-cli", "0.61.0", "gemini"),
}
AGENTS = tuple(PACKAGES)
HOOK = "git-checkpoint-hook"
# The agents' own folders in the work tree (settings, state): not the project's files.
AGENT_DIRS = (".git", ".claude", ".codex", ".gemini")
MODEL_SERVER = Path(__file__).with_name("model_server.py")
REAL_HOME = Path(os.path.expanduser("~"))  # read before the tests seal HOME
AGENT_TIMEOUT = 120.0
TOOLS = "Bash,Edit,Write,Read"  # what Claude Code may run without asking (-p, as root)


# Read at import, before the tests seal the environment (they drop GIT_* variables).
CACHE = os.environ.get("GIT_CHECKPOINT_AGENT_CACHE")


def cache_dir() -> Path:
    return Path(CACHE) if CACHE else REAL_HOME / ".cache" / "git-checkpoint-agents"


# --- the npm install --------------------------------------------------------------------

UNREACHABLE = ("ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "ECONNREFUSED", "ECONNRESET", "ENETUNREACH")


def installed_version(cache: Path, package: str) -> str | None:
    try:
        doc = json.loads((cache / "node_modules" / package / "package.json").read_text())
    except (OSError, ValueError):
        return None
    version = doc.get("version")
    return version if isinstance(version, str) else None


def install_agents(cache: Path) -> Path:
    """The pinned agents in `cache` (npm install --prefix, once: later runs reuse it);
    their bin folder. Skips when npm or its registry cannot be reached."""
    bin_dir = cache / "node_modules" / ".bin"
    cache.mkdir(parents=True, exist_ok=True)
    with (cache / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # xdist workers share the cache
        missing = [
            f"{package}@{version}"
            for package, version, command in PACKAGES.values()
            if installed_version(cache, package) != version or not (bin_dir / command).exists()
        ]
        if not missing:
            return bin_dir
        npm = shutil.which("npm")
        if npm is None:
            pytest.skip("npm is not installed: the agents cannot be installed")
        deps = {package: version for package, version, _ in PACKAGES.values()}
        (cache / "package.json").write_text(json.dumps({"private": True, "dependencies": deps}))
        proc = subprocess.run(
            [npm, "install", "--prefix", str(cache), "--no-audit", "--no-fund", "--save-exact"],
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
            env={**os.environ, "HOME": str(REAL_HOME)},  # the user's npm config and cache
        )
        if proc.returncode != 0:
            said = proc.stdout + proc.stderr
            if any(code in said for code in UNREACHABLE):
                pytest.skip(f"the npm registry cannot be reached: {said.strip()[-300:]}")
            raise AssertionError(f"npm install {' '.join(missing)} failed:\n{said[-3000:]}")
    return bin_dir


# --- the network --------------------------------------------------------------------------


@dataclass
class Network:
    """Where the agents run. `isolated`: a network namespace with loopback alone and a
    mount namespace whose /etc/resolv.conf names our recording name server; else the
    machine's network, with the proxy variables pointing at the model server."""

    holder: subprocess.Popen[bytes] | None
    resolv: Path | None

    @property
    def isolated(self) -> bool:
        return self.holder is not None

    def wrap(self, argv: list[str], cwd: Path | None = None) -> list[str]:
        """`argv` run in the namespaces (entering a mount namespace starts at its root:
        `env -C` goes back to `cwd`)."""
        if self.holder is None:
            return argv
        where = ["env", "-C", str(cwd)] if cwd is not None else []
        return [
            "nsenter",
            "--target",
            str(self.holder.pid),
            "--net",
            "--mount",
            "--",
            *where,
            *argv,
        ]

    def close(self) -> None:
        if self.holder is not None:
            with contextlib.suppress(OSError):
                self.holder.stdin.close()  # type: ignore[union-attr]
            try:
                self.holder.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.holder.kill()
                self.holder.wait()


# The holder brings loopback up, puts our resolv.conf over the machine's (in its own
# mount namespace), says so, and lives until its stdin closes (the test run's end, or
# its death).
HOLDER = (
    'ip link set lo up && mount --bind "$1" /etc/resolv.conf && echo ready && read -r _; exit 0'
)


UNSHARE = ("unshare", "--net", "--mount", "--propagation", "private", "--")


def open_network(scratch: Path) -> Network:
    if not all(shutil.which(tool) for tool in ("unshare", "nsenter", "ip")):
        return Network(None, None)
    resolv = scratch / "resolv.conf"
    resolv.write_text("nameserver 127.0.0.1\noptions timeout:1 attempts:1\n")
    holder = subprocess.Popen(
        [*UNSHARE, "sh", "-c", HOLDER, "holder", str(resolv)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert holder.stdout is not None
    if holder.stdout.readline().strip() != b"ready":
        holder.kill()
        holder.wait()
        return Network(None, None)
    return Network(holder, resolv)


# --- the scripted model ---------------------------------------------------------------------


@dataclass
class ModelServer:
    proc: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def records(self, kind: str | None = None) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        found = [json.loads(line) for line in self.log.read_text().splitlines() if line]
        return [r for r in found if kind is None or r.get("kind") == kind]

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def start_model(
    network: Network, scratch: Path, steps: list[dict[str, str]], root: Path, final: str
) -> ModelServer:
    config = scratch / "model.json"
    port_file = scratch / "model.port"
    log = scratch / "model.jsonl"
    config.write_text(
        json.dumps(
            {
                "steps": steps,
                "root": str(root),
                "final": final,
                "log": str(log),
                "port_file": str(port_file),
                "dns": network.isolated,
            }
        )
    )
    proc = subprocess.Popen(
        network.wrap([sys.executable, "-I", str(MODEL_SERVER), str(config)]),
        stdout=subprocess.DEVNULL,
        stderr=(scratch / "model.stderr").open("wb"),
    )
    deadline = time.monotonic() + 20
    while not port_file.exists() or not port_file.read_text():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"the model server did not start: {config}")
        time.sleep(0.02)
    return ModelServer(proc, int(port_file.read_text()), log)


# --- the hook shim ----------------------------------------------------------------------------


def write_shim(folder: Path, log_dir: Path, real: Path) -> None:
    """A `git-checkpoint-hook` that keeps each call's argv and stdin in a folder of its own
    below log_dir, then runs the real one on the same stdin."""
    folder.mkdir(parents=True, exist_ok=True)
    log_dir.mkdir(parents=True, exist_ok=True)
    shim = folder / HOOK
    shim.write_text(
        "#!/bin/sh\n"
        f'call=$(mktemp -d "{log_dir}/call.XXXXXXXX")\n'
        'printf "%s\\n" "$@" > "$call/argv"\n'
        'cat > "$call/stdin"\n'
        f'exec "{real}" "$@" < "$call/stdin"\n'
    )
    shim.chmod(0o755)


@dataclass(frozen=True)
class HookCall:
    argv: list[str]
    payload: dict[str, Any]
    at: float

    @property
    def event(self) -> str:
        return self.argv[1] if len(self.argv) > 1 else ""


def hook_calls(log_dir: Path) -> list[HookCall]:
    calls = []
    for call in log_dir.glob("call.*"):
        raw = (call / "stdin").read_bytes() if (call / "stdin").exists() else b""
        calls.append(
            HookCall(
                (call / "argv").read_text().splitlines(),
                json.loads(raw) if raw.strip() else {},
                (call / "argv").stat().st_mtime,
            )
        )
    return sorted(calls, key=lambda c: c.at)


# --- one agent, set up to run ---------------------------------------------------------------------


@dataclass
class AgentRun:
    agent: str
    repo: Repo
    home: Path
    scratch: Path
    bin_dir: Path
    network: Network
    real_hook: Path
    env: dict[str, str] = field(default_factory=dict)

    @property
    def hook_log(self) -> Path:
        return self.scratch / "hook-calls"

    def calls(self) -> list[HookCall]:
        return hook_calls(self.hook_log) if self.hook_log.exists() else []

    def prepare(self) -> None:
        """Our hooks in the project, as a user installs them, and the agent's own settings:
        its model at the scripted server, no telemetry, no update check, trust."""
        write_shim(self.scratch / "shim", self.hook_log, self.real_hook)
        self.repo.cp("hooks", "install", "--agent", self.agent)
        if self.agent == "codex":
            self._codex_config()
        elif self.agent == "gemini-cli":
            self._gemini_settings()

    def base_env_without_model(self) -> dict[str, str]:
        """The agent's environment with no model to talk to (requests go nowhere)."""
        return self.base_env("http://127.0.0.1:9")

    def base_env(self, url: str) -> dict[str, str]:
        keep = ("LANG", "LC_ALL", "TERM", "TMPDIR", "USER", "LOGNAME", "SHELL")
        env = {k: v for k, v in os.environ.items() if k in keep or k.startswith("GIT_")}
        node = shutil.which("node")
        path = [
            str(self.scratch / "shim"),
            str(self.bin_dir),
            str(self.real_hook.parent),
            *([str(Path(node).parent)] if node else []),
            "/usr/local/bin",
            "/usr/bin",
            "/bin",
        ]
        proxy = url  # requests for other hosts come to the model server's recorder, and stop
        env.update(
            HOME=str(self.home),
            XDG_CONFIG_HOME=str(self.home / ".config"),
            PATH=os.pathsep.join(path),
            NO_COLOR="1",
            CI="1",
            NO_PROXY="127.0.0.1,localhost",
            no_proxy="127.0.0.1,localhost",
            HTTPS_PROXY=proxy,
            HTTP_PROXY=proxy,
            ALL_PROXY=proxy,
            https_proxy=proxy,
            http_proxy=proxy,
            all_proxy=proxy,
        )
        if self.agent == "claude-code":
            env.update(
                ANTHROPIC_BASE_URL=url,
                ANTHROPIC_API_KEY="sk-ant-scripted",
                DISABLE_TELEMETRY="1",
                DISABLE_ERROR_REPORTING="1",
                DISABLE_AUTOUPDATER="1",
                CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            )
        elif self.agent == "codex":
            env.update(CODEX_HOME=str(self.home / ".codex"), SCRIPTED_API_KEY="scripted")
        else:
            env.update(GOOGLE_GEMINI_BASE_URL=url, GEMINI_API_KEY="scripted")
        return env

    def command(self, prompt: str, server: ModelServer) -> list[str]:
        binary = str(self.bin_dir / PACKAGES[self.agent][2])
        if self.agent == "claude-code":
            return [binary, "-p", prompt, "--output-format", "json", "--allowedTools", TOOLS]
        if self.agent == "codex":
            # The provider's address of this run: a flag, so config.toml stays the user's
            # (Codex writes hook trust there).
            url = json.dumps(f"{server.url}/v1")
            return [
                binary,
                "exec",
                "--json",
                "-c",
                f"model_providers.scripted.base_url={url}",
                prompt,
            ]
        return [binary, "-p", prompt, "--yolo", "--output-format", "json"]

    def run(
        self, prompt: str, steps: list[dict[str, str]], final: str = "All done."
    ) -> AgentResult:
        """One headless session: the prompt, the scripted tool calls, the final text."""
        server = start_model(self.network, self.scratch, steps, self.repo.path, final)
        try:
            started = time.monotonic()
            proc = subprocess.run(
                self.network.wrap(self.command(prompt, server), self.repo.path),
                cwd=self.repo.path,
                env={**self.base_env(server.url), **self.env},
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=AGENT_TIMEOUT,
                check=False,
            )
            took = time.monotonic() - started
        finally:
            server.stop()
        return AgentResult(self.agent, proc, took, server)

    # --- each agent's settings ---

    def _codex_config(self) -> None:
        """The user's ~/.codex/config.toml: no approvals, no sandbox (the hooks save
        through git), the project trusted, and everything that reaches other hosts off
        (update check, plugins and their marketplace sync, apps, analytics, web search)."""
        codex_home = self.home / ".codex"
        codex_home.mkdir(parents=True, exist_ok=True)
        (codex_home / "config.toml").write_text(
            'model = "gpt-5.5"\n'
            'model_provider = "scripted"\n'
            'approval_policy = "never"\n'
            'sandbox_mode = "danger-full-access"\n'
            "check_for_update_on_startup = false\n"
            'web_search = "disabled"\n'
            "\n[analytics]\nenabled = false\n"
            "\n[features]\nplugins = false\nremote_plugin = false\nplugin_sharing = false\n"
            "apps = false\nin_app_updates = false\n"
            f'\n[projects.{json.dumps(str(self.repo.path))}]\ntrust_level = "trusted"\n'
            # (the port of each run comes with its command line)
            '\n[model_providers.scripted]\nname = "scripted"\nbase_url = "http://127.0.0.1:9/v1"\n'
            'wire_api = "responses"\nenv_key = "SCRIPTED_API_KEY"\n'
        )

    def _gemini_settings(self) -> None:
        """~/.gemini: the API key auth, no usage statistics or telemetry, no update
        check, and this folder trusted (Gemini CLI runs nothing in an untrusted one)."""
        gemini = self.home / ".gemini"
        gemini.mkdir(parents=True, exist_ok=True)
        settings = {
            "security": {
                "auth": {"selectedType": "gemini-api-key"},
                "folderTrust": {"enabled": True},
            },
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        }
        (gemini / "settings.json").write_text(json.dumps(settings, indent=2))
        trusted = {str(self.repo.path): "TRUST_FOLDER"}
        (gemini / "trustedFolders.json").write_text(json.dumps(trusted, indent=2))


@dataclass
class AgentResult:
    agent: str
    proc: subprocess.CompletedProcess[str]
    seconds: float
    server: ModelServer

    def check(self, final: str = "All done.") -> None:
        """The session ran to the scripted final text, through the scripted model."""
        said = (
            f"exit {self.proc.returncode}\nstdout: {self.proc.stdout}\nstderr: {self.proc.stderr}"
        )
        assert self.proc.returncode == 0, said
        assert final in self.proc.stdout, said
        assert self.server.records("model"), said


# --- what the scenarios check -------------------------------------------------------------


def checkpoints(repo: Repo) -> list[dict[str, Any]]:
    found = repo.cp_json("list")["checkpoints"]
    return list(found)


def checkpoint_named(repo: Repo, message: str) -> dict[str, Any]:
    """The one checkpoint whose message is `message`."""
    found = [c for c in checkpoints(repo) if c["message"] == message]
    assert len(found) == 1, (message, checkpoints(repo))
    return found[0]


def events(calls: list[HookCall]) -> list[tuple[str, str]]:
    """(event, tool) of each hook call, in order: the tool is empty for prompt events."""
    return [(c.event, str(c.payload.get("tool_name", ""))) for c in calls]


def only_local(result: AgentResult) -> None:
    """Nothing was meant for another host: no name looked up (the namespace's name
    server), no request through the proxy variables."""
    assert result.server.records("dns") == [], result.server.records("dns")
    assert result.server.records("foreign") == [], result.server.records("foreign")
