"""How many items a paired contrast needs, and the smallest effect a set of items can detect.

Two conditions shown the same items are compared by McNemar's test, whose
information is in the discordant pairs (right in one condition, wrong in the
other). The planner uses Connor's normal approximation to that test:

    n = (z_{1−α/2} · √ψ + z_{power} · √(ψ − δ²))² / δ²

where δ is the difference in accuracy and ψ the share of discordant pairs
(R. J. Connor, "Sample size for testing differences in proportions for the
paired-sample design", Biometrics 43(1):207–211, 1987). statsmodels has no
power function for McNemar's test, so the formula is written here with
scipy's normal quantiles; power at a given n counts both tails. The
simulation check draws discordant counts from the stated rates and tests
each draw with statsmodels' `mcnemar`, asymptotic (the test the formula
approximates) and exact (the test the analysis reports).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize
from scipy import stats as scipy_stats

METHOD = "Connor (1987) normal approximation to McNemar's paired test"
DEFAULT_SIMULATIONS = 2000


@dataclass(frozen=True)
class Plan:
    """A planned paired contrast: the effect, the rates, and the items it needs.

    `solved` says which was computed: `items` (from `effect`) or `effect`
    (the smallest detectable one, from `items`). The simulated powers are
    the share of simulated sets of `items` pairs in which McNemar's test
    rejects at `alpha`, asymptotic and exact.
    """

    effect: float
    discordant: float
    power: float
    alpha: float
    items: int
    items_exact: float
    solved: str
    simulated_power: float
    simulated_power_exact: float
    simulations: int
    method: str = METHOD


@dataclass(frozen=True)
class Discordance:
    """Discordant pairs between two conditions on their common items."""

    rate: float
    n_items: int
    only_first: int
    only_second: int


def _check(discordant: float, power: float, alpha: float) -> None:
    if not 0 < discordant <= 1:
        raise ValueError(f"discordant rate must be in (0, 1], got {discordant}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if not alpha / 2 < power < 1:
        raise ValueError(f"power must be in (alpha/2, 1), got {power}")


def _check_effect(effect: float, discordant: float) -> float:
    size = abs(effect)
    if not 0 < size <= discordant:
        raise ValueError(
            f"an effect of {effect:+g} needs a discordant rate of at least {size:g} "
            f"(got {discordant:g}): the difference in accuracy comes from discordant pairs"
        )
    return size


def mcnemar_power(items: float, effect: float, discordant: float, alpha: float = 0.05) -> float:
    """Return the power of McNemar's test on `items` pairs (Connor 1987, both tails)."""
    size = _check_effect(effect, discordant)
    z = scipy_stats.norm.ppf(1 - alpha / 2)
    spread = math.sqrt(max(discordant - size * size, 1e-15))
    shift = size * math.sqrt(items)
    upper = scipy_stats.norm.cdf((shift - z * math.sqrt(discordant)) / spread)
    lower = scipy_stats.norm.cdf((-shift - z * math.sqrt(discordant)) / spread)
    return float(upper + lower)


def items_needed(
    effect: float, discordant: float, power: float = 0.8, alpha: float = 0.05
) -> float:
    """Return Connor's number of pairs (not rounded) to detect `effect` at `power`."""
    _check(discordant, power, alpha)
    size = _check_effect(effect, discordant)
    z_alpha = scipy_stats.norm.ppf(1 - alpha / 2)
    z_power = scipy_stats.norm.ppf(power)
    root = z_alpha * math.sqrt(discordant) + z_power * math.sqrt(discordant - size * size)
    return float(root * root / (size * size))


def detectable_effect(
    items: int, discordant: float, power: float = 0.8, alpha: float = 0.05
) -> float:
    """Return the smallest difference in accuracy `items` pairs detect at `power`.

    nan when no difference up to the discordant rate reaches the power (a
    difference cannot exceed the share of discordant pairs).
    """
    _check(discordant, power, alpha)
    if items < 1 or not math.isfinite(discordant):
        return float("nan")
    if mcnemar_power(items, discordant, discordant, alpha) < power:
        return float("nan")

    def gap(size: float) -> float:
        return mcnemar_power(items, size, discordant, alpha) - power

    return float(optimize.brentq(gap, 1e-9, discordant, xtol=1e-10))


def simulated_power(
    items: int,
    effect: float,
    discordant: float,
    alpha: float = 0.05,
    simulations: int = DEFAULT_SIMULATIONS,
    seed: int = 0,
    exact: bool = False,
) -> float:
    """Return the share of simulated sets of `items` pairs where McNemar's test rejects.

    Each set draws its discordant counts from the multinomial of the stated
    rates: (ψ + δ)/2 of pairs right only in the first condition, (ψ − δ)/2
    right only in the second. Distinct (b, c) count pairs are tested once
    each with statsmodels' `mcnemar`.
    """
    from statsmodels.stats.contingency_tables import mcnemar

    size = _check_effect(effect, discordant)
    rng = np.random.default_rng(seed)
    shares = [(discordant + size) / 2, (discordant - size) / 2, 1 - discordant]
    counts = rng.multinomial(items, shares, size=simulations)[:, :2]
    pairs, index = np.unique(counts, axis=0, return_inverse=True)
    rejects = np.zeros(len(pairs), dtype=bool)
    for number, (first, second) in enumerate(pairs):
        if first + second == 0:
            continue  # no discordant pair: the test cannot reject
        table = [[0, int(first)], [int(second), 0]]
        result = mcnemar(table, exact=exact, correction=False)
        rejects[number] = bool(result.pvalue < alpha)
    return float(rejects[np.ravel(index)].mean())


