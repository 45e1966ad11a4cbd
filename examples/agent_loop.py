"""An agent loop on the git-checkpoint Python API: save a rollback point, let the agent
try, verify exactly what it made, and on failure roll back and hand it the feedback.

    python examples/agent_loop.py REPO "AGENT COMMAND" [ATTEMPTS]

The agent command runs in REPO with FEEDBACK set to what the last failed attempt left
(the failing verifier and its last lines); the verifiers are the repository's own
(`.checkpoint.yaml`). Exit 0 when an attempt is promoted, 1 when all failed.
"""

from __future__ import annotations

import os
import subprocess
import sys

from git_checkpoint import api


def attempt(repo: str, command: str, feedback: str) -> None:
    env = {**os.environ, "FEEDBACK": feedback}
    subprocess.run(command, shell=True, cwd=repo, env=env, check=False)


def loop(repo: str, command: str, attempts: int = 3) -> bool:
    rollback = api.save(repo, message="rollback point").checkpoint_id
    feedback = ""
    for n in range(1, attempts + 1):
        attempt(repo, command, feedback)
        saved = api.save(repo, message=f"attempt {n}")
        result = api.verify(saved.checkpoint_id, repo=repo)
        print(f"attempt {n}: {saved.checkpoint_id} {result.status}")
        if result.status == "promoted":
            return True
        failed = [r for r in result.results if r.status != "passed"]
        feedback = "\n".join(f"{r.name}: {r.output_tail}" for r in failed)
        back = api.restore(rollback, repo=repo)
        print(f"rolled back to {back.checkpoint} (safety checkpoint {back.safety_checkpoint})")
    return False


def main() -> int:
    try:
        repo, command = sys.argv[1], sys.argv[2]
        attempts = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    except (IndexError, ValueError):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        return 0 if loop(repo, command, attempts) else 1
    except api.CheckpointError as exc:
        print(f"git checkpoint: {exc}", file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
