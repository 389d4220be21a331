"""One model of correctness on every presentation factor, items as clusters.

Model choice: a GEE logistic regression (statsmodels `GEE`, binomial family,
logit link) with an exchangeable working correlation within each item.
Why GEE and not a binomial mixed model with item random intercepts:

* The question a sweep asks is population-averaged: by how many points does
  the handwritten look lower accuracy over the items? GEE estimates exactly
  that marginal mean; a mixed model's coefficients are conditional on the
  item (log-odds for an item of average difficulty) and must be integrated
  back over the item distribution to give points.
* Its intervals stay valid when the working correlation is wrong (the
  sandwich covariance); only efficiency is lost. Items of very unequal
  difficulty do not break it.
* statsmodels' binomial mixed models (`BinomialBayesMixedGLM`) are
  variational-Bayes approximations with no frequentist intervals; GEE is
  deterministic, fast and gives Wald tests.

The covariance is the bias-reduced sandwich (Mancl and DeRouen, 2001), and
intervals and tests use Student's t with (items − parameters) degrees of
freedom, as they recommend, since ablations often run on a few dozen items,
where the plain sandwich with normal quantiles is too narrow (measured: with
40 items and four null contrasts, Wald-z tests gave Holm a 6% family-wise
error). A factor level's effect is given in points of accuracy as the
difference of predicted marginal accuracy at the reference look (every other
factor at its reference), with a delta-method interval, and as an odds ratio
with its Wald interval. The raw p-values (Wald, from the same covariance) are
adjusted across the family of contrasts by Holm (family-wise error) and by
Benjamini–Hochberg (false discovery rate), both with statsmodels'
`multipletests`. The paired bootstrap of the one-at-a-time contrasts
(`stats.paired_effect`) is kept beside each effect as the cross-check, and
each contrast states the smallest effect its items could detect at 80%
power, from its own discordant pairs (`power.detectable_effect`).
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats as scipy_stats
from scipy.special import expit

from itemshot.factorial.analysis.power import detectable_effect, discordance

CONFIDENCE = 0.95
PLANNED_POWER = 0.8  # the power at which each contrast's smallest detectable effect is stated
METHOD = "GEE logistic, exchangeable item correlation, bias-reduced sandwich, t(items − terms)"


@dataclass(frozen=True)
class Observation:
    """One answer: its cell, its item, the factor levels it was shown at, and whether right."""

    cell: str
    item: str
    factors: Mapping[str, str]
    correct: bool


@dataclass(frozen=True)
class CrossCheck:
    """The paired bootstrap of the same contrast (level rows against reference rows)."""

    estimate: float
    low: float
    high: float
    n_items: int
    mcnemar_p: float | None


@dataclass(frozen=True)
class LevelEffect:
    """A factor level against its reference, from the model: points, odds ratio, p-values."""

    name: str
    cell: str
    factor: str
    level: str
    reference: str
    n_items: int
    points: float  # difference in accuracy (fraction; ×100 for points)
    low: float
    high: float
    odds_ratio: float
    or_low: float
    or_high: float
    pvalue: float
    p_holm: float = float("nan")
    p_bh: float = float("nan")
    bootstrap: CrossCheck | None = None
    discordant: float = float("nan")  # share of items right at one look only (paired)
    detectable: float = float("nan")  # smallest effect its items detect at PLANNED_POWER


@dataclass(frozen=True)
class CellFit:
    """How the model of one cell went: rows, items, convergence and the item correlation."""

    cell: str
    n_rows: int
    n_items: int
    terms: tuple[str, ...]
    converged: bool
    correlation: float
    reference_accuracy: float


@dataclass(frozen=True)
class SweepEffects:
    """Every cell's model and every contrast's effect, adjusted across the whole family."""

    method: str
    fits: tuple[CellFit, ...]
    effects: tuple[LevelEffect, ...]
    alpha: float
    notes: tuple[str, ...] = field(default_factory=tuple)

    def effect(self, name: str) -> LevelEffect:
        """Return the effect called `name`."""
        for effect in self.effects:
            if effect.name == name:
                return effect
        raise KeyError(name)


@dataclass(frozen=True)
class _Design:
    """A cell's model matrix: rows × (intercept, one dummy per non-reference level)."""

    y: np.ndarray
    x: np.ndarray
    groups: np.ndarray
    terms: tuple[tuple[str, str], ...]  # (factor, level) per dummy column


