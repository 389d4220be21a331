"""Write an analysis as report.md, report.html, results.json and plots; print a summary."""

from __future__ import annotations

import dataclasses
import html
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from itemshot.factorial.analysis.analysis import AnalysisResults, RunAnalysis
from itemshot.factorial.design.cells import UNPARSED
from itemshot.factorial.design.confounds import confound_table
from itemshot.factorial.report.plots import (
    forest_plot,
    interaction_plot,
    reading_plot,
    subject_heatmap,
    tokens_plot,
)
from itemshot.factorial.report.report_effects import cost_table, model_effect_table
from itemshot.factorial.report.report_format import EFFECT_HEADER, effect_rows
from itemshot.factorial.report.report_format import pct as _pct
from itemshot.factorial.report.report_reading import reading_tables
from itemshot.renderer.output import atomic_write_text

TableSpec = tuple[str, list[str], list[list[str]]]
# Reading results kept per condition: written as JSON lines beside results.json, not in it.
# Factors that change the image's size, and so its bill: plotted as accuracy against tokens.
TOKEN_FACTORS = ("resolution", "deliver_size")
PER_CONDITION = {"readings": "readings.jsonl", "pairs": "reading_pairs.jsonl"}
CELL_HEADER = [
    "cell", "n_options", "options shown (min/median/max)", "n", "accuracy %", "95% CI",
    UNPARSED, "fallback", "request errors",
]  # fmt: skip
READING = ""  # the key of the reading analysis's plots (runs are keyed by their name)


def held_levels(run: RunAnalysis) -> str:
    """Return the levels the run's 2×2 holds its other factors at (`font_style=regular`)."""
    basis = run.two_by_two
    return ", ".join(f"{k}={v}" for k, v in basis.levels.items()) if basis else ""


def _two_by_two_title(run: RunAnalysis, prefix: str, n_items: int) -> str:
    held = held_levels(run)
    scope = (
        f"at {held} only (the reference level; the other levels are in the per-cell table)"
        if held
        else "no other factor varies"
    )
    return f"{prefix}2×2 accuracy % [95% Wilson CI], {n_items} paired items, {scope}"


