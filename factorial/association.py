"""How a continuous score goes with a 0/1 outcome: means, point-biserial r, logistic fit.

Intervals are percentile bootstraps that resample items; when rows carry a
cluster (the item, with several models' rows per item) whole clusters are
resampled, so rows of one item stay together. Every interval is reproducible
from its seed.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats

DEFAULT_BOOTSTRAP = 2000
_MAX_SLOPE = 1e3  # a logistic slope past this is a separated fit, not an estimate
_NEWTON_STEPS = 100
_MAX_LOGIT = 500.0  # exp() of more overflows; the fit is separated long before


@dataclass(frozen=True)
class MeanScore:
    """The mean of a score over items with its bootstrap interval."""

    mean: float
    low: float
    high: float
    n: int


@dataclass(frozen=True)
class Correlation:
    """Point-biserial correlation (Pearson r of score and 0/1 outcome) with interval and p."""

    name: str
    r: float
    low: float
    high: float
    n: int
    pvalue: float | None


@dataclass(frozen=True)
class LogisticFit:
    """P(correct) = 1 / (1 + exp(−(intercept + slope · score))), slope with its interval.

    `separated` counts bootstrap draws whose fit diverged (a score that splits
    right from wrong perfectly); they are left out of the interval.
    """

    name: str
    intercept: float
    slope: float
    low: float
    high: float
    n: int
    converged: bool
    separated: int

    def probability(self, score: float) -> float:
        """Return the fitted probability of a correct answer at `score`."""
        return float(1.0 / (1.0 + np.exp(-(self.intercept + self.slope * score))))


def _groups(clusters: Sequence[Hashable] | None, n: int) -> list[np.ndarray]:
    if clusters is None:
        return [np.array([i]) for i in range(n)]
    index: dict[Hashable, list[int]] = {}
    for row, cluster in enumerate(clusters):
        index.setdefault(cluster, []).append(row)
    return [np.array(rows) for rows in index.values()]


def _draws(
    groups: list[np.ndarray], n_boot: int, seed: int
) -> list[np.ndarray]:  # row indices of each bootstrap sample
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(groups), size=(n_boot, len(groups)))
    return [np.concatenate([groups[g] for g in pick]) for pick in picks]


def _percentiles(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float]:
    finite = np.asarray([v for v in values if np.isfinite(v)], dtype=float)
    if finite.size == 0:
        return (float("nan"), float("nan"))
    alpha = (1 - confidence) / 2
    low, high = np.quantile(finite, [alpha, 1 - alpha])
    return (float(low), float(high))


def mean_score(
    values: Sequence[float], n_boot: int = DEFAULT_BOOTSTRAP, seed: int = 0
) -> MeanScore:
    """Return the mean of `values` with its percentile-bootstrap interval."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return MeanScore(float("nan"), float("nan"), float("nan"), 0)
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, size=(n_boot, data.size))].mean(axis=1)
    low, high = _percentiles(means.tolist())
    return MeanScore(float(data.mean()), low, high, int(data.size))


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(np.corrcoef(x, y)[0, 1])


def point_biserial(
    name: str,
    scores: Sequence[float],
    outcomes: Sequence[bool],
    n_boot: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
    clusters: Sequence[Hashable] | None = None,
) -> Correlation:
    """Return the point-biserial r of scores and outcomes, its bootstrap interval and p-value."""
    x = np.asarray(scores, dtype=float)
    y = np.asarray(outcomes, dtype=float)
    r = _pearson(x, y)
    pvalue = None
    if np.isfinite(r) and x.size > 2:
        pvalue = float(scipy_stats.pearsonr(x, y).pvalue)
    draws = _draws(_groups(clusters, x.size), n_boot, seed) if np.isfinite(r) else []
    low, high = _percentiles([_pearson(x[rows], y[rows]) for rows in draws])
    return Correlation(name, r, low, high, int(x.size), pvalue)


def _newton(x: np.ndarray, y: np.ndarray) -> tuple[float, float, bool]:
    """Return the maximum-likelihood (intercept, slope) of a one-predictor logistic model."""
    design = np.column_stack([np.ones_like(x), x])
    beta = np.zeros(2)
    for _ in range(_NEWTON_STEPS):
        p = 1.0 / (1.0 + np.exp(-np.clip(design @ beta, -_MAX_LOGIT, _MAX_LOGIT)))
        weights = p * (1 - p)
        hessian = design.T @ (design * weights[:, None])
        if np.linalg.cond(hessian) > 1e12:
            return float(beta[0]), float(beta[1]), False
        step = np.linalg.solve(hessian, design.T @ (y - p))
        beta = beta + step
        if abs(beta[1]) > _MAX_SLOPE:
            return float(beta[0]), float(beta[1]), False
        if np.max(np.abs(step)) < 1e-10:
            return float(beta[0]), float(beta[1]), True
    return float(beta[0]), float(beta[1]), False


def logistic_fit(
    name: str,
    scores: Sequence[float],
    outcomes: Sequence[bool],
    n_boot: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
    clusters: Sequence[Hashable] | None = None,
) -> LogisticFit:
    """Return the logistic fit of outcome on score and a bootstrap interval of its slope."""
    x = np.asarray(scores, dtype=float)
    y = np.asarray(outcomes, dtype=float)
    if x.size < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        nan = float("nan")
        return LogisticFit(name, nan, nan, nan, nan, int(x.size), False, 0)
    intercept, slope, converged = _newton(x, y)
    slopes: list[float] = []
    separated = 0
    for rows in _draws(_groups(clusters, x.size), n_boot, seed):
        if np.ptp(x[rows]) == 0 or np.ptp(y[rows]) == 0:
            separated += 1
            continue
        _, draw, ok = _newton(x[rows], y[rows])
        if ok:
            slopes.append(draw)
        else:
            separated += 1
    low, high = _percentiles(slopes)
    return LogisticFit(name, intercept, slope, low, high, int(x.size), converged, separated)


def across_groups(
    name: str,
    points: Mapping[str, Mapping[str, tuple[float, bool]]],
    n_boot: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
) -> Correlation:
    """Return Pearson r across groups (models) of mean score and accuracy, over common items.

    `points[group][item] = (score, correct)`. The interval resamples the common
    items, recomputing every group's means on each draw.
    """
    groups = sorted(points)
    common = sorted(set.intersection(*(set(points[g]) for g in groups))) if groups else []
    if len(groups) < 3 or not common:
        return Correlation(name, float("nan"), float("nan"), float("nan"), len(common), None)
    score = np.array([[points[g][i][0] for i in common] for g in groups], dtype=float)
    right = np.array([[float(points[g][i][1]) for i in common] for g in groups], dtype=float)
    r = _pearson(score.mean(axis=1), right.mean(axis=1))
    pvalue = None
    if np.isfinite(r):
        pvalue = float(scipy_stats.pearsonr(score.mean(axis=1), right.mean(axis=1)).pvalue)
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(n_boot):
        rows = rng.integers(0, len(common), size=len(common))
        draws.append(_pearson(score[:, rows].mean(axis=1), right[:, rows].mean(axis=1)))
    low, high = _percentiles(draws)
    return Correlation(name, r, low, high, len(common), pvalue)
