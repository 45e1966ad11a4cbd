"""`review --format html`: a task's timeline as one self-contained page, for a reviewer's
browser: each checkpoint's status, the verifier evidence of every machine (who ran it,
where, a failing run's last lines) and its patch, one file at a time.

The page loads nothing (inline CSS, no script, no image) and says so to the browser with
a Content-Security-Policy that forbids every load and every script: all of its text
comes from checkpoints and notes that may come from another machine, and it is escaped
as HTML on top of being made visible by share/review.py.
"""

from __future__ import annotations

from collections import Counter
from html import escape

from ..core.records import to_the_second
from ..core.text import counted
from ..share.review import FilePatch, Timeline, TimelineEntry, VerifierRun

# A file's patch opens by itself when the whole checkpoint's patch is this short.
OPEN_LINES = 80
_POLICY = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"

_STYLE = """
:root { color-scheme: light dark; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0;
  --bg: #ffffff; --panel: #f6f8fa; --add: #dafbe1; --del: #ffebe9; --hunk: #ddf4ff;
  --ok: #1a7f37; --bad: #cf222e; --warn: #9a6700; --info: #0969da; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6edf3; --muted: #9198a1; --line: #3d444d; --bg: #0d1117;
    --panel: #151b23; --add: #12361f; --del: #4c1d1d; --hunk: #0c2d4b;
    --ok: #3fb950; --bad: #f85149; --warn: #d29922; --info: #4493f8; } }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1200px; padding: 24px; color: var(--fg);
  background: var(--bg); font: 14px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; }
h1 { font-size: 22px; margin: 0 0 4px; }
h1 code, h2 code { font-size: inherit; }
h2 { font-size: 17px; margin: 0; display: flex; gap: 8px; align-items: center;
  flex-wrap: wrap; }
h3 { font-size: 13px; margin: 16px 0 6px; color: var(--muted); font-weight: 600; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  font-size: 12.5px; }
a { color: var(--info); text-decoration: none; }
a:hover { text-decoration: underline; }
.sub { color: var(--muted); margin: 0 0 20px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line);
  vertical-align: top; }
th { font-size: 12px; color: var(--muted); font-weight: 600; }
.timeline td.msg { overflow-wrap: anywhere; }
.badge { display: inline-block; padding: 0 8px; border-radius: 999px; font-size: 12px;
  font-weight: 600; border: 1px solid currentColor; white-space: nowrap; }
.s-promoted, .s-passed { color: var(--ok); }
.s-rejected, .s-failed { color: var(--bad); }
.s-error, .s-malformed { color: var(--warn); }
.s-candidate, .s-unknown { color: var(--muted); }
.kind { color: var(--muted); font-weight: 400; }
section.cp { border: 1px solid var(--line); border-radius: 8px; padding: 16px;
  margin: 20px 0; background: var(--bg); }
section.cp.st-promoted { border-left: 4px solid var(--ok); }
section.cp.st-rejected { border-left: 4px solid var(--bad); }
.message { margin: 6px 0 0; overflow-wrap: anywhere; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px;
  margin: 10px 0 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
details { border: 1px solid var(--line); border-radius: 6px; margin: 6px 0;
  background: var(--panel); }
summary { cursor: pointer; padding: 6px 10px; overflow-wrap: anywhere; }
pre { margin: 0; padding: 8px 10px; overflow-x: auto; background: var(--bg);
  border-top: 1px solid var(--line); }
pre.tail { white-space: pre-wrap; overflow-wrap: anywhere; }
.l { display: block; white-space: pre; }
.l.add { background: var(--add); }
.l.del { background: var(--del); }
.l.hunk { background: var(--hunk); color: var(--muted); }
.l.meta { color: var(--muted); }
table.files { width: auto; min-width: 50%; }
.files td.n { white-space: nowrap; text-align: right; }
.plus { color: var(--ok); }
.minus { color: var(--bad); }
.note { color: var(--muted); font-size: 12.5px; margin: 6px 0; }
footer { color: var(--muted); font-size: 12px; margin-top: 32px; }
"""


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def _anchor(e: TimelineEntry) -> str:
    return f"cp-{e.id}"


def _badge(status: str) -> str:
    known = status if status.isalnum() else "unknown"
    return f'<span class="badge s-{_e(known)}">{_e(status)}</span>'