def plan(
    effect: float | None = None,
    discordant: float = 0.30,
    power: float = 0.80,
    alpha: float = 0.05,
    items: int | None = None,
    simulations: int = DEFAULT_SIMULATIONS,
    seed: int = 0,
) -> Plan:
    """Return the items a paired contrast needs for `effect`, or the effect `items` can detect.

    Give `effect` (a difference in accuracy, 0.10 for 10 points) or `items`.
    The answer is checked by simulation (`simulations` sets; 0 skips it).
    """
    _check(discordant, power, alpha)
    if (effect is None) == (items is None):
        raise ValueError(
            "give either effect (to get the items needed) or items (to get the effect)"
        )
    if effect is not None:
        exact_items = items_needed(effect, discordant, power, alpha)
        count, size, solved = math.ceil(exact_items - 1e-9), abs(effect), "items"
    else:
        assert items is not None
        count, solved = int(items), "effect"
        size = detectable_effect(count, discordant, power, alpha)
        exact_items = float(count)
    nan = float("nan")
    simulated = simulated_exact = nan
    if simulations > 0 and math.isfinite(size):
        simulated = simulated_power(count, size, discordant, alpha, simulations, seed)
        simulated_exact = simulated_power(count, size, discordant, alpha, simulations, seed, True)
    return Plan(size, discordant, power, alpha, count, exact_items, solved, simulated,
                simulated_exact, simulations if math.isfinite(size) else 0)  # fmt: skip


def discordance(first: Mapping[str, bool], second: Mapping[str, bool]) -> Discordance:
    """Return the share of discordant pairs between two conditions on their common items."""
    common = sorted(set(first) & set(second))
    only_first = sum(1 for item in common if first[item] and not second[item])
    only_second = sum(1 for item in common if second[item] and not first[item])
    rate = (only_first + only_second) / len(common) if common else float("nan")
    return Discordance(rate, len(common), only_first, only_second)


def outcomes_from_records(records: Iterable[Mapping[str, Any]]) -> dict[str, bool]:
    """Return item → correct from scored rows (`id` or `item_id`; `if_right` or `correct`).

    This reads published response files (MMMU-Pro's carry `if_right`) and
    `itemshot score --json`-style rows; the first row of an item counts.
    """
    outcomes: dict[str, bool] = {}
    for number, record in enumerate(records, start=1):
        item = record.get("item_id", record.get("id"))
        verdict = record.get("correct", record.get("if_right"))
        if item is None or verdict is None:
            raise ValueError(f"row {number}: needs an id (id or item_id) and if_right or correct")
        outcomes.setdefault(str(item), bool(verdict))
    return outcomes


@dataclass(frozen=True)
class ContrastPlan:
    """The items one contrast of a design needs, and what the items at hand can detect.

    `items` is None when the contrast cannot be planned: its discordant rate is
    0 or below the effect (no pair of the pilot disagreed enough).
    `items_family` is the count at α divided by the number of contrasts (the
    strictest step of Holm's procedure), so the contrast keeps its power after
    the family-wise adjustment the report applies. `detectable` is the
    smallest effect `available` items detect at the planned power and α
    (nan when no items are at hand or no effect up to the discordant rate is
    detectable).
    """

    contrast: str
    factor: str
    level: str
    reference: str
    discordant: float
    source: str
    items: int | None
    items_family: int | None
    available: int
    detectable: float


def design_contrasts(
    factors: Iterable[tuple[str, Iterable[Any]]], reference: Mapping[str, Any]
) -> list[tuple[str, str, str]]:
    """Return (factor, level, reference) for every level compared with its factor's reference."""
    return [
        (name, str(level), str(reference[name]))
        for name, levels in factors
        if name in reference
        for level in levels
        if str(level) != str(reference[name])
    ]


def plan_contrasts(
    contrasts: Iterable[tuple[str, str, str]],
    rates: Mapping[str, tuple[float, str]],
    effect: float,
    power: float = 0.8,
    alpha: float = 0.05,
    available: int = 0,
) -> list[ContrastPlan]:
    """Return each contrast's plan from its discordant rate (`rates[factor]` or `rates['*']`).

    A rate is (share of discordant pairs, where it was measured or stated).
    """
    chosen = list(contrasts)
    family_alpha = alpha / max(len(chosen), 1)
    plans = []
    for factor, level, reference in chosen:
        name = f"{factor}: {level} − {reference}"
        found = rates.get(name) or rates.get(factor) or rates.get("*")
        if found is None:
            raise ValueError(f"the pilot measured no discordant rate for {name}; state one")
        rate, source = found
        needed = strict = None
        detectable = float("nan")
        if rate >= abs(effect) and rate > 0:
            needed = math.ceil(items_needed(effect, rate, power, alpha) - 1e-9)
            strict = math.ceil(items_needed(effect, rate, power, family_alpha) - 1e-9)
        if available and rate > 0:
            detectable = detectable_effect(available, rate, power, alpha)
        plans.append(
            ContrastPlan(name, factor, level, reference, rate, source, needed, strict, available,
                         detectable)
        )  # fmt: skip
    return plans
