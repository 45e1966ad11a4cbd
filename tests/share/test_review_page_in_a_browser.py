"""`review --format html` is one page a browser opens on its own: no console error, no
request past the page itself, every checkpoint of the task with each machine's evidence
and its patch; and what a checkpoint or a note holds is shown as text, never run or
loaded. Opened in headless Chromium (browser.py); skipped where it is not installed."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from ..conftest import Repo
from ..servers import bare_repo, clone, publish
from .browser import PageReport, find_chromium, open_page

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)"
)

CHECK = """\
from src.calc import add
for a, b in [(1, 2), (2, 3), (5, 5)]:
    print(f"add({a}, {b}) = {add(a, b)}")
assert add(2, 3) == 5, f"add(2, 3) should be 5, got {add(2, 3)}"
"""
AGENT = """\
if [ "$CHECKPOINT_ATTEMPT" = 1 ]; then
  printf 'def add(a, b):\\n    return a * b\\n' > src/calc.py
else
  printf 'def add(a, b):\\n    \"\"\"The sum of a and b.\"\"\"\\n    return a + b\\n' > src/calc.py
  printf '# calc\\n\\nadd() sums.\\n' > docs/calc.md
fi
"""
SECTIONS = (
    "[...document.querySelectorAll('section[data-checkpoint]')].map(s => s.dataset.checkpoint)"
)
REVIEWER = {"GIT_COMMITTER_NAME": "Rita Reviewer", "GIT_COMMITTER_EMAIL": "rita@example.com"}


def task_verified_on_two_machines(repo: Repo, tmp_path: Path) -> Repo:
    """An agent's run (attempt 1 fails, attempt 2 passes) on machine A, pushed; machine
    B fetches, verifies the passing attempt and pushes its evidence back; A fetches."""
    a = publish(repo, bare_repo(tmp_path / "server.git").as_uri())
    a.write("src/calc.py", "def add(a, b):\n    return a - b\n")
    a.write("check_calc.py", CHECK)
    a.write("agent.sh", AGENT)
    a.write("docs/.keep", "")
    a.write(".checkpoint.yaml", "verifiers:\n  - {name: unit, command: python3 check_calc.py}\n")
    a.commit_all("calc and its check")
    a.cp("run", "--attempts", "2", "--", "sh", "agent.sh")
    a.cp("push")
    b = clone(a.git("remote", "get-url", "origin").strip(), tmp_path / "b")
    b.cp("fetch")
    b.cp("verify", "origin/main/cp_004", env=REVIEWER)
    b.cp("push")
    a.cp("fetch")
    return a


def report_of(repo: Repo, *expressions: str, width: int | None = None) -> PageReport:
    page = repo.path.parent / "review.html"
    assert (
        "review (html) written to" in repo.cp("review", "--format", "html", "-o", str(page)).stdout
    )
    assert CHROMIUM is not None
    return open_page(CHROMIUM, page, expressions, screenshot_width=width)


def test_the_page_opens_clean_with_every_checkpoint(repo: Repo, tmp_path: Path) -> None:
    a = task_verified_on_two_machines(repo, tmp_path)
    expected = [c["name"] for c in a.cp_json("list")["checkpoints"] if not c["safety"]]
    assert expected == ["main/cp_001", "main/cp_002", "main/cp_004"]
    runs = "document.querySelector('#cp-cp_004 table.runs').innerText"
    tail = "document.querySelector('#cp-cp_002 pre.tail').innerText"
    added = "[...document.querySelectorAll('#cp-cp_004 .l.add')].map(l => l.innerText)"
    loads = "document.scripts.length + document.images.length + document.styleSheets.length"
    report = report_of(a, SECTIONS, runs, tail, added, loads, width=1280)

    assert report.errors == []
    assert report.requests == [report.url]  # the page itself, and nothing else
    assert report.values[SECTIONS] == expected
    assert "Test Committer <committer@example.com>" in report.values[runs]
    assert "Rita Reviewer <rita@example.com>" in report.values[runs]
    assert report.values[tail].endswith("AssertionError: add(2, 3) should be 5, got 6")
    assert '+    """The sum of a and b."""' in report.values[added]
    assert "+add() sums." in report.values[added]
    assert report.values[loads] == 1  # its one inline style sheet
    shot = report.screenshot or b""
    assert shot.startswith(b"\x89PNG\r\n\x1a\n")
    assert struct.unpack(">I", shot[16:20])[0] == 1280  # the PNG's width


def test_text_from_a_checkpoint_is_never_run_or_loaded(repo: Repo) -> None:
    hostile = (
        '<img src="http://127.0.0.1:9/i.png"><link rel="stylesheet" '
        'href="http://127.0.0.1:9/s.css"><script>console.error("ran")</script>'
    )
    repo.write("<b>bold</b>.html", hostile + "\n\x1b[31mred\n")
    repo.cp("save", "-m", hostile)
    # A verifier's result as another machine's notes could carry it.
    event = {
        "at": "2026-01-01T00:00:00Z", "event": "verifier", "name": "<i>v</i>", "status": "failed",
        "exit_code": 3, "by": "<b>someone</b>", "where": "<i>there</i>", "output_tail": hostile,
    }  # fmt: skip
    commit = repo.git("rev-parse", "refs/checkpoints/main/cp_001").strip()
    repo.git("notes", "--ref=checkpoints", "add", "-m", json.dumps(event), commit)
    text = "document.body.innerText"
    count = "document.querySelectorAll('script, img, link, b, i').length"
    report = report_of(repo, text, count)
    assert report.errors == []
    assert report.requests == [report.url]
    assert report.values[count] == 0
    shown = report.values[text]
    assert shown.count(hostile) >= 3  # the message, the file's line, the verifier's output
    assert "<b>bold</b>.html" in shown and "<i>v</i>" in shown and "<b>someone</b>" in shown
    assert "\\x1b[31mred" in shown and "\x1b" not in shown


def test_the_browser_check_sees_errors_and_requests(tmp_path: Path) -> None:
    """The checks above can fail: a page that logs an error and loads an image is caught."""
    page = tmp_path / "bad.html"
    page.write_text(
        '<!DOCTYPE html><img src="http://127.0.0.1:9/i.png">'
        "<script>console.error('seen')</script>"
    )
    assert CHROMIUM is not None
    report = open_page(CHROMIUM, page)
    assert "http://127.0.0.1:9/i.png" in report.requests
    assert any("seen" in e for e in report.errors)
