"""The report's tables of the sweep model (effects, adjusted p) and of image tokens per cell."""

from __future__ import annotations

import math

from itemshot.factorial.analysis.cost import FAMILIES, CellCost
from itemshot.factorial.analysis.effects import PLANNED_POWER, SweepEffects
from itemshot.factorial.report.report_format import p_value, pct, pp

TableSpec = tuple[str, list[str], list[list[str]]]
MODEL_HEADER = [
    "contrast", "items", "Δ pp (model)", "95% CI", "odds ratio [95% CI]", "p", "p Holm", "p BH",
    "Δ pp (bootstrap) [95% CI]", "discordant %", f"detectable at {PLANNED_POWER:.0%} power, pp",
]  # fmt: skip


def _ratio(value: float) -> str:
    return "–" if not math.isfinite(value) else f"{value:.3g}"


def model_effect_table(effects: SweepEffects, prefix: str = "") -> TableSpec:
    """Return the model's effects with raw and adjusted p-values and the bootstrap beside."""
    rows = []
    for e in effects.effects:
        check = e.bootstrap
        bootstrap = (
            "–" if check is None else f"{pp(check.estimate)} [{pp(check.low)}, {pp(check.high)}]"
        )
        detectable = "–" if not math.isfinite(e.detectable) else f"±{100 * e.detectable:.1f}"
        rows.append([
            e.name, str(e.n_items), pp(e.points), f"[{pp(e.low)}, {pp(e.high)}]",
            f"{_ratio(e.odds_ratio)} [{_ratio(e.or_low)}, {_ratio(e.or_high)}]",
            p_value(e.pvalue), p_value(e.p_holm), p_value(e.p_bh), bootstrap,
            pct(e.discordant), detectable,
        ])  # fmt: skip
    title = (
        f"{prefix}effects of every factor, one model ({effects.method}); p adjusted across "
        f"the {len(effects.effects)} contrasts: Holm (family-wise), BH (false discovery rate)"
    )
    return (title, MODEL_HEADER, rows)


def _tokens(value: float | None) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:.0f}"


def cost_table(costs: tuple[CellCost, ...], prefix: str = "") -> TableSpec:
    """Return accuracy beside mean image tokens per request, billed and estimated per family."""
    header = ["cell", "n", "accuracy %", "billed input tokens", "billed image tokens",
              "image tokens", "source", *(f"{family} est." for family in FAMILIES)]  # fmt: skip
    rows = [
        [c.cell, str(c.n), pct(c.accuracy), _tokens(c.billed_input), _tokens(c.billed_image),
         _tokens(c.image_tokens), c.source, *(_tokens(c.estimated.get(f)) for f in FAMILIES)]
        for c in costs
    ]  # fmt: skip
    families = ", ".join(FAMILIES)
    title = f"{prefix}image tokens per cell (mean per request; estimates by {families} formulas)"
    return (title, header, rows)
