"""A modified file's secret scan reads only the lines its old version lacks, and names
each secret there by its line in the new file: the first line, the last one without a
newline, lines ending in CRLF, a line the old version had elsewhere (not reported), a
new line written twice (both reported). What it finds is what a scan of the whole new
file finds on those lines; text before a secret that changes length when lowercased
(a dotted capital I) moves no finding to another line.
"""

from __future__ import annotations

import pytest

from git_checkpoint.save.secrets import scan_text

AWS_KEY = "AKIAZ3MHPQRS7TUVWXYZ"
GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
KEYWORD = 'password = "Xk9#mQ2$vL7pR4wZ"'
AWS = f'aws_key = "{AWS_KEY}"'
TOKEN = f'token = "{GITHUB}"'
PLAIN = [f"x{n} = {n}" for n in range(6)]


def whole_file_then_filtered(data: bytes, old: bytes) -> list[tuple[int, str, str]]:
    """The findings of a scan of the whole new file, on the lines the old one lacks."""
    before = set(old.decode("utf-8", "replace").split("\n"))
    lines = data.decode("utf-8", "replace").split("\n")
    return [f for f in scan_text("app.py", data) if lines[f[0] - 1] not in before]


CASES = {
    # name: (old lines, new lines, newline, lines of the new file a finding is on)
    "first line": (PLAIN, [KEYWORD, *PLAIN], "\n", [1]),
    "last line, no newline at the end": (PLAIN, [*PLAIN, AWS], "", [7]),
    "crlf": (PLAIN, [PLAIN[0], TOKEN, *PLAIN[1:], KEYWORD], "\r\n", [2, 8]),
    "crlf, last line without one": (PLAIN, [*PLAIN, TOKEN], "", [7]),
    "old had the line elsewhere": ([KEYWORD, *PLAIN], [*PLAIN, KEYWORD, AWS], "\n", [8]),
    "a new line written twice": (PLAIN, [TOKEN, *PLAIN[:3], TOKEN, *PLAIN[3:]], "\n", [1, 5]),
    "new lines among old ones": (
        PLAIN,
        [PLAIN[0], AWS, PLAIN[1], PLAIN[2], "y = 2", KEYWORD, *PLAIN[3:], TOKEN],
        "\n",
        [2, 6, 10],
    ),
    "every line new": (PLAIN, [AWS, KEYWORD, TOKEN], "\n", [1, 2, 3]),
    "only old lines, reordered": ([KEYWORD, AWS, *PLAIN], [*PLAIN, AWS, KEYWORD], "\n", []),
    "a dotted capital I on an old line before": (
        ["# " + "\u0130" * 40, *PLAIN],
        ["# " + "\u0130" * 40, KEYWORD, *PLAIN],
        "\n",
        [2],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_secrets_on_new_lines_are_named_by_their_line(case: str) -> None:
    old_lines, new_lines, newline, want = CASES[case]
    if case.startswith("crlf"):
        old = ("\r\n".join(old_lines) + "\r\n").encode()
        new = ("\r\n".join(new_lines) + newline).encode()
    else:
        old = ("\n".join(old_lines) + "\n").encode()
        new = ("\n".join(new_lines) + newline).encode()
    found = scan_text("app.py", new, old)
    assert [line for line, _, _ in found] == want
    assert found == whole_file_then_filtered(new, old)


@pytest.mark.parametrize("changed", [False, True])
def test_a_dotted_capital_i_before_a_secret_moves_no_finding(changed: bool) -> None:
    """A dotted capital I lowercases to two characters: counted in the lowercased
    text, the candidate pass would put a later secret on a line further down."""
    before = ["# Ankara \u0130stanbul \u0130zmir " + "\u0130" * 30, *PLAIN]
    new = "\n".join([before[0], KEYWORD, *PLAIN, AWS]).encode() + b"\n"
    old = "\n".join(before).encode() + b"\n" if changed else None
    assert [line for line, _, _ in scan_text("app.py", new, old)] == [2, 9]
