"""Secret scanning: `scan`, on save (warn / block) and on push (block / --allow-secrets),
secrets.allow, and the rule that a secret is named by file, line and fingerprint and
never printed, never stored, and never read whole from a big file."""

from __future__ import annotations

import json
import random
import string
import subprocess
import sys
from pathlib import Path

import pytest

from git_checkpoint.save.secrets import (
    BASE64_LIMIT,
    HEX_LIMIT,
    MAX_BLOB_BYTES,
    _engine,
    candidate_lines,
    scan_text,
)

from ..conftest import Repo
from ..helpers import blob_stored, latest_ref, saved_paths
from ..launcher import no_traceback
from ..servers import bare_repo, publish, remote_refs

AWS_KEY = "AKIAZ3MHPQRS7TUVWXYZ"


AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq9ETg5Yk2"


GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


PRIVATE_KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
    "-----END RSA PRIVATE KEY-----\n"
)


SECRETS = (AWS_KEY, AWS_SECRET, GITHUB, "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0t")


def no_secret_printed(*texts: str) -> None:
    for text in texts:
        for secret in SECRETS:
            assert secret not in text


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (f'aws_access_key_id = "{AWS_KEY}"\n', "AWS Access Key"),
        (f"GITHUB_TOKEN={GITHUB}\n", "GitHub Token"),
        (PRIVATE_KEY, "Private Key"),
        ('DB_PASSWORD = "correct-horse-battery-staple-91"\n', "Secret Keyword"),
        (f'blob = "{AWS_SECRET}"\n', "High Entropy String"),
    ],
)
def test_detectors(text: str, kind: str) -> None:
    found = scan_text("settings.py", ("x = 1\n" * 3 + text).encode())
    assert found and kind in found[0][1]
    assert found[0][0] == 4  # the line, counted from 1


def test_clean_code_and_binary_files_have_no_findings() -> None:
    code = b"def add(a, b):\n    return a + b\n\nVERSION = '1.2.3'\nurl = 'https://example.com/x'\n"
    assert scan_text("m.py", code) == []
    assert scan_text("img.png", b"\x89PNG\0\0" + AWS_KEY.encode()) == []
    allowed = f'token = "{AWS_SECRET}"  # pragma: allowlist secret\n'.encode()
    assert scan_text("m.py", allowed) == []


def test_candidate_lines_cover_every_finding() -> None:
    text = "a = 1\n" + f'key = "{AWS_SECRET}"\n' + "b = 2\n" + PRIVATE_KEY
    assert {2, 4}.issubset(candidate_lines(text))
    assert 1 not in candidate_lines(text)


def test_scan_names_file_line_and_fingerprint_never_the_secret(repo: Repo) -> None:
    repo.write("src/app.py", f"print('hello')\nAWS_KEY = '{AWS_KEY}'\n")
    repo.write("deploy/settings.ini", f"GITHUB_TOKEN={GITHUB}\n")
    repo.git("add", "src/app.py")
    repo.write("src/app.py", "print('hello')\n")  # staged secret, clean work tree
    save = repo.cp("save")
    assert "possible secret saved" in save.stderr
    proc = repo.cp("scan", expect=1)
    assert "src/app.py:2: AWS Access Key" in proc.stdout and "index" in proc.stdout
    assert "deploy/settings.ini:1:" in proc.stdout
    no_secret_printed(save.stdout, save.stderr, proc.stdout, proc.stderr)
    data = repo.cp_json("scan", expect=1)
    assert {f["path"] for f in data["findings"]} == {"src/app.py", "deploy/settings.ini"}
    no_secret_printed(str(data))


def test_a_secret_already_in_the_base_is_not_reported(repo: Repo) -> None:
    repo.write("legacy.py", f"KEY = '{AWS_KEY}'\n")
    repo.commit_all("an old mistake, already public")
    repo.write("legacy.py", f"KEY = '{AWS_KEY}'\nother = 1\n")
    repo.cp("save")
    assert "no secrets found" in repo.cp("scan").stdout


def test_secrets_allow_by_path_and_by_fingerprint(repo: Repo) -> None:
    repo.write("tests/fixtures/fake.py", f"KEY = '{AWS_KEY}'\n")
    repo.write("conf.py", f"TOKEN = '{GITHUB}'\n")
    repo.cp("save")
    found = repo.cp_json("scan", expect=1)["findings"]
    fingerprint = next(f["fingerprint"] for f in found if f["path"] == "conf.py")
    repo.write(".checkpoint.yaml", f"secrets:\n  allow: ['tests/fixtures/*', '{fingerprint}']\n")
    repo.cp("save")
    assert "no secrets found" in repo.cp("scan").stdout


def test_on_save_block_refuses_and_saves_nothing(repo: Repo) -> None:
    repo.write(".checkpoint.yaml", "secrets: {on_save: block}\n")
    repo.commit_all("block secrets")
    repo.write("conf.py", f"TOKEN = '{GITHUB}'\n")
    proc = repo.cp("save", expect=3)
    assert "conf.py:1" in proc.stderr and "nothing saved" in proc.stderr
    no_secret_printed(proc.stderr)
    assert repo.git("for-each-ref", "refs/checkpoints") == ""
    repo.write(".checkpoint.yaml", "secrets: {on_save: ignore}\n")
    quiet = repo.cp("save")
    assert "secret" not in quiet.stderr


