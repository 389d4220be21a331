"""Write an analysis as report.md, report.html, results.json and plots; print a summary."""

from __future__ import annotations

import dataclasses
import html
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from itemshot.factorial.analysis import AnalysisResults, RunAnalysis
from itemshot.factorial.plots import forest_plot, interaction_plot, reading_plot, subject_heatmap
from itemshot.factorial.report_format import EFFECT_HEADER, effect_rows
from itemshot.factorial.report_format import pct as _pct
from itemshot.factorial.report_reading import reading_tables
from itemshot.renderer.output import atomic_write_text

TableSpec = tuple[str, list[str], list[list[str]]]
# Reading results kept per condition: written as JSON lines beside results.json, not in it.
PER_CONDITION = {"readings": "readings.jsonl", "pairs": "reading_pairs.jsonl"}


def run_tables(run: RunAnalysis, prefix: str = "") -> list[TableSpec]:
    """Return one run's tables as (title, header, rows), in display order."""
    out: list[TableSpec] = []
    decomposition = run.decomposition
    if decomposition is not None:
        cells = decomposition.cells
        grid = []
        for fmt, letter in (("standard", "S"), ("vision", "V")):
            row = [fmt]
            for n in (4, 10):
                cell = cells[f"{letter}{n}"]
                row.append(f"{_pct(cell.rate)} [{_pct(cell.low)}, {_pct(cell.high)}]")
            grid.append(row)
        out.append(
            (
                f"{prefix}2×2 accuracy % [95% Wilson CI], {decomposition.n_items} paired items",
                ["format", "4 options", "10 options"],
                grid,
            )
        )
        out.append(
            (f"{prefix}2×2 decomposition", EFFECT_HEADER, effect_rows(decomposition.effects))
        )
    out.append(
        (
            f"{prefix}accuracy per cell",
            ["cell", "n", "accuracy %", "95% CI", "invalid", "fallback", "request errors"],
            [
                [
                    c.label,
                    str(c.accuracy.n),
                    _pct(c.accuracy.rate),
                    f"[{_pct(c.accuracy.low)}, {_pct(c.accuracy.high)}]",
                    str(c.invalid),
                    str(c.fallback),
                    str(c.request_errors),
                ]
                for c in run.cells
            ],
        )
    )
    if run.blind_gaps:
        out.append(
            (f"{prefix}gap over the blind baseline", EFFECT_HEADER, effect_rows(run.blind_gaps))
        )
    if run.ablations:
        references = ", ".join(f"{k}={v}" for k, v in sorted(run.references.items()))
        out.append(
            (f"{prefix}one-at-a-time effects (reference {references})", EFFECT_HEADER,
             effect_rows(run.ablations))
        )  # fmt: skip
    for title, table in (("subject", run.subjects), ("scene", run.scenes)):
        rows = [
            [cell, g.group, str(g.accuracy.n), _pct(g.accuracy.rate),
             f"[{_pct(g.accuracy.low)}, {_pct(g.accuracy.high)}]"]
            for cell, groups in table.items()
            for g in groups
        ]  # fmt: skip
        out.append(
            (f"{prefix}accuracy per {title}", ["cell", title, "n", "accuracy %", "95% CI"], rows)
        )
    return out


def _prefix(results: AnalysisResults, run: RunAnalysis) -> str:
    return f"{run.run} — " if len(results.runs) > 1 else ""


def tables(results: AnalysisResults) -> list[TableSpec]:
    """Return the report's tables as (title, header, rows), in display order."""
    out = [t for run in results.runs for t in run_tables(run, _prefix(results, run))]
    if results.reading is not None:
        out += reading_tables(results.reading)
    return out


def _describe(results: AnalysisResults) -> str:
    runs = ", ".join(run.run for run in results.runs) or "none (transcripts only)"
    return (
        f"Runs (model · prompt): {runs} · parser: `{results.parser}` · "
        f"{results.n_predictions} predictions. Differences are in percentage points; "
        "CIs of differences are paired bootstrap intervals over items."
    )


def _markdown(results: AnalysisResults, plots: Sequence[Path]) -> str:
    lines = ["# Sweep analysis", "", _describe(results), ""]
    for title, header, rows in tables(results):
        lines += [f"## {title}", "", "| " + " | ".join(header) + " |"]
        lines.append("|" + "|".join("---" for _ in header) + "|")
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        lines.append("")
    for plot in plots:
        lines += [f"![{plot.stem}]({plot.name})", ""]
    if results.notes:
        lines += ["## notes", ""] + [f"- {note}" for note in results.notes] + [""]
    return "\n".join(lines)


