"""PNG plots of a sweep analysis (matplotlib, Agg backend)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from itemshot.factorial.stats import Decomposition, Effect, GroupAccuracy


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
