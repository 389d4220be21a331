"""Statistics for a sweep: accuracies with CIs, paired tests and contrasts.

Outcomes are passed around as `Mapping[item_id, bool]` (one per condition);
paired statistics use only the items present in every condition compared.
Bootstrap intervals resample items (rows), so the pairing between conditions
is kept, and are reproducible from their seed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats

Outcomes = Mapping[str, bool]

DEFAULT_BOOTSTRAP = 2000
_CHUNK = 256


@dataclass(frozen=True)
class Accuracy:
    """Correct answers out of n, the rate and its Wilson confidence interval."""

    correct: int
    n: int
    rate: float
    low: float
    high: float


@dataclass(frozen=True)
class McNemar:
    """McNemar's exact test on paired outcomes: discordant counts and two-sided p-value."""

    only_first: int
    only_second: int
    pvalue: float


@dataclass(frozen=True)
class Effect:
    """A contrast between conditions on the same items, with a bootstrap CI."""

    name: str
    estimate: float
    low: float
    high: float
    n_items: int
    pvalue: float | None = None


@dataclass(frozen=True)
class Decomposition:
    """The 2×2 (format × option count): cell accuracies and the five contrasts."""

    cells: Mapping[str, Accuracy]
    effects: tuple[Effect, ...]
    n_items: int

    def effect(self, name: str) -> Effect:
        """Return the contrast called `name`."""
        for effect in self.effects:
            if effect.name == name:
                return effect
        raise KeyError(name)


@dataclass(frozen=True)
class GroupAccuracy:
    """Accuracy of one group (a subject, a scene) within one condition."""

    group: str
    accuracy: Accuracy


