"""Hooks installed, taken out and reported, across their families: the agents' settings
files (agent_hooks.py), the git hooks (git_hooks.py) and the shell guard's line; what
`git checkpoint hooks`, `init` and `doctor` use."""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from ..core.errors import UsageError
from ..gitcore.repo import Repo
from . import agent_hooks, codex_trust, git_hooks, hook_files, installer
from .agent_hooks import AGENTS, AgentState
from .git_hooks import GitHookState

GUARD_SCRIPT = Path("shell") / "git-checkpoint-guard.sh"


@dataclass(frozen=True)
class HookChange:
    family: str  # an agent's name, "git" or "shell"
    path: str
    outcome: str


@dataclass(frozen=True)
class HooksResult:
    action: str
    changes: list[HookChange] = field(default_factory=list)
    agents: list[AgentState] = field(default_factory=list)
    git: list[GitHookState] = field(default_factory=list)
    shell_line: str | None = None
    # Hooks are installed, but the program they call is not found on this PATH (the one
    # they run with, as far as we can know): how to make it found.
    entry_missing: str | None = None

    def warnings(self) -> list[str]:
        return [self.entry_missing] if self.entry_missing else []

    def lines(self) -> list[str]:
        out = [f"{c.family:<12} {c.outcome:<18} {c.path}" for c in self.changes]
        for a in self.agents:
            edited = ", edited since install" if a.edited_since_install else ""
            if a.ignored is False:
                edited += ", not ignored by git"
            out.append(f"{a.agent:<12} {a.state + edited:<18} {a.path} ({a.scope})")
            if a.runs is False and a.not_run_because and a.trust_fix:
                first, *toml = a.trust_fix.splitlines()
                out.append(f"{'':<12} {a.agent} will not run them: {a.not_run_because}")
                out.append(f"{'':<12} to trust them: {first}")
                out += [f"{'':<14} {line}" if line else "" for line in toml]
        if self.git:
            states = ", ".join(
                f"{g.hook} {g.state}" + (" (chained)" if g.chained else "") for g in self.git
            )
            out.append(f"{'git':<12} {states}  {Path(self.git[0].path).parent}")
        if self.shell_line is not None:
            if self.action == "install":
                out.append("shell guard: add this line to ~/.bashrc or ~/.zshrc:")
            elif self.action == "uninstall":
                out.append("shell guard: remove this line from ~/.bashrc or ~/.zshrc:")
            else:
                out.append("shell guard (installed if your ~/.bashrc or ~/.zshrc has):")
            out.append(f"  {self.shell_line}")
        return out or ["nothing to do"]


def entry_not_found() -> str | None:
    """None when `git-checkpoint-hook`, which every installed hook calls, is on PATH;
    else what is wrong and how to fix it (where the program is, and the line to add)."""
    import shutil
    import sys

    entry = agent_hooks.ENTRY
    if shutil.which(entry):
        return None
    beside = Path(sys.argv[0]).resolve().parent / entry  # (this command's own folder)
    if not beside.is_file():
        beside = Path(sys.executable).parent / entry
    fix = (
        f'add its folder to PATH (export PATH="{beside.parent}:$PATH" in your shell\'s '
        f"rc file, and in the environment your agent starts from), or link it: "
        f"ln -s {beside} ~/.local/bin/{entry}"
        if beside.is_file()
        else installer.reinstall_hint()
    )
    return (
        f"{entry} is not on PATH ({os.environ.get('PATH', '')}): the installed hooks "
        f"cannot run it, so they save nothing; {fix}"
    )


