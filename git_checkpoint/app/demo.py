"""`git checkpoint demo`: the whole loop in a throwaway repository, with the real log.

A tiny project with a bug and a test, and an "agent" that gets the fix wrong once
(leaving residue behind), reads the feedback, and gets it right the second time.
"""

from __future__ import annotations

import shlex
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..config.parse import load_config
from ..core.text import counted
from ..gitcore.repo import Repo, run_git
from ..runloop.loop import RunRequest, run_loop

CALC = "def add(a, b):\n    return a - b\n"
TEST = """\
import sys
from calc import add

if add(2, 3) != 5:
    print(f"FAIL: add(2, 3) returned {add(2, 3)}, expected 5")
    sys.exit(1)
print("ok: add(2, 3) == 5")
"""
AGENT = """\
import json, os, pathlib

attempt = int(os.environ["CHECKPOINT_ATTEMPT"])
feedback = json.loads(pathlib.Path(os.environ["CHECKPOINT_FEEDBACK"]).read_text())
failing = feedback["last_failing_verifier"]
if attempt == 1:
    print("agent: guessing the operator is wrong: trying multiplication")
    pathlib.Path("calc.py").write_text("def add(a, b):\\n    return a * b\\n")
    pathlib.Path("scratch").mkdir(exist_ok=True)
    pathlib.Path("scratch/attempt-1.log").write_text("half-finished notes\\n")
else:
    print(f"agent: feedback says {failing['name']} failed: {failing['output_tail'].strip()}")
    pathlib.Path("calc.py").write_text("def add(a, b):\\n    return a + b\\n")
"""


@dataclass(frozen=True)
class DemoResult:
    repository: str | None  # kept with --keep
    promoted: str | None
    attempts: int
    exit_code: int

    def lines(self) -> list[str]:
        out = []
        if self.repository:
            out.append(f"demo repository kept at {self.repository}")
        out.append(
            f"demo done: {self.promoted} promoted after {counted(self.attempts, 'attempt')}"
            if self.promoted
            else "demo failed: no attempt passed"
        )
        return out


def run(*, keep: bool, log: Callable[[str], None], quiet_stdout: bool = False) -> DemoResult:
    base = Path(tempfile.mkdtemp(prefix="git-checkpoint-demo-"))
    work = base / "project"
    try:
        work.mkdir()
        run_git(["init", "-q"], work)
        for key, value in (
            ("user.name", "git-checkpoint demo"),
            ("user.email", "demo@git-checkpoint.invalid"),
            ("commit.gpgsign", "false"),
        ):
            run_git(["config", key, value], work)
        (work / "calc.py").write_text(CALC)
        (work / "test_calc.py").write_text(TEST)
        # python3 from PATH reads better in the log than this venv's interpreter path; the
        # demo's scripts need nothing but the standard library.
        python = "python3" if shutil.which("python3") else shlex.quote(sys.executable)
        # -B: no bytecode cache. Python trusts a cached module whose source has the same
        # size and the same mtime in whole seconds, so attempt 2's `a + b`, written in the
        # second of attempt 1's `a * b`, would run attempt 1's code.
        (work / ".checkpoint.yaml").write_text(
            "verifiers:\n"
            f"  - name: unit\n    command: {python} -B test_calc.py\n    required: true\n"
            "    timeout: 60\n"
        )
        run_git(["add", "-A"], work)
        run_git(["commit", "-q", "-m", "calc with a bug"], work)
        agent = base / "agent.py"
        agent.write_text(AGENT)
        log(f"demo: a throwaway repository at {work}")
        log("demo: the agent's command: python agent.py (wrong once, then right)")
        repo = Repo.discover(work)
        config = load_config(repo.root, repo.checkpoint_config())
        request = RunRequest(
            task="fix-add",
            argv=[*shlex.split(python), "../agent.py"],  # run from the project folder
            attempts=3,
            agent_to_stderr=quiet_stdout,
        )
        outcome = run_loop(repo, config, request, log)
        return DemoResult(
            str(work) if keep else None,
            outcome.promoted,
            len(outcome.attempts),
            outcome.exit_code,
        )
    finally:
        if not keep:
            shutil.rmtree(base, ignore_errors=True)
