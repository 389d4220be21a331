"""PNG plots of a sweep analysis (matplotlib, Agg backend)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from itemshot.factorial.analysis.cost import CellCost
from itemshot.factorial.analysis.reading import ReadingResults
from itemshot.factorial.analysis.stats import Decomposition, Effect, GroupAccuracy, wilson_interval
from itemshot.seeds import seed_hash


def interaction_plot(
    decomposition: Decomposition, path: Path, title: str = "", held: str = ""
) -> Path:
    """Plot accuracy against option count for standard and vision, with Wilson CIs.

    `title` names the run (model, prompt, parser); `held` the levels the
    2×2 holds its other factors at (`font_style=regular`), shown under it.
    """
    figure, axes = plt.subplots(figsize=(5.5, 4.4), dpi=120)
    for fmt, label, marker in (("S", "standard", "o"), ("V", "vision", "s")):
        cells = [decomposition.cells[f"{fmt}{n}"] for n in (4, 10)]
        rates = np.array([100 * cell.rate for cell in cells])
        errors = np.array(
            [[100 * (c.rate - c.low) for c in cells], [100 * (c.high - c.rate) for c in cells]]
        )
        axes.errorbar([4, 10], rates, yerr=errors, marker=marker, capsize=4, label=label)
    axes.set_xticks([4, 10])
    axes.set_xlabel("options")
    axes.set_ylabel("accuracy % (95% Wilson CI)")
    subtitle = f"format × options, {decomposition.n_items} paired items"
    if held:
        subtitle += f", at {held}"
    axes.set_title(f"{title}\n{subtitle}" if title else subtitle, fontsize=9)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    return path


def forest_plot(effects: Sequence[Effect], path: Path, title: str = "effects") -> Path:
    """Plot effects (percentage points) with their bootstrap CIs, one row each."""
    height = max(2.0, 0.45 * len(effects) + 1.4)
    longest = max((len(e.name) for e in effects), default=0)
    # Wide enough for the longest contrast name beside an axis of its own (labels never cut).
    figure, axes = plt.subplots(figsize=(max(7.0, 5.0 + 0.085 * longest), height), dpi=120)
    positions = np.arange(len(effects))[::-1]
    estimates = np.array([100 * e.estimate for e in effects])
    lower = estimates - np.array([100 * e.low for e in effects])
    upper = np.array([100 * e.high for e in effects]) - estimates
    axes.errorbar(estimates, positions, xerr=[lower, upper], fmt="o", capsize=4)
    axes.axvline(0, color="grey", linewidth=1)
    axes.set_yticks(positions)
    axes.set_yticklabels([e.name for e in effects])
    axes.set_xlabel("difference in accuracy, percentage points\n(95% bootstrap CI)")
    axes.set_title(title, fontsize=9)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    return path


def subject_heatmap(
    table: Mapping[str, Sequence[GroupAccuracy]], path: Path, title: str = ""
) -> Path:
    """Plot accuracy per subject (rows) and cell (columns), each square with its rate and n."""
    columns = list(table)
    subjects = sorted({g.group for groups in table.values() for g in groups})
    values = np.full((len(subjects), len(columns)), np.nan)
    counts = np.zeros((len(subjects), len(columns)), dtype=int)
    for j, column in enumerate(columns):
        for group in table[column]:
            values[subjects.index(group.group), j] = 100 * group.accuracy.rate
            counts[subjects.index(group.group), j] = group.accuracy.n
    longest = max((len(c) for c in columns), default=0)
    figure, axes = plt.subplots(
        figsize=(1.3 * len(columns) + 3, 0.55 * len(subjects) + 1.8 + 0.06 * longest), dpi=120
    )
    image = axes.imshow(values, cmap="viridis", vmin=0, vmax=100, aspect="auto")
    axes.set_xticks(range(len(columns)))
    axes.set_xticklabels(columns, rotation=30, ha="right")
    axes.set_yticks(range(len(subjects)))
    axes.set_yticklabels(subjects)
    for i in range(len(subjects)):
        for j in range(len(columns)):
            if not np.isnan(values[i, j]):
                colour = "white" if values[i, j] < 60 else "black"
                text = f"{values[i, j]:.0f}\nn={counts[i, j]}"
                axes.text(j, i, text, ha="center", va="center", color=colour, fontsize=8)
    figure.colorbar(image, ax=axes, label="accuracy %")
    axes.set_title(f"{title}\naccuracy by subject" if title else "accuracy by subject", fontsize=9)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    return path


def _jitter(key: str, spread: float) -> float:
    """Return a fixed vertical offset for a point (from its key: same plot every run)."""
    return (seed_hash(key, bits=32) / 2**32 - 0.5) * 2 * spread


def reading_plot(reading: ReadingResults, path: Path) -> Path:
    """Plot correctness against transcription accuracy per item, and one point per run.

    Left: each condition at its transcription accuracy, right answers at 1 and
    wrong ones at 0 (jittered), with each run's fitted logistic curve. Right:
    each run's mean transcription accuracy against its accuracy, with CIs.
    """
    figure, (items, runs) = plt.subplots(1, 2, figsize=(11, 4.6), dpi=120)
    by_run: dict[str, list[tuple[float, bool, str]]] = defaultdict(list)
    for pair in reading.pairs:
        by_run[pair.run].append((pair.reading, pair.correct, pair.condition_id))
    fits = {fit.name: fit for fit in reading.logistic}
    colours = plt.get_cmap("tab10")
    for index, (run, points) in enumerate(sorted(by_run.items())):
        colour = colours(index % 10)
        x = np.array([100 * p[0] for p in points])
        y = np.array([float(p[1]) + _jitter(f"{run}|{p[2]}", 0.06) for p in points])
        items.scatter(x, y, s=14, alpha=0.6, color=colour, label=run)
        fit = fits.get(run)
        if fit is not None and fit.slope == fit.slope:
            grid = np.linspace(min(x.min(), 100 * reading.threshold) / 100, 1.0, 100)
            curve = 1 / (1 + np.exp(-(fit.intercept + fit.slope * grid)))
            items.plot(100 * grid, curve, color=colour, linewidth=1.5)
    items.axvline(100 * reading.threshold, color="grey", linestyle="--", linewidth=1)
    items.annotate(
        f"read ≥ {reading.threshold:g}", (100 * reading.threshold, 0.15), xytext=(-4, 0),
        textcoords="offset points", rotation=90, ha="right", va="center", fontsize=7,
        color="grey",
    )  # fmt: skip
    items.set_yticks([0, 0.25, 0.5, 0.75, 1])
    items.set_yticklabels(["wrong", "0.25", "0.5", "0.75", "right"])
    items.set_ylabel("answer (points, jittered) · fitted P(correct) (curves)")
    items.set_xlabel("transcription accuracy of the item % (1 − Levenshtein / max len)")
    items.set_title("per item: answer against reading (curve: logistic fit)")
    items.legend(fontsize=7, loc="center left")
    for index, point in enumerate(sorted(reading.points, key=lambda p: p.run)):
        colour = colours(index % 10)
        xs, ys = 100 * point.reading.mean, 100 * point.accuracy.rate
        items_error = [[xs - 100 * point.reading.low], [100 * point.reading.high - xs]]
        rate_error = [[ys - 100 * point.accuracy.low], [100 * point.accuracy.high - ys]]
        runs.errorbar([xs], [ys], xerr=items_error, yerr=rate_error, fmt="o", capsize=3,
                      color=colour)  # fmt: skip
        runs.annotate(point.run, (xs, ys), textcoords="offset points", xytext=(5, 5), fontsize=7)
    runs.set_xlabel("mean transcription accuracy % (95% bootstrap CI)")
    runs.set_ylabel("accuracy % (95% Wilson CI)")
    title = "one point per run"
    defined = [c for c in reading.across_models if c.r == c.r]
    if defined:
        title += "; " + ", ".join(f"{c.name}: r = {c.r:+.2f}" for c in defined)
    runs.set_title(title, fontsize=9 if defined else None)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    return path


def tokens_plot(
    costs: Sequence[CellCost],
    path: Path,
    factors: Sequence[str] = ("resolution", "deliver_size"),
    references: Mapping[str, str] | None = None,
    title: str = "",
) -> Path:
    """Plot accuracy against mean image tokens per request, one line per size factor.

    Each factor's line runs through its levels and the reference look (the
    cells at every factor's reference), with Wilson CIs on accuracy. `title`
    names the run (model, prompt, parser).
    """
    figure, axes = plt.subplots(figsize=(6, 4.2), dpi=120)
    reference = [c for c in costs if not c.factor]
    for factor in factors:
        points = [c for c in costs if c.factor == factor] + reference
        points = [c for c in points if c.n and np.isfinite(c.image_tokens)]
        if len(points) < 2:
            continue
        points.sort(key=lambda c: c.image_tokens)
        x = np.array([c.image_tokens for c in points])
        y = np.array([100 * c.accuracy for c in points])
        intervals = [wilson_interval(c.correct, c.n) for c in points]
        errors = np.array([y - [100 * low for low, _ in intervals],
                           [100 * high for _, high in intervals] - y])  # fmt: skip
        axes.errorbar(x, y, yerr=errors, marker="o", capsize=4, label=factor)
        for cost, tx, ty in zip(points, x, y, strict=True):
            reference = (references or {}).get(factor)
            label = cost.level if cost.factor else f"{reference or ''} (reference)".strip()
            axes.annotate(label, (tx, ty), textcoords="offset points", xytext=(5, 5), fontsize=7)
    sources = sorted({c.source for c in costs})
    axes.set_xlabel("image tokens per request (" + "; ".join(sources) + ")", fontsize=8)
    axes.set_ylabel("accuracy % (95% Wilson CI)")
    subtitle = "accuracy against image tokens"
    axes.set_title(f"{title}\n{subtitle}" if title else subtitle, fontsize=9)
    axes.margins(x=0.15)  # room for the level labels at either end
    if axes.get_legend_handles_labels()[0]:
        axes.legend()
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    return path
