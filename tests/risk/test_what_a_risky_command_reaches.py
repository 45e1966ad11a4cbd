"""A verdict names where its risky commands act (the folder each runs in and the paths
it names), so that a hook can save those repositories; and judging costs a bounded
amount of work whatever the line: too long, or wrappers nested too deep, is risky."""

from __future__ import annotations

import pytest

from git_checkpoint.risk.classify import MAX_LINE, classify


@pytest.mark.parametrize(
    ("line", "where"),
    [
        ("git reset --hard", ("/w",)),
        ("rm -rf src", ("/w",)),
        ("cd /b && git reset --hard", ("/b",)),
        ("cd sub; git clean -fd", ("/w/sub",)),
        ("git -C /b checkout -- .", ("/b",)),
        ("git -C ../b checkout -- .", ("/w/../b",)),
        ("git --work-tree=/b --git-dir=/b/.git reset --hard", ("/b", "/b/.git")),
        ("env -C /b git reset --hard", ("/b",)),
        ("(cd /b; rm -rf out); git status", ("/b",)),
        ("ls; cd /b; ls; rm -rf /c/x", ("/c/x",)),
        ("rm -rf /c/x ../d/y", ("/c/x", "/w/../d/y")),
        ("cp /etc/hostname /etc/passwd", ("/etc/passwd", "/etc/hostname")),
        ("bash -c 'cd /b && git stash drop'", ("/b",)),
        ("git reset --hard; git -C /b reset --hard", ("/w", "/b")),
        ("echo x > /etc/hostname", ("/etc/hostname",)),
    ],
)
def test_a_verdict_names_where_the_risky_commands_act(line: str, where: tuple[str, ...]) -> None:
    verdict = classify(line, cwd="/w")
    assert verdict.risky
    assert verdict.where == where


def test_harmless_commands_name_nothing() -> None:
    verdict = classify("cd /b && git status; ls /c", cwd="/w")
    assert not verdict.risky
    assert verdict.where == ()


def test_paths_a_harmless_command_names_are_not_counted() -> None:
    """`cat /c/x` reads; only the risky command's own paths are where it acts."""
    verdict = classify("cat /c/x && rm -rf /d/y", cwd="/w")
    assert "/c/x" not in verdict.where
    assert "/d/y" in verdict.where


def test_a_line_too_long_to_judge_is_risky_at_once() -> None:
    verdict = classify("ls " * (MAX_LINE // 3 + 1), cwd="/w")
    assert verdict.risky
    assert "too long to judge" in verdict.reason
    assert verdict.where == ("/w",)


@pytest.mark.parametrize("wrapper", ["env ", "sudo ", "nice ", "timeout 1 ", "xargs ", "command "])
def test_wrappers_nested_thousands_deep_are_risky_not_judged_to_the_end(wrapper: str) -> None:
    """Each wrapper judges the words after it again: the square of the line's length."""
    line = wrapper * ((MAX_LINE - 8) // len(wrapper)) + "ls"
    verdict = classify(line, cwd="/w")
    assert verdict.risky
    assert "too many commands within commands" in verdict.reason


def test_a_long_harmless_line_within_the_limit_is_still_judged() -> None:
    line = "; ".join(["git status", "ls -la", "cat README.md"] * 300)
    assert len(line) < MAX_LINE
    assert not classify(line, cwd="/w").risky


def test_a_folder_longer_than_any_path_is_unknown() -> None:
    """A 200 KB `cwd` names no folder: where a command runs there is unknown."""
    verdict = classify("echo x > out.txt", cwd="/" + "a/" * 100_000)
    assert verdict.risky
    assert "may overwrite" in verdict.reason
