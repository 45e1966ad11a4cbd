"""`review --format markdown` pastes into a pull request: each checkpoint's changed files
with their line counts, and a failing verifier's last lines in a collapsible block;
text from checkpoints and notes cannot become markup, a link or a terminal escape."""

from __future__ import annotations

import re

from ..conftest import Repo

# Forty numbered lines, then what would break out of a code block, a details block or a
# terminal; exit 1 unless answer.txt holds 2.
CHECK = r"""i=1
while [ $i -le 40 ]; do echo "line $i"; i=$((i + 1)); done
printf '\033[31mred\033[0m and ``` and </details> and \342\200\256evil\n'
grep -q 2 answer.txt
"""
AGENT = "echo $CHECKPOINT_ATTEMPT > answer.txt"


def run_two_attempts(repo: Repo) -> None:
    repo.write("check.sh", CHECK)
    repo.write(".checkpoint.yaml", "verifiers:\n  - {name: answer, command: sh check.sh}\n")
    repo.commit_all("config")
    repo.cp("run", "--attempts", "2", "--", "sh", "-c", AGENT, expect=0)


def section(markdown: str, cp_id: str) -> str:
    start = markdown.index(f"#### `{cp_id}`")
    end = markdown.find("#### `", start + 1)
    return markdown[start : end if end > 0 else None]


def test_each_checkpoint_lists_its_files_and_a_failures_last_lines(repo: Repo) -> None:
    run_two_attempts(repo)
    markdown = repo.cp("review", "--format", "markdown").stdout

    first = section(markdown, "cp_002")  # attempt 1: failed
    assert first.startswith("#### `cp_002` attempt 1: rejected\n")
    assert "1 file changed vs `cp_001`:\n\n- `answer.txt` +1 -0 (added)\n" in first
    summary = re.search(r"<details><summary>(.*)</summary>\n\n````text\n", first)
    assert summary, first
    assert summary[1] == "answer failed (exit 1) by Test Committer: its last 30 lines"
    tail = first[summary.end() : first.index("\n````\n\n</details>")].split("\n")
    assert tail[0] == "line 12" and tail[-2] == "line 40"  # the last 30 lines, in order
    assert tail[-1] == "\\x1b[31mred\\x1b[0m and ``` and </details> and \\u202eevil"

    second = section(markdown, "cp_004")  # attempt 2: passed, no block
    assert "- `answer.txt` +1 -0 (added)" in second
    assert "<details>" not in second
    assert "\x1b" not in markdown and "\u202e" not in markdown


def test_text_from_a_checkpoint_stays_text(repo: Repo) -> None:
    repo.write("we`ird.txt", "x\n")
    repo.write("src/app.py", "print('changed')\nprint('more')\n")
    repo.cp("save", "-m", "<img src=x onerror=alert(1)> [click](http://example.com) *bold*")
    markdown = repo.cp("review", "--format", "markdown").stdout
    row = markdown.splitlines()[4]
    assert row.endswith(
        "| \\<img src=x onerror=alert(1)\\> \\[click\\](http://example.com) \\*bold\\* |"
    )
    assert not re.search(r"(?<!\\)<img", markdown)  # never unescaped
    files = section(markdown, "cp_001")
    assert "2 files changed vs base:" in files
    assert "- `src/app.py` +2 -1 (modified)" in files
    assert "- ``we`ird.txt`` +1 -0 (added)" in files  # a backtick in a name: a longer fence
