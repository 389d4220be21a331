"""Certified review's statistics: exact sample sizes, and bounds that hold in simulated reviews.

The simulation runs the certification as the app does: draw the seeded
sample, let a reviewer who sees every defect decide it, grow the sample when
a defect raises the bound, stop when the bound is reached or the verifier is
not to be trusted. Across 500 simulated reviews per known defect rate the
stated bound must be at least the true rate in 95% of them or more.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest

from itemshot.review.certify import (
    SetState,
    assess,
    draw_sample,
    sample_size,
    to_certify,
    upper_bound,
)

PASSED = 1000
RUNS = 500


def _exact_upper(defects: int, n: int, confidence: float) -> float:
    """Return the one-sided Clopper–Pearson bound through scipy's exact binomial test."""
    interval = binomtest(defects, n).proportion_ci(
        confidence_level=2 * confidence - 1, method="exact"
    )
    return interval.high


@pytest.mark.parametrize(
    ("rate", "confidence", "defects"),
    [(0.02, 0.95, 0), (0.02, 0.95, 1), (0.02, 0.95, 3), (0.05, 0.99, 0), (0.01, 0.9, 2)],
)
def test_sample_size_is_the_smallest_that_reaches_the_bound(
    rate: float, confidence: float, defects: int
) -> None:
    n = sample_size(rate, confidence, defects)
    assert n is not None
    assert _exact_upper(defects, n, confidence) <= rate < _exact_upper(defects, n - 1, confidence)


def test_zero_defects_at_two_percent_needs_149_images() -> None:
    assert sample_size(0.02, 0.95) == 149
    assert upper_bound(0, 149) == pytest.approx(1 - 0.05 ** (1 / 149), rel=1e-9)
    assert sample_size(0.02, 0.95, 0, limit=100) is None


def test_the_draw_is_seeded_and_independent_of_input_order() -> None:
    images = [f"images/{i:04d}.png" for i in range(400)]
    first = draw_sample(images, 0.02, 0.95, seed=7)
    again = draw_sample(list(reversed(images)), 0.02, 0.95, seed=7)
    other = draw_sample(images, 0.02, 0.95, seed=8)
    assert first == again and first.size == 149
    assert first.drawn != other.drawn and first.id != other.id
    assert first.grown(200).drawn[:149] == first.drawn


def _simulate(rate: float, run: int) -> tuple[float, float, bool, int]:
    """Return (stated bound, true rate among the accepted, certified, sample size) of one review."""
    rng = np.random.default_rng(10_000 + run)
    images = [f"images/{i:05d}.png" for i in range(PASSED)]
    failed = [f"images/failed-{i:03d}.png" for i in range(50)]
    defects = {images[i] for i in rng.choice(PASSED, round(rate * PASSED), replace=False)}
    verdicts = {image: "pass" for image in images} | {image: "fail" for image in failed}
    # Failed images are reviewed in full; say a fifth of them were really wrong.
    by_hand = {image: "rejected" if i % 5 == 0 else "accepted" for i, image in enumerate(failed)}
    sample = draw_sample(images, 0.02, 0.95, seed=run)
    while True:
        decided = {i: "rejected" if i in defects else "accepted" for i in sample.drawn}
        state = SetState(verdicts, by_hand | decided)
        found = assess(sample, state)
        if found.trusted and found.more:
            sample = sample.grown(found.needed or 0)
            continue
        break
    if not found.ready:
        return found.bound, rate, False, sample.size
    certified = to_certify(sample, state)
    left = len(defects.intersection(certified))
    accepted = found.accepted + len(certified)
    return found.bound, left / accepted, True, sample.size


@pytest.mark.parametrize("rate", [0.0, 0.01, 0.03])
def test_the_stated_bound_holds_in_95_percent_of_simulated_reviews(rate: float) -> None:
    results = [_simulate(rate, run) for run in range(RUNS)]
    bounds = np.array([r[0] for r in results])
    among_accepted = np.array([r[1] for r in results])
    certified = np.array([r[2] for r in results])
    sizes = np.array([r[3] for r in results])
    # The bound is on the passed images' defect rate, which bounds the accepted images' rate.
    assert (bounds >= rate).mean() >= 0.95
    assert (bounds >= among_accepted).mean() >= 0.95
    assert sizes.min() >= 149
    if rate == 0.0:
        assert certified.all() and (sizes == 149).all()
    if rate == 0.03:
        # Above the target: certification must be rare, and every one stated honestly.
        assert certified.mean() <= 0.05
    print(
        f"rate {rate:.0%}: bound ≥ true rate in {(bounds >= rate).mean():.1%} of {RUNS}, "
        f"certified {certified.mean():.1%}, sample size median {int(np.median(sizes))} "
        f"(min {sizes.min()}, max {sizes.max()})"
    )
