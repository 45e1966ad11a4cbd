"""`git checkpoint review [TASK|REMOTE/TASK] [--format text|markdown|json]`: the task's
timeline, in a form that pastes into a pull-request description.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..share.review import Timeline, TimelineEntry, VerifierRun, build_timeline
from .context import Context

FORMATS = ("text", "markdown", "json")


def _runs(runs: list[VerifierRun]) -> str:
    if not runs:
        return "not verified"
    parts = []
    for r in runs:
        who = f" on {r.host}" if r.host else (f" ({r.where})" if r.where else "")
        parts.append(f"{r.name} {r.status}{who} at {r.at}")
    return "; ".join(parts)


def _diffs(e: TimelineEntry) -> list[str]:
    """Against the rollback point and the one before; once when they are the same one
    (the first attempt of a run)."""
    shown = list(dict.fromkeys(d.text() for d in (e.against_rollback, e.against_previous) if d))
    return shown or [e.against_base.text()]


@dataclass(frozen=True)
class ReviewResult:
    timeline: Timeline
    format: str = "text"

    def lines(self) -> list[str]:
        return self._markdown() if self.format == "markdown" else self._text()

    def _title(self) -> str:
        where = f" (fetched from {self.timeline.remote})" if self.timeline.remote else ""
        return f"task {self.timeline.task}{where}: {len(self.timeline.entries)} checkpoint(s)"

    def _text(self) -> list[str]:
        out = [self._title()]
        for e in self.timeline.entries:
            label = f"{e.id} [{e.kind}]" if e.kind != "checkpoint" else e.id
            out.append(f"{label:<22} {e.created_at}  {e.status:<9} {e.message}".rstrip())
            if e.malformed:
                out.append(f"    malformed: {e.malformed}")
            out.append(f"    changes: {', '.join(_diffs(e))}")
            for r in e.verifiers:
                who = f" on {r.host}" if r.host else (f" in {r.where}" if r.where else "")
                code = f" (exit {r.exit_code})" if r.status == "failed" else ""
                out.append(f"    verifier {r.name}: {r.status}{code}{who} at {r.at}")
            for f in e.forced:
                out.append(f"    forced promotion by {f.by} at {f.at}: {f.reason}")
            if e.hypothesis:
                out.append(f"    hypothesis: {e.hypothesis}")
        return out

    def _markdown(self) -> list[str]:
        def cell(text: str) -> str:
            return text.replace("|", "\\|").replace("\n", " ")

        out = [
            f"### Checkpoints: {cell(self._title())}",
            "",
            "| checkpoint | kind | created | status | verifiers | changes | message |",
            "|---|---|---|---|---|---|---|",
        ]
        for e in self.timeline.entries:
            status = f"{e.status} (malformed: {e.malformed})" if e.malformed else e.status
            out.append(
                "| "
                + " | ".join(
                    cell(x)
                    for x in (
                        f"`{e.id}`",
                        e.kind,
                        e.created_at,
                        status,
                        _runs(e.verifiers),
                        ", ".join(_diffs(e)),
                        e.message,
                    )
                )
                + " |"
            )
        forced = [(e, f) for e in self.timeline.entries for f in e.forced]
        if forced:
            out += ["", "Forced promotions:", ""]
            out += [f"- `{e.id}` by {cell(f.by)} at {f.at}: {cell(f.reason)}" for e, f in forced]
        return out


def run(ctx: Context, task: str | None, *, fmt: str) -> ReviewResult:
    return ReviewResult(build_timeline(ctx.repo, task or ctx.task()), fmt)
