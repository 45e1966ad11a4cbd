"""`git checkpoint review [TASK|REMOTE/TASK] [--format text|markdown|json|html]`: the
task's timeline, as terminal lines, as markdown that pastes into a pull-request
description, or as one self-contained HTML page (review_page.py).
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from ..core.errors import UsageError
from ..core.records import to_the_second
from ..core.text import counted
from ..share.review import Timeline, TimelineEntry, VerifierRun, build_timeline
from .context import Context
from .review_page import render_page

FORMATS = ("text", "markdown", "json", "html")
MARKDOWN_FILES = 50  # files listed for one checkpoint in markdown (all are in the page)
# Markdown's punctuation, escaped in free text so a message cannot become a link, an
# image, a heading or raw HTML in the rendered description.
_MARKDOWN = re.compile(r"([\\`*_\[\]<>|#!~&{}])")


def _cell(text: str) -> str:
    return _MARKDOWN.sub(r"\\\1", text.replace("\n", " "))


def _code(text: str) -> str:
    """`text` as a markdown code span, whatever backticks it holds."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _fenced(text: str) -> list[str]:
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=2)
    fence = "`" * (longest + 1)
    return [f"{fence}text", *text.split("\n"), fence]


def _run_cell(r: VerifierRun) -> str:
    """A run in the timeline table, short: `unit failed (exit 1) by Rita Reviewer`."""
    runner = r.runner()
    return r.short() + (f" by {runner}" if runner else "")


@dataclass(frozen=True)
class ReviewResult:
    timeline: Timeline
    format: str = "text"

    def lines(self) -> list[str]:
        if self.format == "html":
            return self.document().splitlines()
        return self._markdown() if self.format == "markdown" else self._text()

    def document(self) -> str:
        """The whole output as one text, as it is written to a file or a pipe."""
        if self.format == "html":
            return render_page(self.timeline)
        if self.format == "json":
            return json.dumps(asdict(self), ensure_ascii=False) + "\n"
        return "\n".join(self.lines()) + "\n"

    def _title(self) -> str:
        where = f" (fetched from {self.timeline.remote})" if self.timeline.remote else ""
        return (
            f"task {self.timeline.task}{where}: {counted(len(self.timeline.entries), 'checkpoint')}"
        )

    def _text(self) -> list[str]:
        out = [self._title()]
        for e in self.timeline.entries:
            label = f"{e.id} [{e.kind}]" if e.kind != "checkpoint" else e.id
            out.append(f"{label:<22} {e.created_at}  {e.status:<9} {e.message}".rstrip())
            if e.malformed:
                out.append(f"    malformed: {e.malformed}")
            out.append(f"    changes: {', '.join(e.diffs())}")
            for r in e.verifiers:
                code = f" (exit {r.exit_code})" if r.status == "failed" else ""
                out.append(
                    f"    verifier {r.name}: {r.status}{code}{r.who()} at {to_the_second(r.at)}"
                )
            for f in e.forced:
                out.append(f"    forced promotion by {f.by} at {to_the_second(f.at)}: {f.reason}")
            if e.hypothesis:
                out.append(f"    hypothesis: {e.hypothesis}")
        return out

    def _markdown(self) -> list[str]:
        out = [
            f"### Checkpoints: {_cell(self._title())}",
            "",
            "| checkpoint | kind | created | status | verifiers | changes | message |",
            "|---|---|---|---|---|---|---|",
        ]
        for e in self.timeline.entries:
            status = f"{e.status} (malformed: {e.malformed})" if e.malformed else e.status
            runs = "; ".join(_run_cell(r) for r in e.verifiers) or "not verified"
            cells = [e.kind, e.created_at, status, runs, ", ".join(e.diffs()), e.message]
            out.append(f"| `{e.id}` | " + " | ".join(_cell(c) for c in cells) + " |")
        forced = [(e, f) for e in self.timeline.entries for f in e.forced]
        if forced:
            out += ["", "Forced promotions:", ""]
            out += [
                f"- `{e.id}` by {_cell(f.by)} at {to_the_second(f.at)}: {_cell(f.reason)}"
                for e, f in forced
            ]
        for e in self.timeline.entries:
            out += ["", *self._markdown_entry(e)]
        return out

    def _markdown_entry(self, e: TimelineEntry) -> list[str]:
        out = [f"#### `{e.id}` {_cell(e.kind)}: {_cell(e.status)}", ""]
        against = "base" if e.changes_against == "base" else f"`{e.changes_against}`"
        if not e.files_total:
            out.append(f"No change vs {against}.")
        else:
            out += [f"{counted(e.files_total, 'file')} changed vs {against}:", ""]
            for f in e.files[:MARKDOWN_FILES]:
                out.append(f"- {_code(f.path)} {f.counts()} ({f.status_word()})")
            if e.files_total > MARKDOWN_FILES:
                out.append(f"- … and {e.files_total - MARKDOWN_FILES} more")
        if e.verifiers:
            out += ["", "Verifier runs:", ""]
            out += [f"- {_cell(r.line())}" for r in e.verifiers]
        for r in e.verifiers:
            if r.status == "passed" or not r.output_tail:
                continue
            count = r.output_tail.count("\n") + 1
            summary = html.escape(f"{_run_cell(r)}: its last {counted(count, 'line')}")
            out += ["", f"<details><summary>{summary}</summary>", "", *_fenced(r.output_tail)]
            out += ["", "</details>"]
        return out


@dataclass(frozen=True)
class Written:
    path: str
    format: str
    bytes: int

    def lines(self) -> list[str]:
        return [f"review ({self.format}) written to {self.path}"]


def write(result: ReviewResult, path: str) -> Written:
    """The review into a file (the user's: replaced whole)."""
    data = result.document().encode("utf-8")
    try:
        Path(path).write_bytes(data)
    except OSError as exc:
        raise UsageError(f"cannot write the review to {path}: {exc.strerror or exc}") from None
    return Written(path, result.format, len(data))


def run(ctx: Context, task: str | None, *, fmt: str) -> ReviewResult:
    timeline = build_timeline(ctx.repo, task or ctx.task(), with_patches=fmt == "html")
    return ReviewResult(timeline, fmt)
