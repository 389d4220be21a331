"""Statistics checked against scipy and statsmodels on fixed inputs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats as scipy_stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

from itemshot.factorial.analysis.stats import (
    INTERACTION,
    ablation_effects,
    accuracy,
    blind_gap,
    bootstrap_contrast,
    decompose_2x2,
    group_accuracies,
    mcnemar_exact,
    paired_matrix,
    wilson_interval,
)
from itemshot.factorial.report.plots import interaction_plot


@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (10, 10), (952, 1730), (1, 2), (57, 200)])
def test_wilson_matches_statsmodels(k: int, n: int) -> None:
    low, high = wilson_interval(k, n)
    ref_low, ref_high = proportion_confint(k, n, alpha=0.05, method="wilson")
    assert low == pytest.approx(ref_low, abs=1e-12)
    assert high == pytest.approx(ref_high, abs=1e-12)


@given(st.integers(1, 5000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_an_interval_always_holds_its_rate(case: tuple[int, int]) -> None:
    """Every interval contains its own rate, 0% and 100% included (a plot's error bars)."""
    k, n = case
    low, high = wilson_interval(k, n)
    assert 0.0 <= low <= k / n <= high <= 1.0


def test_a_cell_at_0_and_one_at_100_percent_plot(tmp_path: Path) -> None:
    """The 2×2 plot draws cells every item of which is wrong, or right, like any other."""
    items = [f"item-{i}" for i in range(30)]
    cells = {
        "S4": {item: True for item in items},
        "S10": {item: i % 2 == 0 for i, item in enumerate(items)},
        "V4": {item: i % 3 == 0 for i, item in enumerate(items)},
        "V10": {item: False for item in items},
    }
    decomposition = decompose_2x2(cells, n_boot=200)
    assert (decomposition.cells["V10"].low, decomposition.cells["S4"].high) == (0.0, 1.0)
    plot = interaction_plot(decomposition, tmp_path / "2x2.png")
    assert plot.read_bytes().startswith(b"\x89PNG")


def _paired(b: int, c: int, both: int, neither: int) -> tuple[list[bool], list[bool]]:
    first = [True] * both + [True] * b + [False] * c + [False] * neither
    second = [True] * both + [False] * b + [True] * c + [False] * neither
    return first, second


@pytest.mark.parametrize(("b", "c"), [(0, 0), (5, 1), (12, 30), (40, 40), (0, 7), (101, 77)])
def test_mcnemar_matches_statsmodels(b: int, c: int) -> None:
    first, second = _paired(b, c, both=20, neither=13)
    result = mcnemar_exact(first, second)
    reference = mcnemar([[20, b], [c, 13]], exact=True)
    assert (result.only_first, result.only_second) == (b, c)
    assert result.pvalue == pytest.approx(reference.pvalue, rel=1e-9, abs=1e-15)


def _outcomes(rng: np.random.Generator, n: int, rate: float) -> dict[str, bool]:
    return {f"item{i:04d}": bool(value) for i, value in enumerate(rng.random(n) < rate)}


def test_bootstrap_difference_agrees_with_scipy_paired_bootstrap() -> None:
    rng = np.random.default_rng(11)
    first = rng.random(400) < 0.6
    second = np.where(rng.random(400) < 0.8, first, rng.random(400) < 0.4)
    matrix = np.column_stack([first, second]).astype(float)
    estimate, low, high = bootstrap_contrast(matrix, (1.0, -1.0), n_boot=4000, seed=5)
    reference = scipy_stats.bootstrap(
        (first.astype(float), second.astype(float)),
        lambda a, b, axis=-1: a.mean(axis=axis) - b.mean(axis=axis),
        paired=True,
        n_resamples=4000,
        method="percentile",
        random_state=np.random.default_rng(6),
    )
    assert estimate == pytest.approx(first.mean() - second.mean())
    assert low == pytest.approx(reference.confidence_interval.low, abs=0.012)
    assert high == pytest.approx(reference.confidence_interval.high, abs=0.012)
    again = bootstrap_contrast(matrix, (1.0, -1.0), n_boot=4000, seed=5)
    assert again == (estimate, low, high)


def test_decomposition_contrasts_and_pairing() -> None:
    rng = np.random.default_rng(3)
    cells = {
        "S4": _outcomes(rng, 300, 0.7),
        "S10": _outcomes(rng, 300, 0.55),
        "V4": _outcomes(rng, 300, 0.6),
        "V10": _outcomes(rng, 300, 0.35),
    }
    del cells["V10"]["item0000"]  # unpaired items are left out of every contrast
    result = decompose_2x2(cells, n_boot=500, seed=1)
    assert result.n_items == 299
    _, matrix = paired_matrix([cells[name] for name in ("S4", "S10", "V4", "V10")])
    s4, s10, v4, v10 = matrix.mean(axis=0)
    interaction = result.effect(INTERACTION)
    assert interaction.estimate == pytest.approx((v10 - v4) - (s10 - s4))
    assert interaction.low <= interaction.estimate <= interaction.high
    assert interaction.pvalue is None
    fmt10 = result.effect("format effect, 10 options (V10−S10)")
    assert fmt10.estimate == pytest.approx(v10 - s10)
    reference = mcnemar(
        [
            [
                int(((matrix[:, 3] == 1) & (matrix[:, 1] == 1)).sum()),
                int(((matrix[:, 3] == 1) & (matrix[:, 1] == 0)).sum()),
            ],
            [
                int(((matrix[:, 3] == 0) & (matrix[:, 1] == 1)).sum()),
                int(((matrix[:, 3] == 0) & (matrix[:, 1] == 0)).sum()),
            ],
        ],
        exact=True,
    )
    assert fmt10.pvalue == pytest.approx(reference.pvalue)
    assert result.cells["S4"].n == 299
    with pytest.raises(ValueError):
        decompose_2x2({"S4": cells["S4"]})


def test_ablation_group_and_blind_gap() -> None:
    levels = {
        "exam_sheet": {"a": True, "b": True, "c": False, "d": True},
        "whiteboard": {"a": True, "b": False, "c": False, "d": False},
        "webpage": {"a": True, "b": True, "c": True, "d": True},
    }
    effects = ablation_effects(levels, "exam_sheet", factor="layout", n_boot=200)
    by_name = {effect.name: effect for effect in effects}
    assert by_name["layout: whiteboard − exam_sheet"].estimate == pytest.approx(-0.5)
    assert by_name["layout: webpage − exam_sheet"].estimate == pytest.approx(0.25)
    groups = group_accuracies([("Math", True), ("Math", False), ("Art", True)])
    assert [(g.group, g.accuracy.correct, g.accuracy.n) for g in groups] == [
        ("Art", 1, 1),
        ("Math", 1, 2),
    ]
    gap = blind_gap(levels["webpage"], levels["whiteboard"], n_boot=200)
    assert gap.estimate == pytest.approx(0.75) and gap.n_items == 4
    acc = accuracy([True, False, True])
    assert acc.correct == 2 and acc.rate == pytest.approx(2 / 3)
