"""A file checkpoints left out already at the rollback point (over a limit) is in no
checkpoint: an attempt that changed only that file ran the verifiers on a workspace no
checkpoint holds, so their failure is no evidence about the rollback point, which keeps
its status."""

from __future__ import annotations

from ..conftest import Repo
from ..helpers import configure, verifier


def test_an_attempt_that_changed_only_a_file_left_out_before_leaves_the_rollback_point_alone(
    repo: Repo,
) -> None:
    configure(repo, verifier("unit", "test $(head -c1 model.bin) = a"), commit=False)
    with (repo.path / ".checkpoint.yaml").open("a") as f:
        f.write("limits:\n  overlay_max_bytes: 1KiB\n")
    repo.commit_all("a verifier, a small overlay")
    repo.write("model.bin", b"a" * 3000)  # over the limit: left out
    repo.cp("save", "-m", "with the model")  # cp_001
    repo.cp("verify", "cp_001")
    assert repo.cp_json("list")["checkpoints"][0]["status"] == "promoted"
    agent = "head -c 3000 /dev/zero | tr '\\0' b > model.bin"
    repo.cp("run", "--attempts", "1", "--", "sh", "-c", agent, expect=1)
    listed = {c["id"]: c for c in repo.cp_json("list")["checkpoints"]}
    assert listed["cp_001"]["status"] == "promoted", listed["cp_001"]