_STYLE = (
    "body{font-family:sans-serif;max-width:60em;margin:1em auto;color:#222}"
    "table{border-collapse:collapse;margin:.5em 0 1.5em}"
    "td,th{border:1px solid #ccc;padding:.25em .6em;text-align:right}"
    "td:first-child,th:first-child{text-align:left}th{background:#f2f2f2}"
    "img{max-width:100%;display:block;margin:1em 0}"
)


def _html(results: AnalysisResults, plots: Sequence[Path]) -> str:
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>Sweep analysis</title><style>{_STYLE}</style></head><body>",
        "<h1>Sweep analysis</h1>",
        f"<p>{html.escape(_describe(results)).replace('`', '')}</p>",
    ]
    for title, header, rows in tables(results):
        parts.append(f"<h2>{html.escape(title)}</h2><table><tr>")
        parts += [f"<th>{html.escape(h)}</th>" for h in header]
        parts.append("</tr>")
        for row in rows:
            parts.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>")
        parts.append("</table>")
    for plot in plots:
        parts.append(f"<img src='{html.escape(plot.name)}' alt='{html.escape(plot.stem)}'>")
    if results.notes:
        parts.append("<h2>notes</h2><ul>")
        parts += [f"<li>{html.escape(note)}</li>" for note in results.notes]
        parts.append("</ul>")
    parts.append("</body></html>")
    return "\n".join(parts)


def _jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, float) and value != value:
        return None
    return value


def results_json(results: AnalysisResults) -> dict[str, Any]:
    """Return the analysis as a JSON-ready mapping (per-condition readings left out)."""
    record = _jsonable(results)
    if record.get("reading"):
        for name in PER_CONDITION:
            record["reading"].pop(name, None)
    return record


def _write_jsonl(path: Path, records: Sequence[Any]) -> Path:
    text = "".join(json.dumps(_jsonable(r), ensure_ascii=False) + "\n" for r in records)
    atomic_write_text(path, text)
    return path


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text).strip("-").lower()


def _run_plots(run: RunAnalysis, folder: Path, suffix: str) -> list[Path]:
    plots: list[Path] = []
    if run.decomposition is not None:
        plots.append(interaction_plot(run.decomposition, folder / f"interaction{suffix}.png"))
    effects = [
        *(run.decomposition.effects if run.decomposition else ()),
        *run.blind_gaps,
        *run.ablations,
    ]
    if effects:
        plots.append(forest_plot(effects, folder / f"effects{suffix}.png"))
    if any(run.subjects.values()):
        plots.append(subject_heatmap(run.subjects, folder / f"subjects{suffix}.png"))
    return plots


def write_report(results: AnalysisResults, folder: Path) -> list[Path]:
    """Write report.md, report.html, results.json and the PNG plots into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    plots: list[Path] = []
    for run in results.runs:
        suffix = f"-{_slug(run.run)}" if len(results.runs) > 1 else ""
        plots += _run_plots(run, folder, suffix)
    extra: list[Path] = []
    if results.reading is not None:
        if results.reading.pairs:
            plots.append(reading_plot(results.reading, folder / "reading.png"))
        for name, file_name in PER_CONDITION.items():
            extra.append(_write_jsonl(folder / file_name, getattr(results.reading, name)))
    written = [folder / "report.md", folder / "report.html", folder / "results.json"]
    atomic_write_text(written[0], _markdown(results, plots))
    atomic_write_text(written[1], _html(results, plots))
    atomic_write_text(written[2], json.dumps(results_json(results), indent=2, ensure_ascii=False))
    return written + plots + extra


def print_summary(results: AnalysisResults, console: Console) -> None:
    """Print each run's 2×2, decomposition and cell table, and the reading tables."""
    shown = [t for run in results.runs for t in run_tables(run, _prefix(results, run))[:3]]
    if results.reading is not None:
        shown += reading_tables(results.reading)[:2]
    for title, header, rows in shown:
        table = Table(title=title)
        for column in header:
            table.add_column(column, justify="right")
        for row in rows:
            table.add_row(*row)
        console.print(table)
    for note in results.notes[:10]:
        console.print(f"[yellow]note[/yellow] {note}")
