"""PNG plots of a sweep analysis (matplotlib, Agg backend)."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from itemshot.factorial.stats import Decomposition, Effect, GroupAccuracy

if TYPE_CHECKING:
    from itemshot.factorial.reading import ReadingResults


def interaction_plot(decomposition: Decomposition, path: Path) -> Path:
    """Plot accuracy against option count for standard and vision, with Wilson CIs."""
    figure, axes = plt.subplots(figsize=(5, 4), dpi=120)
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
    axes.set_title(f"format × options ({decomposition.n_items} paired items)")
    axes.legend()
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    return path


def forest_plot(effects: Sequence[Effect], path: Path, title: str = "effects") -> Path:
    """Plot effects (percentage points) with their bootstrap CIs, one row each."""
    height = max(2.0, 0.45 * len(effects) + 1.2)
    figure, axes = plt.subplots(figsize=(7, height), dpi=120)
    positions = np.arange(len(effects))[::-1]
    estimates = np.array([100 * e.estimate for e in effects])
    lower = estimates - np.array([100 * e.low for e in effects])
    upper = np.array([100 * e.high for e in effects]) - estimates
    axes.errorbar(estimates, positions, xerr=[lower, upper], fmt="o", capsize=4)
    axes.axvline(0, color="grey", linewidth=1)
    axes.set_yticks(positions)
    axes.set_yticklabels([e.name for e in effects])
    axes.set_xlabel("difference in accuracy, percentage points (95% bootstrap CI)")
    axes.set_title(title)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    return path


def subject_heatmap(table: Mapping[str, Sequence[GroupAccuracy]], path: Path) -> Path:
    """Plot accuracy per subject (rows) and cell (columns) as an annotated heatmap."""
    columns = list(table)
    subjects = sorted({g.group for groups in table.values() for g in groups})
    values = np.full((len(subjects), len(columns)), np.nan)
    for j, column in enumerate(columns):
        for group in table[column]:
            values[subjects.index(group.group), j] = 100 * group.accuracy.rate
    figure, axes = plt.subplots(
        figsize=(1.2 * len(columns) + 3, 0.4 * len(subjects) + 1.5), dpi=120
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
                axes.text(j, i, f"{values[i, j]:.0f}", ha="center", va="center", color=colour)
    figure.colorbar(image, ax=axes, label="accuracy %")
    axes.set_title("accuracy by subject")
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    return path


def _jitter(key: str, spread: float) -> float:
    """Return a fixed vertical offset for a point (from its key: same plot every run)."""
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return (int.from_bytes(digest[:4], "big") / 2**32 - 0.5) * 2 * spread


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