def test_auto_saves_do_not_scan_in_warn_mode(repo: Repo) -> None:
    repo.write("conf.py", f"TOKEN = '{GITHUB}'\n")
    assert "possible secret" not in repo.cp("save", "--auto").stderr


def test_push_blocks_on_a_secret_and_allow_secrets_lets_it_go(repo: Repo, tmp_path: Path) -> None:
    url = bare_repo(tmp_path / "server.git").as_uri()
    publish(repo, url)
    repo.write("clean.txt", "fine\n")
    repo.cp("save", "-m", "clean")
    repo.write("conf.py", f"AWS_SECRET_ACCESS_KEY = '{AWS_SECRET}'\n")
    repo.cp("save", "-m", "leaky")
    before = remote_refs(repo)
    proc = repo.cp("push", expect=3)
    assert "secrets found in main/cp_002, nothing pushed" in proc.stderr
    assert "main/cp_002: conf.py:1:" in proc.stderr and "--allow-secrets" in proc.stderr
    no_secret_printed(proc.stdout, proc.stderr)
    assert remote_refs(repo) == before  # not even the clean cp_001
    ok = repo.cp("push", "--allow-secrets")
    assert "pushed 2 checkpoints" in ok.stdout and "pushed with a secret" in ok.stderr
    no_secret_printed(ok.stdout, ok.stderr)
    assert "refs/checkpoints/main/cp_002" in remote_refs(repo)


def test_push_warn_mode_pushes_and_says_so(repo: Repo, tmp_path: Path) -> None:
    url = bare_repo(tmp_path / "server.git").as_uri()
    publish(repo, url)
    repo.git("config", "checkpoint.secretsOnPush", "warn")
    repo.write("conf.py", f"TOKEN = '{GITHUB}'\n")
    repo.cp("save")
    proc = repo.cp("push")
    assert "pushed with a secret: main/cp_001: conf.py:1" in proc.stderr


def _rows(count: int) -> bytes:
    return b"".join(b"2026-12-01,%d,sensor-7,ok\n" % n for n in range(count))


