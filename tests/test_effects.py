"""The sweep model on simulated sweeps: its intervals cover the truth, Holm holds the family.

Each simulated sweep draws new items from one population (item log-odds
normal) and answers a one-at-a-time ablation from a known logistic model:
the handwritten font costs 8 points and the scan capture 5 points of
accuracy over the item population, serif and the PC screenshot nothing. The
shift on the log-odds scale that gives a stated drop in population accuracy
is solved numerically (Gauss–Hermite quadrature over the item distribution).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import expit

from itemshot.factorial.analysis.effects import Observation, sweep_effects

ITEM_MEAN, ITEM_SD = 0.4, 1.0
REFERENCE = {"font_style": "regular", "capture": "none"}
TRUTH = {
    ("font_style", "handwritten"): -0.08,
    ("font_style", "serif"): 0.0,
    ("capture", "scan"): -0.05,
    ("capture", "pc_screenshot"): 0.0,
}
SWEEPS = 200
_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(80)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()


def _population_accuracy(shift: float) -> float:
    return float(_WEIGHTS @ expit(ITEM_MEAN + ITEM_SD * _NODES + shift))


def _logit_shift(drop: float) -> float:
    """Return the log-odds shift that moves population accuracy by `drop`."""
    if drop == 0:
        return 0.0
    base = _population_accuracy(0.0)
    return float(brentq(lambda b: _population_accuracy(b) - base - drop, -5, 5))


def _simulate(
    rng: np.random.Generator, truth: Mapping[tuple[str, str], float], n_items: int
) -> list[Observation]:
    """Return one sweep: the reference look and each level alone, every item in every cell."""
    shifts = {key: _logit_shift(drop) for key, drop in truth.items()}
    ability = rng.normal(ITEM_MEAN, ITEM_SD, n_items)
    conditions = [dict(REFERENCE)] + [REFERENCE | {f: lvl} for f, lvl in truth]
    rows = []
    for condition in conditions:
        shift = sum(s for (f, lvl), s in shifts.items() if condition[f] == lvl)
        right = rng.random(n_items) < expit(ability + shift)
        rows += [
            Observation("vision·10", f"item{i}", condition, bool(right[i])) for i in range(n_items)
        ]
    return rows


@contextmanager
def _frozen_heap() -> Iterator[None]:
    """Keep objects alive before the loop out of garbage collection while it runs.

    statsmodels' Holm adjustment calls gc.collect() on every call; with the
    test session's heap frozen, each collection scans only the loop's objects.
    """
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def test_intervals_cover_the_true_effects() -> None:
    rng = np.random.default_rng(20261203)
    covered: dict[tuple[str, str], list[bool]] = {key: [] for key in TRUTH}
    with _frozen_heap():
        for _ in range(SWEEPS):
            result = sweep_effects(_simulate(rng, TRUTH, 50), REFERENCE)
            assert len(result.effects) == len(TRUTH)
            for effect in result.effects:
                truth = TRUTH[(effect.factor, effect.level)]
                covered[(effect.factor, effect.level)].append(effect.low <= truth <= effect.high)
    pooled = float(np.mean([hit for hits in covered.values() for hit in hits]))
    by_effect = {f"{f}={lvl}": float(np.mean(hits)) for (f, lvl), hits in covered.items()}
    print(f"coverage of 95% intervals over {SWEEPS} sweeps: {pooled:.3f}; {by_effect}")
    assert 0.93 <= pooled <= 0.97, by_effect
    assert min(by_effect.values()) >= 0.90, by_effect


def test_holm_keeps_the_family_wise_error_when_nothing_has_an_effect() -> None:
    rng = np.random.default_rng(7)
    null = dict.fromkeys(TRUTH, 0.0)
    holm = raw = 0
    with _frozen_heap():
        for _ in range(SWEEPS):
            result = sweep_effects(_simulate(rng, null, 40), REFERENCE)
            holm += any(effect.p_holm < 0.05 for effect in result.effects)
            raw += any(effect.pvalue < 0.05 for effect in result.effects)
    print(f"family-wise false positives over {SWEEPS} null sweeps: Holm {holm}, unadjusted {raw}")
    assert holm / SWEEPS <= 0.05
    assert raw > holm  # four contrasts at 5% each: unadjusted, the family errs more often


def test_model_effect_matches_the_bootstrap_cross_check() -> None:
    rng = np.random.default_rng(3)
    result = sweep_effects(_simulate(rng, TRUTH, 80), REFERENCE, n_boot=500, seed=1)
    assert [fit.converged for fit in result.fits] == [True]
    assert result.fits[0].n_items == 80
    for effect in result.effects:
        check = effect.bootstrap
        assert check is not None and check.n_items == 80
        # One-at-a-time with every item in every cell: the model is saturated, so its
        # marginal accuracies are the cells' own and the two estimates are the same number.
        assert effect.points == pytest.approx(check.estimate, abs=1e-6)
        assert effect.low < effect.points < effect.high
        assert effect.or_low < effect.odds_ratio < effect.or_high
        assert effect.pvalue <= effect.p_bh <= effect.p_holm <= 1.0
        assert (effect.odds_ratio < 1) == (effect.points < 0)
    handwritten = result.effect("vision·10 font_style: handwritten − regular")
    assert handwritten.level == "handwritten" and handwritten.reference == "regular"


def test_a_level_right_on_every_item_is_reported_not_fitted_silently() -> None:
    rows = [
        Observation("vision·4", f"item{i}", {"font_style": style}, style == "serif" or i % 2 == 0)
        for i in range(20)
        for style in ("regular", "serif")
    ]
    result = sweep_effects(rows, {"font_style": "regular"})
    assert len(result.effects) == 1
    if not result.fits[0].converged:
        assert any("did not converge" in note for note in result.notes)
    assert result.effects[0].points == pytest.approx(0.5, abs=0.05)
