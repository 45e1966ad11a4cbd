"""The secret scan's high-entropy detectors read quoted strings: a checkpoint's manifest
quotes no word that YAML writes bare, so what a scan or a push finds in a message or a
hypothesis does not depend on which writer wrote the manifest."""

from __future__ import annotations

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from git_checkpoint.core import yamltext

from ..conftest import Repo

# Words a high-entropy detector reads when quoted (words of eight characters and more:
# shorter ones carry too little entropy, and include y, n and the like, quoted to be safe
# with every YAML reader): a token that starts with a digit, a
# digest longer than an object id.
TOKEN = "7Hq9vK2mXp4RtY8wZ3nB6cF1dG5jL0sA"
DIGEST = "3f7a9c2e4b6d8f0a1c3e5b7d9f2a4c6e8b0d2f4a6c8e0b2d4f6a8c0e2b4d6f8a1c3e"
_BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.sampled_from([TOKEN, DIGEST]), st.text(_BASE64, min_size=8, max_size=40)))
def test_a_word_pyyaml_writes_bare_is_written_bare(word: str) -> None:
    bare = yaml.safe_dump({"k": word}, allow_unicode=True, width=100) == f"k: {word}\n"
    if bare:
        assert yamltext.dump({"k": word}) == f"k: {word}\n"


def test_a_scan_of_a_token_in_a_message_finds_what_the_summary_line_shows(repo: Repo) -> None:
    repo.write("src/app.py", "print('changed')\n")
    repo.cp("save", "-m", TOKEN, "--hypothesis", DIGEST)
    message = repo.git("log", "-1", "--format=%B", "refs/checkpoints/main/cp_001")
    assert f"on main: {TOKEN}" in message  # the summary line: bare, and not reported
    proc = repo.cp("scan", "cp_001")
    assert "no secrets found" in proc.stdout
