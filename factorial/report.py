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

from itemshot.factorial.analysis import AnalysisResults
from itemshot.factorial.plots import forest_plot, interaction_plot, subject_heatmap
from itemshot.factorial.stats import Effect
from itemshot.renderer.output import atomic_write_text


def _pct(value: float) -> str:
    return f"{100 * value:.1f}"


def _pp(value: float) -> str:
    return f"{100 * value:+.1f}"


def _p(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:.3g}" if value >= 1e-4 else "<1e-4"


def _effect_rows(effects: Sequence[Effect]) -> list[list[str]]:
    return [
        [e.name, _pp(e.estimate), f"[{_pp(e.low)}, {_pp(e.high)}]", str(e.n_items), _p(e.pvalue)]
        for e in effects
    ]


EFFECT_HEADER = ["contrast", "Δ pp", "95% CI", "items", "McNemar p"]


def tables(results: AnalysisResults) -> list[tuple[str, list[str], list[list[str]]]]:
    """Return the report's tables as (title, header, rows), in display order."""
    out: list[tuple[str, list[str], list[list[str]]]] = []
    decomposition = results.decomposition
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
                f"2×2 accuracy % [95% Wilson CI], {decomposition.n_items} paired items",
                ["format", "4 options", "10 options"],
                grid,
            )
        )
        out.append(("2×2 decomposition", EFFECT_HEADER, _effect_rows(decomposition.effects)))
    out.append(
        (
            "accuracy per cell",
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
                for c in results.cells
            ],
        )
    )
    if results.blind_gaps:
        out.append(("gap over the blind baseline", EFFECT_HEADER, _effect_rows(results.blind_gaps)))
    if results.ablations:
        references = ", ".join(f"{k}={v}" for k, v in sorted(results.references.items()))
        out.append(
            (f"one-at-a-time effects (reference {references})", EFFECT_HEADER,
             _effect_rows(results.ablations))
        )  # fmt: skip
    for title, table in (("subject", results.subjects), ("scene", results.scenes)):
        rows = [
            [cell, g.group, str(g.accuracy.n), _pct(g.accuracy.rate),
             f"[{_pct(g.accuracy.low)}, {_pct(g.accuracy.high)}]"]
            for cell, groups in table.items()
            for g in groups
        ]  # fmt: skip
        out.append((f"accuracy per {title}", ["cell", title, "n", "accuracy %", "95% CI"], rows))
    return out


def _markdown(results: AnalysisResults, plots: Sequence[Path]) -> str:
    lines = [
        "# Sweep analysis",
        "",
        f"Model: {', '.join(results.models) or '(unnamed)'} · parser: `{results.parser}` · "
        f"{results.n_predictions} predictions. Differences are in percentage points; "
        "CIs of differences are paired bootstrap intervals over items.",
        "",
    ]
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
        f"<p>Model: {html.escape(', '.join(results.models) or '(unnamed)')} · parser: "
        f"<code>{html.escape(results.parser)}</code> · {results.n_predictions} predictions. "
        "Differences in percentage points; CIs of differences are paired bootstrap "
        "intervals over items.</p>",
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
    """Return the analysis as a JSON-ready mapping (manifest rows left out)."""
    return _jsonable(results)


def write_report(results: AnalysisResults, folder: Path) -> list[Path]:
    """Write report.md, report.html, results.json and the PNG plots into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    plots: list[Path] = []
    if results.decomposition is not None:
        plots.append(interaction_plot(results.decomposition, folder / "interaction.png"))
    effects = [
        *(results.decomposition.effects if results.decomposition else ()),
        *results.blind_gaps,
        *results.ablations,
    ]
    if effects:
        plots.append(forest_plot(effects, folder / "effects.png"))
    if any(results.subjects.values()):
        plots.append(subject_heatmap(results.subjects, folder / "subjects.png"))
    written = [folder / "report.md", folder / "report.html", folder / "results.json"]
    atomic_write_text(written[0], _markdown(results, plots))
    atomic_write_text(written[1], _html(results, plots))
    atomic_write_text(written[2], json.dumps(results_json(results), indent=2, ensure_ascii=False))
    return written + plots


def print_summary(results: AnalysisResults, console: Console) -> None:
    """Print the 2×2, its decomposition and the per-cell table as rich tables."""
    for title, header, rows in tables(results)[:3]:
        table = Table(title=title)
        for column in header:
            table.add_column(column, justify="right")
        for row in rows:
            table.add_row(*row)
        console.print(table)
    for note in results.notes[:10]:
        console.print(f"[yellow]note[/yellow] {note}")
