"""How the report prints numbers: percentages, percentage points, p-values, effect rows."""

from __future__ import annotations

from collections.abc import Sequence

from itemshot.factorial.analysis.stats import Effect

EFFECT_HEADER = ["contrast", "Δ pp", "95% CI", "items", "McNemar p"]


def pct(value: float) -> str:
    """Return a rate as a percentage with one decimal ("–" for an undefined one)."""
    return "–" if value != value else f"{100 * value:.1f}"


def pp(value: float) -> str:
    """Return a difference of rates in signed percentage points."""
    return "–" if value != value else f"{100 * value:+.1f}"


def p_value(value: float | None) -> str:
    """Return a p-value with three significant digits, "<1e-4" below that."""
    if value is None or value != value:
        return "–"
    return f"{value:.3g}" if value >= 1e-4 else "<1e-4"


def effect_rows(effects: Sequence[Effect]) -> list[list[str]]:
    """Return effects as table rows under `EFFECT_HEADER`."""
    return [
        [e.name, pp(e.estimate), f"[{pp(e.low)}, {pp(e.high)}]", str(e.n_items), p_value(e.pvalue)]
        for e in effects
    ]