def _level_header(run: RunAnalysis, n: int) -> str:
    """Return `10 options`, with the options really shown when some rows show fewer."""
    shown = run.two_by_two.shown if run.two_by_two else {}
    counts = {fmt: shown.get(f"{fmt[0].upper()}{n}") for fmt in ("standard", "vision")}
    texts = {fmt: str(count) for fmt, count in counts.items() if count is not None}
    if set(texts.values()) <= {str(n)}:
        return f"{n} options"
    if len(set(texts.values())) == 1:
        return f"{n} options (shown {next(iter(texts.values()))})"
    return f"{n} options (shown " + ", ".join(f"{f} {t}" for f, t in texts.items()) + ")"


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
                _two_by_two_title(run, prefix, decomposition.n_items),
                ["format", _level_header(run, 4), _level_header(run, 10)],
                grid,
            )
        )
        out.append(
            (f"{prefix}2×2 decomposition", EFFECT_HEADER, effect_rows(decomposition.effects))
        )
    out.append(
        (
            f"{prefix}accuracy per cell",
            CELL_HEADER,
            [
                [
                    c.label,
                    str(c.n_options),
                    str(c.shown) if c.shown is not None else "–",
                    str(c.accuracy.n),
                    _pct(c.accuracy.rate),
                    f"[{_pct(c.accuracy.low)}, {_pct(c.accuracy.high)}]",
                    str(c.unparsed),
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
    if run.model_effects is not None:
        out.append(model_effect_table(run.model_effects, prefix))
    if run.costs:
        out.append(cost_table(run.costs, prefix))
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
    return out + confound_tables(results)


def confound_tables(results: AnalysisResults) -> list[TableSpec]:
    """Return the confound check of each output set: what each contrast changed besides itself."""
    out: list[TableSpec] = []
    for name, record in results.confounds:
        header, rows = confound_table(record)
        if not rows:
            continue
        verdict = "passed" if record.get("passed") else "FAILED"
        tolerances = ", ".join(f"{k} {v}" for k, v in record.get("tolerances", {}).items())
        title = (
            f"confound check of {name}: {verdict} (worst per-item difference, level − "
            f"reference; held within {tolerances}; `free`: the factor may change it)"
        )
        out.append((title, header, rows))
    return out


def _describe(results: AnalysisResults) -> str:
    runs = ", ".join(run.run for run in results.runs) or "none (transcripts only)"
    return (
        f"Runs (model · prompt): {runs} · parser: `{results.parser}` · "
        f"{results.n_predictions} predictions. Differences are in percentage points; "
        "CIs of differences are paired bootstrap intervals over items; the model-based "
        "effects fit all factors at once with items as clusters, their p-values adjusted "
        "across the contrasts (Holm, Benjamini–Hochberg)."
    )


Plots = Mapping[str, Sequence[Path]]  # plots by run name (READING: the reading analysis)


def _sections(results: AnalysisResults, plots: Plots) -> list[tuple[list[TableSpec], list[Path]]]:
    """Return each run's tables followed by its plots, then the reading analysis's."""
    out = [
        (run_tables(run, _prefix(results, run)), list(plots.get(run.run, ())))
        for run in results.runs
    ]
    if results.reading is not None:
        out.append((reading_tables(results.reading), list(plots.get(READING, ()))))
    confounds = confound_tables(results)
    if confounds:
        out.append((confounds, []))
    return out


def _markdown(results: AnalysisResults, plots: Plots) -> str:
    lines = ["# Sweep analysis", "", _describe(results), ""]
    for section, images in _sections(results, plots):
        for title, header, rows in section:
            lines += [f"## {title}", "", "| " + " | ".join(header) + " |"]
            lines.append("|" + "|".join("---" for _ in header) + "|")
            lines += ["| " + " | ".join(row) + " |" for row in rows]
            lines.append("")
        for plot in images:
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


def _html(results: AnalysisResults, plots: Plots) -> str:
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>Sweep analysis</title><style>{_STYLE}</style></head><body>",
        "<h1>Sweep analysis</h1>",
        f"<p>{html.escape(_describe(results)).replace('`', '')}</p>",
    ]
    for section, images in _sections(results, plots):
        for title, header, rows in section:
            parts.append(f"<h2>{html.escape(title)}</h2><table><tr>")
            parts += [f"<th>{html.escape(h)}</th>" for h in header]
            parts.append("</tr>")
            for row in rows:
                cells = "".join(f"<td>{html.escape(c)}</td>" for c in row)
                parts.append(f"<tr>{cells}</tr>")
            parts.append("</table>")
        for plot in images:
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


def _run_plots(run: RunAnalysis, folder: Path, suffix: str, parser: str) -> list[Path]:
    title = f"{run.run} · {parser} parser"  # run = model · prompt
    plots: list[Path] = []
    if run.decomposition is not None:
        path = folder / f"interaction{suffix}.png"
        plots.append(interaction_plot(run.decomposition, path, title, held_levels(run)))
    effects = [
        *(run.decomposition.effects if run.decomposition else ()),
        *run.blind_gaps,
        *run.ablations,
    ]
    if effects:
        plots.append(forest_plot(effects, folder / f"effects{suffix}.png", f"{title}: effects"))
    if any(run.subjects.values()):
        plots.append(subject_heatmap(run.subjects, folder / f"subjects{suffix}.png", title))
    if any(c.factor in TOKEN_FACTORS for c in run.costs):
        path = folder / f"tokens{suffix}.png"
        plots.append(tokens_plot(run.costs, path, TOKEN_FACTORS, run.references, title))
    return plots


def write_report(results: AnalysisResults, folder: Path) -> list[Path]:
    """Write report.md, report.html, results.json and the PNG plots into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    plots: dict[str, list[Path]] = {}
    for run in results.runs:
        suffix = f"-{_slug(run.run)}" if len(results.runs) > 1 else ""
        plots[run.run] = _run_plots(run, folder, suffix, results.parser)
    extra: list[Path] = []
    if results.reading is not None:
        if results.reading.pairs:
            plots[READING] = [reading_plot(results.reading, folder / "reading.png")]
        for name, file_name in PER_CONDITION.items():
            extra.append(_write_jsonl(folder / file_name, getattr(results.reading, name)))
    written = [folder / "report.md", folder / "report.html", folder / "results.json"]
    atomic_write_text(written[0], _markdown(results, plots))
    atomic_write_text(written[1], _html(results, plots))
    atomic_write_text(written[2], json.dumps(results_json(results), indent=2, ensure_ascii=False))
    return written + [path for paths in plots.values() for path in paths] + extra


def print_summary(results: AnalysisResults, console: Console) -> None:
    """Print each run's 2×2, decomposition and cell table, and the reading tables."""
    shown = [t for run in results.runs for t in run_tables(run, _prefix(results, run))[:3]]
    if results.reading is not None:
        shown += reading_tables(results.reading)[:2]
    for title, header, rows in shown:
        table = Table(title=title)
        for column in header:
            # fold, never cut: a cell's name or a count is read whole on a narrow terminal
            table.add_column(column, justify="right", overflow="fold")
        for row in rows:
            table.add_row(*row)
        console.print(table)
    for name, record in results.confounds:
        failed = [c for c in record.get("contrasts", []) if not c.get("passed", True)]
        verdict = "passed" if not failed else f"FAILED in {len(failed)} contrasts"
        console.print(f"confound check of {name}: {verdict} (report.md has the table)")
    for note in results.notes[:10]:
        console.print(f"[yellow]note[/yellow] {note}")