def wilson_interval(correct: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Return the Wilson score interval for `correct` successes out of `n`."""
    if n <= 0:
        return (0.0, 1.0)
    # scipy's interval is exact at the ends (0 and 1, not 2.8e-17 or 1 - 1e-16), so it
    # always contains the rate: a 0% or 100% cell plots and reports like any other.
    interval = scipy_stats.binomtest(correct, n).proportion_ci(confidence, method="wilson")
    return (float(interval.low), float(interval.high))


def accuracy(outcomes: Iterable[bool], confidence: float = 0.95) -> Accuracy:
    """Return the accuracy of a set of outcomes with its Wilson interval."""
    values = [bool(value) for value in outcomes]
    n = len(values)
    correct = sum(values)
    low, high = wilson_interval(correct, n, confidence)
    return Accuracy(correct, n, correct / n if n else float("nan"), low, high)


def mcnemar_exact(first: Sequence[bool], second: Sequence[bool]) -> McNemar:
    """Return McNemar's exact (binomial) test comparing two paired outcome sequences."""
    if len(first) != len(second):
        raise ValueError("paired outcomes must have the same length")
    only_first = sum(1 for a, b in zip(first, second, strict=True) if a and not b)
    only_second = sum(1 for a, b in zip(first, second, strict=True) if b and not a)
    discordant = only_first + only_second
    if discordant == 0:
        return McNemar(0, 0, 1.0)
    pvalue = scipy_stats.binomtest(only_first, discordant, 0.5).pvalue
    return McNemar(only_first, only_second, float(pvalue))


def paired_matrix(conditions: Sequence[Outcomes]) -> tuple[list[str], np.ndarray]:
    """Return the items common to all conditions and their 0/1 matrix (items × conditions)."""
    if not conditions:
        return [], np.zeros((0, 0))
    common = set(conditions[0])
    for outcome in conditions[1:]:
        common &= set(outcome)
    items = sorted(common)
    matrix = np.array(
        [[1.0 if outcome[item] else 0.0 for outcome in conditions] for item in items],
        dtype=float,
    ).reshape(len(items), len(conditions))
    return items, matrix


def bootstrap_contrast(
    matrix: np.ndarray,
    weights: Sequence[float],
    n_boot: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float, float, float]:
    """Return a contrast of column means and its paired percentile-bootstrap interval."""
    weight = np.asarray(weights, dtype=float)
    n = matrix.shape[0]
    if n == 0:
        return (float("nan"), float("nan"), float("nan"))
    estimate = float(matrix.mean(axis=0) @ weight)
    rng = np.random.default_rng(seed)
    draws = np.empty(n_boot)
    for start in range(0, n_boot, _CHUNK):
        size = min(_CHUNK, n_boot - start)
        rows = rng.integers(0, n, size=(size, n))
        draws[start : start + size] = matrix[rows].mean(axis=1) @ weight
    alpha = (1 - confidence) / 2
    low, high = np.quantile(draws, [alpha, 1 - alpha])
    return (estimate, float(low), float(high))


def paired_effect(
    name: str,
    treatment: Outcomes,
    reference: Outcomes,
    n_boot: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
) -> Effect:
    """Return treatment − reference accuracy on common items, with CI and McNemar p-value."""
    items, matrix = paired_matrix([treatment, reference])
    estimate, low, high = bootstrap_contrast(matrix, (1.0, -1.0), n_boot, seed)
    test = mcnemar_exact(matrix[:, 0].astype(bool).tolist(), matrix[:, 1].astype(bool).tolist())
    return Effect(name, estimate, low, high, len(items), test.pvalue if items else None)


# Cell names of the 2×2: format letter (S standard, V vision) + option count.
CELL_NAMES = ("S4", "S10", "V4", "V10")
_CONTRASTS: tuple[tuple[str, tuple[float, float, float, float]], ...] = (
    ("option effect, standard (S10−S4)", (-1.0, 1.0, 0.0, 0.0)),
    ("option effect, vision (V10−V4)", (0.0, 0.0, -1.0, 1.0)),
    ("format effect, 4 options (V4−S4)", (-1.0, 0.0, 1.0, 0.0)),
    ("format effect, 10 options (V10−S10)", (0.0, -1.0, 0.0, 1.0)),
    ("interaction (V10−V4)−(S10−S4)", (1.0, -1.0, -1.0, 1.0)),
)
INTERACTION = _CONTRASTS[-1][0]


def decompose_2x2(
    cells: Mapping[str, Outcomes],
    n_boot: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
) -> Decomposition:
    """Return the 2×2 decomposition from outcomes keyed S4, S10, V4, V10, paired over items."""
    missing = [name for name in CELL_NAMES if name not in cells]
    if missing:
        raise ValueError(f"2×2 decomposition needs cells {', '.join(missing)}")
    items, matrix = paired_matrix([cells[name] for name in CELL_NAMES])
    accuracies = {
        name: accuracy(matrix[:, column].astype(bool).tolist())
        for column, name in enumerate(CELL_NAMES)
    }
    effects = []
    for offset, (name, weights) in enumerate(_CONTRASTS):
        estimate, low, high = bootstrap_contrast(matrix, weights, n_boot, seed + offset)
        pvalue = None
        if sum(1 for w in weights if w) == 2 and items:
            first, second = (i for i, w in enumerate(weights) if w)
            plus, minus = (first, second) if weights[first] > 0 else (second, first)
            pvalue = mcnemar_exact(
                matrix[:, plus].astype(bool).tolist(), matrix[:, minus].astype(bool).tolist()
            ).pvalue
        effects.append(Effect(name, estimate, low, high, len(items), pvalue))
    return Decomposition(accuracies, tuple(effects), len(items))


def ablation_effects(
    levels: Mapping[str, Outcomes],
    reference: str,
    factor: str = "",
    n_boot: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
) -> list[Effect]:
    """Return each level's accuracy minus the reference level's, one at a time, with CIs."""
    if reference not in levels:
        raise ValueError(f"reference level {reference!r} has no outcomes")
    prefix = f"{factor}: " if factor else ""
    return [
        paired_effect(f"{prefix}{level} − {reference}", outcomes, levels[reference], n_boot, seed)
        for level, outcomes in sorted(levels.items())
        if level != reference
    ]


def group_accuracies(pairs: Iterable[tuple[Hashable, bool]]) -> list[GroupAccuracy]:
    """Return accuracy per group from (group, correct) pairs, groups sorted by name."""
    grouped: dict[str, list[bool]] = defaultdict(list)
    for group, correct in pairs:
        grouped[str(group)].append(bool(correct))
    return [GroupAccuracy(group, accuracy(grouped[group])) for group in sorted(grouped)]


def blind_gap(
    with_image: Outcomes,
    blind: Outcomes,
    n_boot: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
    name: str = "with image − blind",
) -> Effect:
    """Return the accuracy gained over the text-only (blind) baseline on the same items."""
    return paired_effect(name, with_image, blind, n_boot, seed)