def run(
    action: str,
    *,
    agents: tuple[str, ...],
    git: bool,
    shell: bool,
    local: bool,
    user: bool,
    trust: bool = False,
    trailers: bool = False,
) -> HooksResult:
    """`trailers`: with `git`, the prepare-commit-msg hook that adds the Checkpoint and
    Verified-by trailers (install: it too; uninstall: it alone)."""
    if local and user:
        raise UsageError("--local and --user: choose one")
    if trailers and not git:
        raise UsageError("--trailers goes with --git (hooks install --git --trailers)")
    if trust and (action != "install" or "codex" not in agents):
        raise UsageError("--trust is for hooks install --agent codex")
    scope = "local" if local else "user" if user else "project"
    if scope != "project" and (git or shell):
        raise UsageError(f"--{scope} is for agent settings, not --git or --shell")
    for name in agents:
        if name not in AGENTS:
            raise UsageError(f"--agent {name}: one of {', '.join(AGENTS)}")
    if scope == "local":
        agents = agents or ("claude-code",)
        for name in agents:
            if AGENTS[name].local_file is None:
                raise UsageError(f"--local: {name} has no local settings file")
    nothing_named = not (agents or git or shell)
    if action == "install" and nothing_named:
        raise UsageError(
            f"name what to install: --agent NAME ({', '.join(AGENTS)}), --git or --shell"
        )
    shell_only = shell and not (agents or git)  # the guard's line needs no repository
    repo = _repo(required=scope != "user" and not shell_only)
    home = Path(os.path.expanduser("~"))

    if action == "status":
        names = agents or tuple(n for n in AGENTS if scope != "local" or AGENTS[n].local_file)
        names = () if shell_only else names
        states = []
        for name in names:
            states.append(_agent_status(name, scope, repo, home))
            if not (local or user):  # a plain status: the other scopes where ours are too
                states += _installed_elsewhere(name, repo, home)
        show_git = (git or nothing_named) and repo is not None
        git_states = git_hooks.status(repo) if show_git and repo is not None else []
        installed = any(a.state != "not installed" for a in states) or any(
            g.state in ("installed", "outdated") for g in git_states
        )
        return HooksResult(
            "status",
            agents=states,
            git=git_states,
            shell_line=_shell_line(required=shell) if shell or nothing_named else None,
            entry_missing=entry_not_found() if installed else None,
        )

    if action == "uninstall" and nothing_named:  # everything installed in this scope
        agents = tuple(
            n
            for n in AGENTS
            if (scope != "local" or AGENTS[n].local_file)
            and _agent_status(n, scope, repo, home).state != "not installed"
        )
        git = (
            repo is not None
            and scope == "project"
            and any(g.state in ("installed", "outdated") for g in git_hooks.status(repo))
        )
    changes = []
    for name in agents:
        spec = AGENTS[name]
        path = agent_hooks.settings_path(spec, scope, repo.root if repo else None, home)
        record = _record_path(name, scope, repo)
        if action == "install":
            done = agent_hooks.install(spec, path, record)
            outcome = "installed" if done else "already installed"
            if scope == "local" and repo is not None:
                outcome += _keep_unshared(repo, path)
            if name == "codex" and trust:
                project = repo.root if scope == "project" and repo is not None else None
                trusted = codex_trust.trust(path, project, agent_hooks.ENTRY)
                outcome += f"; trusted in codex: {', '.join(trusted)}"
            elif name == "codex" and _agent_status(name, scope, repo, home).runs is False:
                outcome += "; codex runs them once trusted (hooks status says how)"
        else:
            outcome = agent_hooks.uninstall(spec, path, record)
        changes.append(HookChange(name, _show(path, repo), outcome))
    if git and repo is not None:
        folder = _show(git_hooks.hooks_dir(repo), repo)
        if action == "install":
            touched = git_hooks.install(repo, trailers=trailers)
            outcome = "installed" if touched else "already installed"
        else:
            touched = git_hooks.uninstall(repo, only_trailers=trailers)
            outcome = "removed" if touched else "not installed"
        if touched:
            outcome += f": {', '.join(touched)}"
        if action == "install" and not _inside(git_hooks.hooks_dir(repo), repo):
            outcome += " (core.hooksPath outside this repository: shared with others using it)"
        changes.append(HookChange("git", folder, outcome))
    return HooksResult(action, changes=changes, shell_line=_shell_line() if shell else None)