def _design(rows: Sequence[Observation], reference: Mapping[str, str]) -> _Design:
    """Return the model matrix of one cell's rows; one (item, condition) row kept each."""
    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    kept: list[Observation] = []
    for row in rows:
        key = (row.item, tuple(sorted(row.factors.items())))
        if key not in seen:  # a repeated row of an item would count the item twice
            seen.add(key)
            kept.append(row)
    terms: list[tuple[str, str]] = []
    for factor in sorted(reference):
        levels = sorted({r.factors[factor] for r in kept if factor in r.factors})
        if reference[factor] in levels and len(levels) > 1:
            terms += [(factor, level) for level in levels if level != reference[factor]]
    x = np.ones((len(kept), 1 + len(terms)))
    for column, (factor, level) in enumerate(terms, start=1):
        x[:, column] = [
            1.0 if r.factors.get(factor, reference[factor]) == level else 0.0 for r in kept
        ]
    numbers: dict[str, int] = {}
    groups = np.array([numbers.setdefault(r.item, len(numbers)) for r in kept])
    y = np.array([1.0 if r.correct else 0.0 for r in kept])
    return _Design(y, x, groups, tuple(terms))


def fit_gee(y: np.ndarray, x: np.ndarray, groups: np.ndarray) -> tuple[Any, bool]:
    """Return the fitted GEE logistic (exchangeable, bias-reduced covariance) and convergence."""
    import statsmodels.api as sm
    from statsmodels.tools.sm_exceptions import ConvergenceWarning

    order = np.argsort(groups, kind="stable")  # clusters contiguous: the layout GEE expects
    model = sm.GEE(
        y[order],
        x[order],
        groups=groups[order],
        family=sm.families.Binomial(),
        cov_struct=sm.cov_struct.Exchangeable(),
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = model.fit(cov_type="bias_reduced", maxiter=100)
    converged = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
    converged &= bool(np.all(np.isfinite(result.params)))
    return result, converged


def _level_effects(
    cell: str, design: _Design, result: Any, reference: Mapping[str, str]
) -> list[LevelEffect]:
    """Return each dummy's effect in points (delta method) and as an odds ratio."""
    items_total = len(set(design.groups.tolist()))
    df = max(items_total - design.x.shape[1], 1)
    reference_t = scipy_stats.t(df)
    z = float(reference_t.ppf(0.5 + CONFIDENCE / 2))
    params = np.asarray(result.params, dtype=float)
    covariance = np.asarray(result.cov_params(), dtype=float)
    p0 = float(expit(params[0]))
    effects = []
    for column, (factor, level) in enumerate(design.terms, start=1):
        p1 = float(expit(params[0] + params[column]))
        gradient = np.zeros(params.size)
        gradient[0] = p1 * (1 - p1) - p0 * (1 - p0)
        gradient[column] = p1 * (1 - p1)
        se = float(np.sqrt(max(gradient @ covariance @ gradient, 0.0)))
        beta, beta_se = params[column], float(np.sqrt(max(covariance[column, column], 0.0)))
        pvalue = float(2 * reference_t.sf(abs(beta) / beta_se)) if beta_se > 0 else 1.0
        items = len(set(design.groups[design.x[:, column] == 1.0].tolist()))
        effects.append(
            LevelEffect(
                name=f"{cell} {factor}: {level} − {reference[factor]}",
                cell=cell,
                factor=factor,
                level=level,
                reference=reference[factor],
                n_items=items,
                points=p1 - p0,
                low=max(p1 - p0 - z * se, -1.0),  # a difference of accuracies stays in [−1, 1]
                high=min(p1 - p0 + z * se, 1.0),
                odds_ratio=float(np.exp(beta)),
                or_low=float(np.exp(beta - z * beta_se)),
                or_high=float(np.exp(beta + z * beta_se)),
                pvalue=pvalue,
            )
        )
    return effects


def adjust(pvalues: Sequence[float], alpha: float = 0.05) -> tuple[list[float], list[float]]:
    """Return Holm and Benjamini–Hochberg adjusted p-values of a family (statsmodels)."""
    from statsmodels.stats.multitest import multipletests

    if not pvalues:
        return [], []
    raw = np.asarray(pvalues, dtype=float)
    holm = multipletests(raw, alpha=alpha, method="holm")[1]
    bh = multipletests(raw, alpha=alpha, method="fdr_bh")[1]
    return [float(p) for p in holm], [float(p) for p in bh]


def _paired(
    rows: Sequence[Observation], effect: LevelEffect, reference: Mapping[str, str]
) -> tuple[dict[str, bool], dict[str, bool]]:
    """Return item → correct at the level and at the reference look (others at reference)."""

    def at(factor_level: str) -> dict[str, bool]:
        wanted = dict(reference) | {effect.factor: factor_level}
        outcomes: dict[str, bool] = {}
        for row in rows:
            levels = dict(reference) | dict(row.factors)
            if all(levels.get(k) == v for k, v in wanted.items()):
                outcomes.setdefault(row.item, row.correct)
        return outcomes

    return at(effect.level), at(effect.reference)


def _cross_check(
    name: str, level: Mapping[str, bool], base: Mapping[str, bool], n_boot: int, seed: int
) -> CrossCheck | None:
    """Return the paired bootstrap of the level against the reference look, when both exist."""
    from itemshot.factorial.analysis.stats import paired_effect

    found = paired_effect(name, level, base, n_boot, seed)
    if not found.n_items:
        return None
    return CrossCheck(found.estimate, found.low, found.high, found.n_items, found.pvalue)


def sweep_effects(
    observations: Iterable[Observation],
    reference: Mapping[str, str],
    alpha: float = 0.05,
    n_boot: int = 0,
    seed: int = 0,
) -> SweepEffects:
    """Fit one model per cell on all factors and adjust every contrast's p across the family.

    `reference` gives each factor's reference level; factors that do not vary
    within a cell get no term there. `n_boot` > 0 adds the paired bootstrap
    cross-check to each effect (0 leaves it out, for speed in simulations).
    """
    by_cell: dict[str, list[Observation]] = defaultdict(list)
    for observation in observations:
        by_cell[observation.cell].append(observation)
    fits: list[CellFit] = []
    effects: list[LevelEffect] = []
    notes: list[str] = []
    for cell in sorted(by_cell):
        design = _design(by_cell[cell], reference)
        if not design.terms:
            continue
        n_items = len(set(design.groups.tolist()))
        if n_items <= design.x.shape[1]:  # the robust covariance needs more items than terms
            notes.append(
                f"{cell}: {n_items} items for {design.x.shape[1]} model terms, no model fitted"
            )
            continue
        result, converged = fit_gee(design.y, design.x, design.groups)
        correlation = float(np.ravel(getattr(result.cov_struct, "dep_params", np.nan))[0])
        terms = tuple(f"{factor}={level}" for factor, level in design.terms)
        fits.append(
            CellFit(cell, len(design.y), len(set(design.groups.tolist())), terms, converged,
                    correlation, float(expit(result.params[0])))
        )  # fmt: skip
        if not converged:
            notes.append(
                f"{cell}: the model did not converge (a level right or wrong on every item?); "
                "its intervals are not reliable"
            )
        effects += _level_effects(cell, design, result, reference)
    holm, bh = adjust([e.pvalue for e in effects], alpha)
    adjusted = []
    for index, effect in enumerate(effects):
        level, base = _paired(by_cell[effect.cell], effect, reference)
        pairs = discordance(level, base)
        detectable = float("nan")
        if pairs.n_items and pairs.rate > 0:
            detectable = detectable_effect(pairs.n_items, pairs.rate, PLANNED_POWER, alpha)
        check = None
        if n_boot > 0:
            check = _cross_check(effect.name, level, base, n_boot, seed + index)
        adjusted.append(
            LevelEffect(**{**effect.__dict__, "p_holm": holm[index], "p_bh": bh[index],
                           "bootstrap": check,
                           "discordant": pairs.rate, "detectable": detectable})
        )  # fmt: skip
    return SweepEffects(METHOD, tuple(fits), tuple(adjusted), alpha, tuple(notes))