def render_page(timeline: Timeline) -> str:
    """The page: head, the timeline table, then one section per checkpoint."""
    title = f"Checkpoints of task {timeline.task}"
    statuses = Counter(e.status for e in timeline.entries)
    counts = ", ".join(f"{n} {s}" for s, n in sorted(statuses.items()))
    where = f"fetched from <code>{_e(timeline.remote)}</code> · " if timeline.remote else ""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_e(_POLICY)}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="referrer" content="no-referrer">',
        f"<title>{_e(title)}</title>",
        f"<style>{_STYLE}</style>",
        "</head>",
        "<body>",
        "<header>",
        f"<h1>Checkpoints of task <code>{_e(timeline.task)}</code></h1>",
        f'<p class="sub">{where}{counted(len(timeline.entries), "checkpoint")}: {_e(counts)}</p>',
        "</header>",
        _summary_table(timeline),
        *(_section(e) for e in timeline.entries),
        "<footer>Made by <code>git checkpoint review --format html</code>. "
        "Text from checkpoints and notes is shown as stored, escaped; "
        "the full patch of one checkpoint: <code>git checkpoint show CP --patch</code>."
        "</footer>",
        "</body>",
        "</html>",
    ]
    return "\n".join(parts) + "\n"


def _summary_table(timeline: Timeline) -> str:
    rows = []
    for e in timeline.entries:
        runs = " ".join(
            f'<span class="s-{_e(r.status if r.status.isalnum() else "unknown")}" '
            f'title="{_e(r.line())}">{_e(r.name)}&nbsp;{_e(_mark(r.status))}</span>'
            for r in e.verifiers
        )
        rows.append(
            "<tr>"
            f'<td><a class="mono" href="#{_e(_anchor(e))}">{_e(e.id)}</a></td>'
            f"<td>{_e(e.kind)}</td>"
            f'<td class="mono">{_e(e.created_at)}</td>'
            f"<td>{_badge(e.status)}</td>"
            f"<td>{runs or '<span class=s-unknown>not verified</span>'}</td>"
            f"<td>{_e(', '.join(e.diffs()))}</td>"
            f'<td class="msg">{_e(e.message)}</td>'
            "</tr>"
        )
    head = "".join(
        f"<th>{h}</th>"
        for h in ("checkpoint", "kind", "created", "status", "verifiers", "changes", "message")
    )
    return (
        '<table class="timeline"><thead><tr>'
        + head
        + "</tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )


def _mark(status: str) -> str:
    return {"passed": "✓", "failed": "✗"}.get(status, "!")


def _section(e: TimelineEntry) -> str:
    out = [
        f'<section class="cp st-{_e(e.status)}" id="{_e(_anchor(e))}" '
        f'data-checkpoint="{_e(e.name)}">',
        f'<h2><code>{_e(e.id)}</code> <span class="kind">{_e(e.kind)}</span> '
        f"{_badge(e.status)}{_malformed(e)}</h2>",
        f'<p class="message">{_e(e.message)}</p>' if e.message else "",
        _facts(e),
        "<h3>Verifier evidence</h3>",
        _runs(e.verifiers),
        *(_forced(e)),
        _files(e),
        _patches(e),
        "</section>",
    ]
    return "\n".join(part for part in out if part)


def _malformed(e: TimelineEntry) -> str:
    if not e.malformed:
        return ""
    return f' <span class="badge s-malformed">malformed: {_e(e.malformed)}</span>'


def _facts(e: TimelineEntry) -> str:
    facts = [("name", f"<code>{_e(e.name)}</code>"), ("created", _e(e.created_at))]
    if e.commit:
        facts.append(("commit", f"<code>{_e(e.commit)}</code>"))
    if e.run_id:
        facts.append(("run", f"<code>{_e(e.run_id)}</code>"))
    if e.auto:
        facts.append(("saved", "automatically" if e.auto is True else _e(e.auto)))
    if e.hypothesis:
        facts.append(("hypothesis", _e(e.hypothesis)))
    if e.next_move:
        facts.append(("next move", _e(e.next_move)))
    rows = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in facts)
    return f'<dl class="facts">{rows}</dl>'