def _peak_rss_kib(repo: Repo, *args: str) -> tuple[int, subprocess.CompletedProcess[str]]:
    """Run `git checkpoint ARGS` from a fresh Python; the largest RSS of its processes."""
    script = (
        "import json, resource, subprocess, sys\n"
        "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "print(json.dumps([resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,"
        " p.returncode, p.stdout, p.stderr]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, "git", "checkpoint", *args],
        cwd=repo.path,
        capture_output=True,
        text=True,
        check=True,
    )
    rss, code, stdout, stderr = json.loads(out.stdout)
    return rss, subprocess.CompletedProcess(args, code, stdout, stderr)


def test_a_big_changed_file_is_not_read_and_its_neighbours_are_scanned(repo: Repo) -> None:
    big = _rows(3 * MAX_BLOB_BYTES // 28)  # 27 MB, each line its own
    repo.write("data/readings.csv", big)
    repo.commit_all("data")
    repo.cp("save", "-m", "base")
    repo.write("data/readings.csv", big + b"2026-12-02,0,sensor-7,ok\n")
    repo.write("deploy/settings.ini", f"GITHUB_TOKEN={GITHUB}\n")  # after it in the stream

    rss, save = _peak_rss_kib(repo, "save", "-m", "one more row")

    assert save.returncode == 0, save.stderr
    assert "possible secret saved" in save.stderr and "deploy/settings.ini" in save.stderr
    no_secret_printed(save.stdout, save.stderr)
    # Two versions read whole, decoded and split into a set of lines would take 300+ MB
    # here (700 MB with a 23 MB CSV); left unread, the process stays near its usual 30 MB.

    assert rss < 120 * 1024, rss


@pytest.mark.parametrize("mode", ["block", "warn"])
def test_a_secret_named_file_never_reaches_the_object_store(repo: Repo, mode: str) -> None:
    repo.write(".checkpoint.yaml", f"secrets: {{on_save: {mode}}}\n")
    secret = b"API_KEY=early-attack-0123456789\n"
    repo.write(".env", secret)
    repo.write("notes.txt", "fine\n")
    proc = repo.cp("save", "-m", "x", expect=3 if mode == "block" else 0)
    no_traceback(proc)
    assert ".env" in proc.stderr + proc.stdout
    assert not blob_stored(repo, secret)
    if mode == "warn":
        _, u = saved_paths(repo, latest_ref(repo))
        assert "notes.txt" in u and ".env" not in u


# One line each detector of detect-secrets fires on (its own shapes and words).
DETECTOR_SAMPLES = [
    f'aws_access_key_id = "{AWS_KEY}"',
    f'aws_secret = "{AWS_SECRET}"',
    f"token: {GITHUB}",
    "glpat-" + "AbCdEfGhIjKlMnOpQrSt12",
    'conn = "DefaultEndpointsProtocol=https;AccountKey=' + "A" * 86 + '=="',
    "url = 'https://user:hunter2pass@example.com/repo'",
    'artifactory = "AKCp5budaTn1jn4qXgTjbj8PLJ2GPvHd7bQtAHgmyGa7bQWvHJsnbbPfrjTX2j6BnTH8V4Vmv"',
    "mailchimp = '343ea45721923ed956e2b38c31db76aa-us30'",
    "//registry.npmjs.org/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789",
    "openai = 'sk-abcdefghijklmnopqrst" + "T3BlbkFJ" + "abcdefghijklmnopqrst'",
    "pypi = 'pypi-AgEIcHlwaS5vcmc" + "A" * 70 + "'",
    "sendgrid = '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'",
    "slack = 'xoxb-1234567890-1234567890123-abcdefghijklmnopqrstuvwx'",
    "webhook = 'https://hooks.slack.com/services/T12345678/B12345678/abcdefghijklmnop'",
    "square = 'sq0csp-" + "A" * 43 + "'",
    "stripe = 'sk_live_" + "a1" * 12 + "'",
    "telegram = '1234567890:AAHabcdefghijklmnopqrstuvwxyz0123456'",
    "twilio = 'AC" + "a1b2c3d4" * 4 + "'",
    "discord = 'MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs'",
    "jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abcdefghij'",
    'password = "correct-horse-battery-staple-91"',
    'cloudant_password = "' + "a" * 64 + '"',
    'ibm_cloud_iam_api_key = "' + "a1B2" * 11 + '"',
    'blob = "9f86d081884c7d659a2feaa0c55ad015"',  # hex, quoted
    "-----BEGIN OPENSSH PRIVATE KEY-----",
]


def test_the_prefilter_keeps_every_line_a_detector_fires_on() -> None:
    """Every detector sample is a candidate and is found; and on real code (this
    package's own modules and tests, secrets in its fixtures included) the lines the
    prefilter keeps yield every finding that reading all lines yields."""
    from git_checkpoint.save.secrets import _engine

    engine = _engine()
    for line in DETECTOR_SAMPLES:
        assert candidate_lines(line) == [1], line
        assert list(engine.scan_lines("sample.py", [line], [1])), line
    root = Path(__file__).parents[2]
    corpus = [*sorted((root / "git_checkpoint" / "save").glob("*.py")), Path(__file__)]
    for path in corpus:
        lines = path.read_text().split("\n")
        every = {s.line_number for s in engine.scan_lines(path.name, lines, range(1, len(lines)))}
        kept = set(candidate_lines("\n".join(lines)))
        assert every <= kept, (path, sorted(every - kept))


def test_the_prefilter_keeps_every_quoted_run_a_high_entropy_detector_reports() -> None:
    """Quoted runs of many alphabets and lengths, their entropy spread across both
    detectors' limits: every line a detector reports is a candidate, and lines of runs
    too plain for either are not."""
    engine = _engine()
    limits = {
        type(p).__name__: p.entropy_limit for p in engine._plugins if hasattr(p, "entropy_limit")
    }
    assert limits == {"Base64HighEntropyString": BASE64_LIMIT, "HexHighEntropyString": HEX_LIMIT}
    rng = random.Random(20261207)
    base64 = string.ascii_letters + string.digits + "+/-_="
    alphabets = [string.digits, "0123456789abcdef", string.hexdigits, base64, "abcdefghij"]
    lines = []
    for _ in range(1200):
        alphabet = rng.choice(alphabets)
        chars = rng.sample(alphabet, rng.randint(2, len(alphabet)))
        run = "".join(rng.choice(chars) for _ in range(rng.randint(6, 40)))
        quote = rng.choice("'\"")
        lines.append(f"value = {quote}{run}{quote}")
    fired = {s.line_number for s in engine.scan_lines("runs.py", lines, range(1, len(lines) + 1))}
    kept = set(candidate_lines("\n".join(lines)))
    assert fired <= kept, sorted(fired - kept)[:5]
    assert len(fired) > 100 and len(kept) < len(lines) * 3 // 4, (len(fired), len(kept))


def test_a_save_with_many_findings_says_how_many_more_and_where(repo: Repo) -> None:
    """A save names five findings; past five it says how many more there are and the
    command that lists every one, on its normal output and the hook's alike."""
    for n in range(7):
        repo.write(f"conf/keys_{n}.py", f'aws_key = "{AWS_KEY[:-1]}{n}"\n')
    save = repo.cp("save", "-m", "keys")
    shown = [line for line in save.stderr.splitlines() if "possible secret saved:" in line]
    assert len(shown) == 6, save.stderr
    task = repo.git("symbolic-ref", "--short", "HEAD").strip()
    assert f"and 2 more (`git checkpoint scan {task}/cp_001` lists every one)" in shown[-1]
    scan = repo.cp("scan", f"{task}/cp_001", expect=1)
    assert sum(f"conf/keys_{n}.py" in scan.stdout for n in range(7)) == 7
    no_secret_printed(save.stdout, save.stderr, scan.stdout)
