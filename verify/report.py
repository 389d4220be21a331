"""The audit report: `audit.json` for machines, `audit.html` for a person reviewing images."""

from __future__ import annotations

import difflib
import html
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from itemshot.renderer.output import atomic_write, atomic_write_json
from itemshot.verify.reading.text import normalise
from itemshot.verify.thresholds import Thresholds
from itemshot.verify.verdicts import REASON_CODES, Verdict

STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#111}
table.counts td,table.counts th{padding:2px 10px;text-align:left}
.card{display:flex;gap:1.5em;border-top:2px solid #ccc;padding:1em 0}
.card.fail h2{color:#b00}.card.pass h2{color:#070}
.card img{max-width:420px;max-height:560px;border:1px solid #999}
.fields{flex:1;min-width:0}.field{margin:.4em 0;padding:.3em .5em;background:#f6f6f6}
.field.bad{background:#fde8e8}.diff{font-family:monospace;white-space:pre-wrap;word-break:break-word}
del{background:#f99;text-decoration:line-through}ins{background:#9e9;text-decoration:none}
ul.reasons{color:#b00;margin:.3em 0}
"""


def diff_html(expected: str, observed: str) -> str:
    """Return an HTML diff of source and OCR text: missing text struck, extra text marked."""
    a, b = normalise(expected), normalise(observed)
    parts: list[str] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            parts.append(html.escape(a[i1:i2]))
            continue
        if i2 > i1:
            parts.append(f"<del>{html.escape(a[i1:i2])}</del>")
        if j2 > j1:
            parts.append(f"<ins>{html.escape(b[j1:j2])}</ins>")
    return "".join(parts)


def _card(result: Verdict, report_dir: Path, image_root: Path | None) -> str:
    image_path = Path(result.image)
    if image_root is not None and not image_path.is_absolute():
        image_path = image_root / image_path
    source = os.path.relpath(image_path, report_dir) if image_path.is_absolute() else result.image
    status = "pass" if result.passed else "fail"
    reasons = "".join(
        f"<li><b>{html.escape(r.code)}</b> {html.escape(r.region)} — {html.escape(r.detail)}</li>"
        for r in result.reasons
    )
    failed_regions = {r.region for r in result.reasons}
    fields = []
    for region in result.regions:
        score = "–" if region.score is None else f"{region.score:.3f}"
        css = "field bad" if region.name in failed_regions else "field"
        body = (
            f'<div class="diff">{diff_html(region.expected, region.observed)}</div>'
            if region.kind in ("question", "option", "stem")
            else ""
        )
        fields.append(
            f'<div class="{css}"><b>{html.escape(region.name)}</b> score {score} {body}</div>'
        )
    return (
        f'<div class="card {status}"><div><img src="{html.escape(Path(source).as_posix())}" '
        f'alt="{html.escape(result.image)}" loading="lazy"></div><div class="fields">'
        f"<h2>{status.upper()} — item {html.escape(result.item_id)}</h2>"
        f"<p>{html.escape(result.image)} · {html.escape(result.mode)} · lang "
        f"{html.escape(result.lang)}</p><ul class=reasons>{reasons}</ul>{''.join(fields)}</div></div>"
    )


def audit_html(
    verdicts: list[Verdict],
    summary: Mapping[str, Any],
    report_dir: Path,
    image_root: Path | None = None,
) -> str:
    """Return the audit page: counts by reason, then failures first, each image beside its text."""
    counts = "".join(
        f"<tr><td>{html.escape(code)}</td><td>{count}</td>"
        f"<td>{html.escape(REASON_CODES.get(code, ''))}</td></tr>"
        for code, count in sorted(summary.get("by_reason", {}).items(), key=lambda kv: -kv[1])
    )
    ordered = sorted(verdicts, key=lambda v: (v.passed, v.item_id, v.image))
    cards = "".join(_card(v, report_dir, image_root) for v in ordered)
    return (
        "<!doctype html><html><head><meta charset=utf-8><title>itemshot audit</title>"
        f"<style>{STYLE}</style></head><body><h1>itemshot audit</h1>"
        f"<p>{summary.get('total', 0)} images · {summary.get('passed', 0)} pass · "
        f"{summary.get('failed', 0)} fail. Diff: <del>missing from the image</del> "
        f"<ins>read but not in the source</ins>.</p>"
        f"<table class=counts><tr><th>reason</th><th>images</th><th>meaning</th></tr>{counts}"
        f"</table>{cards}</body></html>"
    )


def write_reports(
    report_dir: Path,
    verdicts: list[Verdict],
    summary: Mapping[str, Any],
    thresholds: Thresholds,
    *,
    rows: list[dict[str, Any]] | None = None,
    sources: dict[str, dict[str, Any]] | None = None,
    image_root: Path | None = None,
) -> None:
    """Write `audit.json` and `audit.html` into `report_dir`, atomically."""
    report_dir.mkdir(parents=True, exist_ok=True)
    record = {
        "summary": dict(summary),
        "thresholds": thresholds.as_dict(),
        "reason_codes": REASON_CODES,
        "verdicts": [v.as_dict() for v in verdicts],
    }
    if sources:
        record["sources"] = sources
    atomic_write_json(report_dir / "audit.json", record)
    page = audit_html(verdicts, summary, report_dir.resolve(), image_root)
    atomic_write(report_dir / "audit.html", page.encode("utf-8"))
