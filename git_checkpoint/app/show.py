"""`git checkpoint show`: manifest, status, verifier events, diffstat and overlay files."""

from __future__ import annotations

from dataclasses import dataclass, field

import yaml

from ..core.anytype import Any
from ..core.text import counted, escape_text, printable, quote_path
from ..gitcore.formats import EMPTY_TREE
from ..save.overlay import human_size
from ..storage.commits import overlay_paths
from ..storage.notes import derive_status, latest_results, read_events, verifier_summary
from ..storage.refs import resolve
from ..verify.verifiers import tail_lines, verifier_line
from .context import Context


@dataclass(frozen=True)
class VerifierStatus:
    name: str
    status: str
    output_tail: str = ""  # of its latest run, when that failed


@dataclass(frozen=True)
class ShowResult:
    # The seed's status object first: these names are what agents already read.
    checkpoint_id: str
    status: str
    created_before_step: str | None
    verifiers: list[VerifierStatus]
    promotion_rule: str
    on_failure: str
    # Then the rest of what a reviewer needs.
    task: str
    ref: str
    commit: str
    base_commit: str | None
    message: str
    safety: bool
    manifest: dict[str, Any]
    events: list[dict[str, Any]]
    diffstat: str
    overlay_files: list[str]
    patch: str | None
    manifest_only: bool = False
    left_out: list[dict[str, Any]] = field(default_factory=list)  # what the save did not take
    left_out_total: int = 0

    def lines(self) -> list[str]:
        if self.manifest_only:
            return yaml.safe_dump(self.manifest, sort_keys=False, allow_unicode=True).splitlines()
        out = [
            f"checkpoint {self.task}/{self.checkpoint_id}"
            + (" (safety checkpoint)" if self.safety else ""),
            f"commit:   {self.commit}",
            f"base:     {self.base_commit or '(unborn HEAD)'}",
            f"created:  {self.manifest.get('created_at', '?')}",
            f"status:   {self.status}",
        ]
        if self.message:
            out.append(f"message:  {escape_text(self.message)}")
        for key in ("hypothesis", "next_move"):
            if self.manifest.get(key):
                out.append(f"{key.replace('_', ' ')}: {escape_text(str(self.manifest[key]))}")
        session = self.manifest.get("session")
        if isinstance(session, dict):
            turn = f", turn {session['turn']}" if session.get("turn") else ""
            agent = printable(str(session.get("agent", "")), 40)
            out.append(f"session:  {agent} {printable(str(session.get('id', '')), 80)}{turn}")
        for v in self.verifiers:
            out.append(verifier_line(v.name, v.status))
            if v.status not in ("passed", "not run"):
                out += tail_lines(v.output_tail)
        for event in self.events:
            if event.get("event") in ("promoted", "rejected", "forced_promotion", "review"):
                extra = event.get("reason") or event.get("rule") or ""
                line = f"event:    {event.get('at')} {event.get('event')} {extra}"
                out.append(escape_text(line.rstrip()))
        if self.diffstat.strip():
            out.append("changes against base:")
            out += [f"  {line.strip()}" for line in self.diffstat.rstrip().splitlines()]
        else:
            out.append("changes against base: none")
        if self.overlay_files:
            out.append(f"untracked files ({len(self.overlay_files)}):")
            out += [f"  {quote_path(p)}" for p in self.overlay_files[:50]]
            if len(self.overlay_files) > 50:
                out.append(f"  … and {len(self.overlay_files) - 50} more")
        if self.left_out_total:
            out.append(f"left out ({self.left_out_total}):")
            out += [f"  {_left_out(item)}" for item in self.left_out]
            if self.left_out_total > len(self.left_out):
                out.append(f"  … and {self.left_out_total - len(self.left_out)} more")
        if self.patch:
            out += ["", *self.patch.rstrip("\n").splitlines()]
        return out


def _left_out(item: dict[str, Any]) -> str:
    """One entry of a manifest's `left_out`, as the save named it (printable: it may come
    from another machine's checkpoint)."""
    files, size = item.get("files", 1), item.get("bytes", 0)
    details = [counted(files, "file")] if isinstance(files, int) and files > 1 else []
    if isinstance(size, int) and size:
        details.append(human_size(size))
    details.append(str(item.get("why", "")))
    return f"{quote_path(str(item.get('path', '')))} ({escape_text(', '.join(details))})"


def _tail(event: dict[str, Any]) -> str:
    tail = event.get("output_tail")
    return tail if isinstance(tail, str) and event.get("status") != "passed" else ""


def run(ctx: Context, name: str, *, manifest_only: bool, patch: bool) -> ShowResult:
    repo = ctx.repo
    cp = resolve(repo, name, ctx.task())
    events = read_events(repo, cp.commit)
    latest = verifier_summary(events)
    configured = [
        str(v.get("name")) for v in cp.manifest.get("verifiers") or [] if isinstance(v, dict)
    ]
    names = list(dict.fromkeys(configured + list(latest)))
    results = latest_results(events)
    verifiers = [
        VerifierStatus(n, latest.get(n, "not run"), _tail(results.get(n, {}))) for n in names
    ]
    base = cp.base or EMPTY_TREE
    stat = repo.git("diff", "--no-color", "--stat=100", base, cp.commit)
    diffstat = stat.decode("utf-8", "replace")
    patch_text = None
    if patch:
        patch_text = repo.git("diff", "--no-color", "--binary", base, cp.commit).decode(
            "utf-8", "replace"
        )
    notes = cp.manifest.get("notes")
    step = notes[0] if isinstance(notes, list) and notes else None
    return ShowResult(
        checkpoint_id=cp.id,
        status=derive_status(events),
        created_before_step=str(step) if step is not None else None,
        verifiers=verifiers,
        promotion_rule=ctx.config.promotion_rule,
        on_failure="restore_checkpoint",
        task=cp.task,
        ref=cp.ref,
        commit=cp.commit,
        base_commit=cp.base,
        message=cp.message,
        safety=cp.is_safety,
        manifest=cp.manifest,
        events=events,
        diffstat=diffstat,
        overlay_files=overlay_paths(repo, cp),
        patch=patch_text,
        manifest_only=manifest_only,
        left_out=[e for e in cp.manifest.get("left_out") or [] if isinstance(e, dict)],
        left_out_total=_total(cp.manifest),
    )


def _total(manifest: dict[str, Any]) -> int:
    listed = [e for e in manifest.get("left_out") or [] if isinstance(e, dict)]
    total = manifest.get("left_out_total")
    return max(len(listed), total if isinstance(total, int) else 0)
