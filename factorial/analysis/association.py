"""How a continuous score goes with a 0/1 outcome: means, point-biserial r, logistic fit.

The logistic fit is statsmodels' binomial GLM with a Wald interval (clustered
by item when rows carry a cluster). The other intervals are percentile
bootstraps that resample items; when rows carry a
cluster (the item, with several models' rows per item) whole clusters are
resampled, so rows of one item stay together. Every interval is reproducible
from its seed.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats as scipy_stats

DEFAULT_BOOTSTRAP = 2000
_MAX_SLOPE = 1e3  # a logistic slope past this is a separated fit, not an estimate


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

    `separated` is 1 when the score splits right from wrong perfectly: the
    slope has no finite estimate, `converged` is False and there is no interval.
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


_CHUNK = 256  # bootstrap draws computed together (bounded memory: chunk × rows floats)


def _cluster_index(clusters: Sequence[Hashable] | None, n: int) -> tuple[np.ndarray, int]:
    """Return each row's cluster number and the number of clusters (one per row when None)."""
    if clusters is None:
        return np.arange(n), n
    numbers: dict[Hashable, int] = {}
    index = np.array([numbers.setdefault(c, len(numbers)) for c in clusters], dtype=int)
    return index, len(numbers)


def _bootstrap_weights(
    clusters: Sequence[Hashable] | None, n: int, n_boot: int, seed: int
) -> Iterator[np.ndarray]:
    """Yield chunks of bootstrap draws as row weights (how often each row was drawn).

    A draw resamples clusters with replacement; every row of a drawn cluster
    counts once per draw of its cluster.
    """
    index, n_clusters = _cluster_index(clusters, n)
    rng = np.random.default_rng(seed)
    for start in range(0, n_boot, _CHUNK):
        size = min(_CHUNK, n_boot - start)
        picks = rng.integers(0, n_clusters, size=(size, n_clusters))
        offsets = (picks + n_clusters * np.arange(size)[:, None]).ravel()
        counts = np.bincount(offsets, minlength=size * n_clusters).reshape(size, n_clusters)
        yield counts[:, index].astype(float)


def _percentiles(values: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    finite = values[np.isfinite(values)]
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
    means = np.concatenate(
        [(w @ data) / data.size for w in _bootstrap_weights(None, data.size, n_boot, seed)]
    )
    low, high = _percentiles(means)
    return MeanScore(float(data.mean()), low, high, int(data.size))


def _weighted_pearson(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Return Pearson r for each row of weights `w` (nan where x or y does not vary)."""
    total = w.sum(axis=1)
    dx = x - ((w @ x) / total)[:, None]
    dy = y - ((w @ y) / total)[:, None]
    covariance = (w * dx * dy).sum(axis=1)
    spread = np.sqrt((w * dx * dx).sum(axis=1) * (w * dy * dy).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = covariance / spread
    return np.where(spread > 1e-12 * total, r, np.nan)


def _logistic(
    x: np.ndarray, y: np.ndarray, clusters: Sequence[Hashable] | None
) -> tuple[float, float, float, float, bool]:
    """Return (intercept, slope, slope's low, high, converged) of statsmodels' logistic GLM.

    The slope's interval is the Wald interval, from the cluster-robust
    covariance when rows carry clusters (rows of one item are not
    independent). A fit the score separates perfectly (statsmodels warns, or
    the slope runs past `_MAX_SLOPE`) has no interval and is not converged.
    """
    import statsmodels.api as sm
    from statsmodels.tools.sm_exceptions import PerfectSeparationError, PerfectSeparationWarning

    nan = float("nan")
    design = np.column_stack([np.ones_like(x), x])
    options: dict[str, Any] = {}
    if clusters is not None:
        index, _ = _cluster_index(clusters, x.size)
        options = {"cov_type": "cluster", "cov_kwds": {"groups": index}}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = sm.GLM(y, design, family=sm.families.Binomial()).fit(**options)
        except PerfectSeparationError:
            return (nan, nan, nan, nan, False)
    intercept, slope = (float(v) for v in result.params)
    separated = any(issubclass(w.category, PerfectSeparationWarning) for w in caught)
    if separated or not np.isfinite(slope) or abs(slope) > _MAX_SLOPE:
        return (intercept, slope, nan, nan, False)
    low, high = (float(v) for v in np.asarray(result.conf_int())[1])
    return (intercept, slope, low, high, True)


def item_association(
    name: str,
    scores: Sequence[float],
    outcomes: Sequence[bool],
    n_boot: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
    clusters: Sequence[Hashable] | None = None,
) -> tuple[Correlation, LogisticFit]:
    """Return the point-biserial r and the logistic fit of outcome on score, with intervals.

    r is the Pearson correlation of the score and the 0/1 outcome, with its
    t-test p-value and a bootstrap interval; the logistic fit is statsmodels'
    GLM with its Wald interval (cluster-robust when `clusters` are given).
    """
    x = np.asarray(scores, dtype=float)
    y = np.asarray(outcomes, dtype=float)
    n, nan = int(x.size), float("nan")
    r = float(_weighted_pearson(x, y, np.ones((1, n)))[0]) if n >= 2 else nan
    if not np.isfinite(r):  # too few rows, or a score or outcome that never varies
        return Correlation(name, r, nan, nan, n, None), LogisticFit(
            name, nan, nan, nan, nan, n, False, 0
        )
    pvalue = float(scipy_stats.pearsonr(x, y).pvalue) if n > 2 else None
    intercept, slope, low, high, converged = _logistic(x, y, clusters)
    rs = [_weighted_pearson(x, y, w) for w in _bootstrap_weights(clusters, n, n_boot, seed)]
    r_low, r_high = _percentiles(np.concatenate(rs))
    fit = LogisticFit(name, intercept, slope, low, high, n, converged, int(not converged))
    return Correlation(name, r, r_low, r_high, n, pvalue), fit


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
    mean_score_, mean_right = score.mean(axis=1), right.mean(axis=1)
    r = float(_weighted_pearson(mean_score_, mean_right, np.ones((1, len(groups))))[0])
    pvalue = None
    if np.isfinite(r):
        pvalue = float(scipy_stats.pearsonr(mean_score_, mean_right).pvalue)
    draws = []
    for w in _bootstrap_weights(None, len(common), n_boot, seed):
        means_x = (w @ score.T) / len(common)  # draws × groups
        means_y = (w @ right.T) / len(common)
        dx = means_x - means_x.mean(axis=1, keepdims=True)
        dy = means_y - means_y.mean(axis=1, keepdims=True)
        spread = np.sqrt((dx * dx).sum(axis=1) * (dy * dy).sum(axis=1))
        with np.errstate(invalid="ignore", divide="ignore"):
            draws.append(np.where(spread > 1e-12, (dx * dy).sum(axis=1) / spread, np.nan))
    low, high = _percentiles(np.concatenate(draws))
    return Correlation(name, r, low, high, len(common), pvalue)