def _repo(*, required: bool) -> Repo | None:
    try:
        return Repo.discover()
    except UsageError:
        if required:
            raise
        return None


def _record_path(agent: str, scope: str, repo: Repo | None) -> Path:
    if scope == "user" or repo is None:
        return git_hooks.data_dir() / "hooks-state" / f"{agent}-user.json"
    return repo.state_dir() / "hooks" / f"{agent}-{scope}.json"


def _agent_status(name: str, scope: str, repo: Repo | None, home: Path) -> AgentState:
    spec = AGENTS[name]
    path = agent_hooks.settings_path(spec, scope, repo.root if repo else None, home)
    state = agent_hooks.status(spec, scope, path, _record_path(name, scope, repo))
    ignored = None
    if scope == "local" and repo is not None and state.state in ("installed", "outdated"):
        ignored = _ignored(repo, path)
    trust = None
    if name == "codex" and state.state in ("installed", "outdated"):
        roots = _codex_project_roots(repo) if scope == "project" and repo is not None else ()
        trust = codex_trust.read(path, roots, agent_hooks.ENTRY)
    return AgentState(
        state.agent,
        state.scope,
        _show(path, repo),
        state.state,
        state.edited_since_install,
        ignored,
        runs=None if trust is None else trust.runs,
        not_run_because=None if trust is None else trust.problem(),
        trust_fix=None if trust is None or trust.runs else trust.fix(),
    )


def _codex_project_roots(repo: Repo) -> tuple[Path, ...]:
    """Where Codex looks up a project's trust: the work tree's top, then (for a linked
    worktree) the main work tree's."""
    roots = [repo.root]
    if repo.common_dir.name == ".git" and repo.common_dir.parent != repo.root:
        roots.append(repo.common_dir.parent)
    return tuple(roots)


def _installed_elsewhere(name: str, repo: Repo | None, home: Path) -> list[AgentState]:
    """The agent's hooks in its local and user settings, where we installed them."""
    found = []
    for scope in ("local", "user"):
        if scope == "local" and (repo is None or AGENTS[name].local_file is None):
            continue
        try:
            state = _agent_status(name, scope, repo, home)
        except UsageError:
            continue  # a file we cannot read there: nothing we can say of it
        ours = state.state in ("installed", "outdated")
        if ours or _record_path(name, scope, repo).exists():
            found.append(state)
    return found


def _exclude_file(repo: Repo) -> Path:
    return repo.common_dir / "info" / "exclude"  # git reads it for every linked worktree


def _ignored(repo: Repo, path: Path) -> bool:
    rel = path.relative_to(repo.root).as_posix()
    return repo.run(["check-ignore", "-q", "--", rel], check=False).returncode == 0


def _keep_unshared(repo: Repo, path: Path) -> str:
    """Keep a local settings file out of checkpoints and commits: git must ignore it."""
    rel = path.relative_to(repo.root).as_posix()
    where = _show(_exclude_file(repo), repo)
    if repo.git("ls-files", "-z", "--", rel):
        return f"; tracked by git all the same (git rm --cached {shlex.quote(rel)})"
    if hook_files.exclude_locally(_exclude_file(repo), rel):
        return f"; added to {where}"
    return ""


def _inside(path: Path, repo: Repo) -> bool:
    resolved = path.resolve()
    return any(resolved.is_relative_to(p.resolve()) for p in (repo.root, repo.common_dir))


def _show(path: Path, repo: Repo | None) -> str:
    if repo is not None:
        try:
            return str(path.relative_to(repo.root))
        except ValueError:
            pass
    return str(path)


def _shell_line(*, required: bool = True) -> str | None:
    """The line that sources the shell guard (None in a status when it is missing)."""
    try:
        script = git_hooks.templates_dir() / GUARD_SCRIPT
    except UsageError:
        if not required:
            return None
        raise
    if not script.is_file():
        if not required:
            return None
        raise UsageError(f"the shell guard {script} is missing: {installer.reinstall_hint()}")
    return f". {shlex.quote(str(script))}"
