"""Files named like secrets (`.env*`, keys, credentials) are left out of every
checkpoint and reported, matched case-insensitively from the list the README gives,
unless `secrets.allow` lets them in; `secrets.on_save: block` refuses instead, `ignore`
says nothing."""

from __future__ import annotations

import re
from pathlib import Path

from ..conftest import Repo
from ..helpers import REF1, checkpoint_refs, one_line_error
from .conftest import parents, save_json, tree, write_config

SECRETS = [".env", ".env.local", "conf/server.pem", "id_rsa", "keys/id_ed25519", "tls.key"]


def test_secret_named_files_left_out_and_reported(repo: Repo) -> None:
    for name in SECRETS:
        repo.write(name, "SECRET=1\n")
    repo.write("ok.txt", "fine\n")
    proc = repo.cp("save")
    first, said = proc.stdout.splitlines()
    assert first == "checkpoint saved: cp_001"
    assert said.startswith("left out: ") and "its name looks like a secret" in said
    for name in (".env", "server.pem", "id_rsa"):
        assert name in said
    assert "SECRET" not in proc.stdout + proc.stderr
    assert set(tree(repo, f"{REF1}^3")) == {"ok.txt"}
    for name in SECRETS:
        assert name not in tree(repo, REF1)


def test_secrets_left_out_in_json(repo: Repo) -> None:
    for name in SECRETS:
        repo.write(name, "SECRET=1\n")
    data = save_json(repo)
    assert sorted(data["secrets_left_out"]) == sorted(SECRETS)
    assert data["overlay_files"] == 0
    assert len(parents(repo, REF1)) == 2, "nothing but secrets: no overlay commit"


def test_every_dot_env_star_name_is_a_secret(repo: Repo) -> None:
    for name in (".envrc", ".env-production", ".env_local"):
        repo.write(name, "TOKEN=1\n")
    data = save_json(repo)
    assert sorted(data["secrets_left_out"]) == [".env-production", ".env_local", ".envrc"]


def test_secrets_allow_lets_a_file_in(repo: Repo) -> None:
    write_config(repo, "secrets:\n  allow: [.env.staging]\n")
    repo.write(".env.staging", "SECRET=\n")
    repo.write(".env", "SECRET=1\n")
    data = save_json(repo)
    assert data["secrets_left_out"] == [".env"]
    assert ".env.staging" in tree(repo, f"{REF1}^3")


def test_templates_of_secret_files_are_saved(repo: Repo) -> None:
    """`.env.example` holds the names a project needs, not their values."""
    for name in (".env.example", ".env.sample", ".env.template", "conf/app.key.py"):
        repo.write(name, "SECRET=\n")
    data = save_json(repo)
    assert data["secrets_left_out"] == []
    stored = tree(repo, f"{REF1}^3")
    assert {".env.example", ".env.sample", ".env.template", "conf/app.key.py"} <= set(stored)


def test_secrets_block_refuses(repo: Repo) -> None:
    write_config(repo, "secrets:\n  on_save: block\n")
    repo.write(".env", "SECRET=1\n")
    proc = repo.cp("save", expect=3)
    assert ".env" in one_line_error(proc.stderr)
    assert checkpoint_refs(repo) == []


SECRET_NAMES = [
    ".ENV",
    ".Env.Local",
    "deploy/prod.env",
    ".aws/credentials",
    "home/.AWS/Credentials",
    ".npmrc",
    ".pypirc",
    ".netrc",
    ".git-credentials",
    "config/credentials.json",
    "certs/server.PEM",
    "certs/client.P12",
    "certs/site.key",
    "certs/site.pfx",
    "certs/store.jks",
    "keys/id_rsa",
    "keys/ID_ED25519.pub",
    "keys/id_ecdsa",
    "config/secrets.yml",
    "config/secrets.yaml",
    "vault.kdbx",
    "gcp/my-service-account.json",
]


def test_secret_names_are_matched_case_insensitively_from_a_wider_list(repo: Repo) -> None:
    for name in SECRET_NAMES:
        repo.write(name, "TOKEN=hunter2\n")
    repo.write("notes/plain.txt", "not a secret\n")
    saved = repo.cp_json("save")
    assert sorted(saved["secrets_left_out"]) == sorted(SECRET_NAMES)
    stored = repo.git("ls-tree", "-r", "--name-only", "refs/checkpoints/main/cp_001^3")
    assert stored.split() == ["notes/plain.txt"]


def test_readme_lists_exactly_the_secret_patterns() -> None:
    from git_checkpoint.config.model import SECRET_PATTERNS

    readme = (Path(__file__).parents[2] / "README.md").read_text()
    block = readme.split("the others the whole file name:")[1].split("(Tracked")[0]
    assert re.findall(r"`([^`]+)`", block) == list(SECRET_PATTERNS)


def test_secrets_on_save_ignore_is_quiet(repo: Repo) -> None:
    repo.write(".checkpoint.yaml", "secrets: {on_save: ignore}\n")
    repo.commit_all("quiet")
    repo.write(".env.local", "TOKEN=1\n")
    proc = repo.cp("save")
    assert proc.stderr == ""
    assert repo.cp_json("show", "@")["overlay_files"] == []