def _runs(runs: list[VerifierRun]) -> str:
    if not runs:
        return '<p class="note">No verifier has run on it.</p>'
    rows = []
    for r in runs:
        code = "" if r.exit_code is None else str(r.exit_code)
        took = "" if r.duration_s is None else f"{r.duration_s:.1f} s"
        rows.append(
            "<tr>"
            f"<td><code>{_e(r.name)}</code></td>"
            f"<td>{_badge(r.status)}</td>"
            f'<td class="mono">{_e(code)}</td>'
            f"<td>{_e(took)}</td>"
            f'<td class="mono">{_e(to_the_second(r.at))}</td>'
            f"<td>{_e(r.by or '')}{(' on ' + _e(r.host)) if r.host else ''}</td>"
            f"<td>{_e(r.where)}</td>"
            "</tr>"
        )
    head = "".join(
        f"<th>{h}</th>" for h in ("verifier", "result", "exit", "took", "at", "by", "where")
    )
    body = "".join(rows)
    table = f'<table class="runs"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
    tails = [
        '<details class="tail" open><summary>'
        f"<code>{_e(r.name)}</code> {_e(r.status)}"
        + (f" (exit {_e(r.exit_code)})" if r.exit_code is not None else "")
        + f"{_e(r.who())} at {_e(to_the_second(r.at))}: "
        + f"its last {counted(r.output_tail.count(chr(10)) + 1, 'line')}"
        f'</summary><pre class="tail">{_e(r.output_tail)}</pre></details>'
        for r in runs
        if r.status != "passed" and r.output_tail
    ]
    return "\n".join([table, *tails])


def _forced(e: TimelineEntry) -> list[str]:
    if not e.forced:
        return []
    items = "".join(
        f"<li>by {_e(f.by)} at <span class=mono>{_e(to_the_second(f.at))}</span>: "
        f"{_e(f.reason)}</li>"
        for f in e.forced
    )
    return ["<h3>Forced promotions</h3>", f"<ul>{items}</ul>"]


def _files(e: TimelineEntry) -> str:
    against = "its base commit" if e.changes_against == "base" else e.changes_against
    title = f"<h3>Changes vs {_e(against)}</h3>"
    if not e.files_total:
        return title + '<p class="note">No change.</p>'
    rows = "".join(
        "<tr>"
        f"<td><code>{_e(f.path)}</code></td><td>{_e(f.status_word())}</td>"
        + (
            '<td class="n">binary</td><td></td>'
            if f.insertions is None
            else f'<td class="n plus">+{f.insertions}</td><td class="n minus">-{f.deletions}</td>'
        )
        + "</tr>"
        for f in e.files
    )
    more = ""
    if e.files_total > len(e.files):
        more = f'<p class="note">… and {counted(e.files_total - len(e.files), "more file")}.</p>'
    return f'{title}<table class="files"><tbody>{rows}</tbody></table>{more}'


def _patches(e: TimelineEntry) -> str:
    if not e.patches:
        return ""
    opened = sum(p.text.count("\n") + 1 for p in e.patches) <= OPEN_LINES
    out = [_patch(p, opened) for p in e.patches]
    if e.patch_cut:
        out.append(
            f'<p class="note">{counted(e.patch_cut, "line")} of this patch not shown: '
            f"<code>git checkpoint show {_e(e.name)} --patch</code> has them all.</p>"
        )
    return "\n".join(out)


def _patch(p: FilePatch, opened: bool) -> str:
    cut = f'<p class="note">{counted(p.cut, "more line")} not shown.</p>' if p.cut else ""
    return (
        f'<details class="file"{" open" if opened else ""}>'
        f"<summary><code>{_e(p.path)}</code></summary>"
        f'<pre class="diff">{"".join(_lines(p.text))}</pre>{cut}</details>'
    )


def _lines(text: str) -> list[str]:
    """Each line of one file's patch in a span of its kind: the header up to the first
    hunk, hunk heads, added, removed and context lines."""
    out = []
    in_hunk = False
    for line in text.split("\n"):
        if line.startswith("@@"):
            kind, in_hunk = "hunk", True
        elif not in_hunk or line.startswith("\\"):  # the header; "\ No newline at end"
            kind = "meta"
        else:
            kind = {"+": "add", "-": "del"}.get(line[:1], "ctx")
        out.append(f'<span class="l {kind}">{_e(line) or " "}</span>')
    return out
