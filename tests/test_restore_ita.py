"""A restore that marks a path intent-to-add again (`git add -N`, as the checkpoint had
it) is finished, not reported as left behind (helper-17's trial: --keep-head and
--move-head said `(index) n.py` was left, and `status` showed an interrupted restore)."""

from __future__ import annotations

import pytest

from .conftest import Repo


@pytest.mark.parametrize("head", ["--keep-head", "--move-head"])
def test_an_intent_to_add_path_committed_since_is_restored_as_intent_to_add(
    repo: Repo, head: str
) -> None:
    repo.write("n.py", "new\n")
    repo.git("add", "-N", "n.py")
    repo.cp("save", "-m", "ita")
    staged = repo.git("ls-files", "-s", "n.py")
    repo.git("add", "n.py")
    repo.commit_all("add n")
    done = repo.cp("restore", "cp_001", head, expect=None)
    assert done.returncode == 0, done.stderr
    assert repo.git("ls-files", "-s", "n.py") == staged  # the placeholder, stage 0
    assert repo.git("diff", "--name-only", "--diff-filter=A").split() == ["n.py"]  # -N
    assert "interrupted" not in repo.cp("status").stdout
    assert (repo.path / "n.py").read_text() == "new\n"
