"""Balance report of a design's cells: counts per level × subject, and orthogonality checks.

Checks (for `balanced` and `latin_square` designs):

* within every subject, the counts of a factor's levels differ by at most one
  (for latin squares: of the conditions, within each group);
* a chi-square test of independence between the factor and the subject, and
  between the factor and the answer letter shown, finds no dependence
  (p ≥ 0.05). `n_options` is not tested against the answer letter: the
  letters a set can have depend on its size by construction.
* latin squares: every item sees every condition exactly once across groups.

`full` and `one_at_a_time` designs are balanced by construction; their check
is that every item has the same cells.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scipy.stats import chi2_contingency

from itemshot.factorial.design.conditions import Cell
from itemshot.factorial.design.option_sets import option_set

ALPHA = 0.05


@dataclass(frozen=True)
class FactorBalance:
    """One factor's (or the combined condition's) counts and checks."""

    factor: str
    counts: Mapping[str, Mapping[str, int]]
    max_spread_within_subject: int
    p_subject: float | None
    p_letter: float | None
    passed: bool


@dataclass(frozen=True)
class BalanceReport:
    """The balance of a design over its items; `passed` when every check holds."""

    design_type: str
    factors: tuple[FactorBalance, ...]
    notes: tuple[str, ...]
    passed: bool

    def as_dict(self) -> dict[str, Any]:
        """Return the report as a JSON-ready dict."""
        return {
            "design_type": self.design_type,
            "passed": self.passed,
            "notes": list(self.notes),
            "factors": [
                {
                    "factor": f.factor,
                    "passed": f.passed,
                    "max_spread_within_subject": f.max_spread_within_subject,
                    "p_subject": f.p_subject,
                    "p_letter": f.p_letter,
                    "counts": {level: dict(c) for level, c in f.counts.items()},
                }
                for f in self.factors
            ],
        }


def _label(value: Any) -> str:
    if isinstance(value, dict):
        return ",".join(f"{k}={v}" for k, v in value.items())
    return value if isinstance(value, str) else str(value)


def _p_value(pairs: Sequence[tuple[str, str]]) -> float | None:
    """Return the chi-square p-value of independence of the pairs' two sides (None if trivial)."""
    rows = sorted({a for a, _ in pairs})
    columns = sorted({b for _, b in pairs})
    if len(rows) < 2 or len(columns) < 2:
        return None
    counts = Counter(pairs)
    table = [[counts[(r, c)] for c in columns] for r in rows]
    return float(chi2_contingency(table).pvalue)


def _factor_balance(
    name: str, levels: Sequence[str], records: Sequence[tuple[str, str, str]], test_letter: bool
) -> FactorBalance:
    """Check one factor; records are (level, subject, answer letter)."""
    counts: dict[str, Counter[str]] = {level: Counter() for level in levels}
    by_subject: dict[str, Counter[str]] = defaultdict(Counter)
    for level, subject, _ in records:
        counts[level][subject] += 1
        by_subject[subject][level] += 1
    spread = (
        max(
            (max(c[level] for level in levels) - min(c[level] for level in levels))
            for c in by_subject.values()
        )
        if by_subject
        else 0
    )
    p_subject = _p_value([(level, subject) for level, subject, _ in records])
    p_letter = _p_value([(level, letter) for level, _, letter in records]) if test_letter else None
    passed = spread <= 1 and all(p is None or p >= ALPHA for p in (p_subject, p_letter))
    return FactorBalance(name, counts, spread, p_subject, p_letter, passed)


def _letter(cell: Cell, seed: int) -> str:
    return option_set(cell.item, cell.condition["n_options"], seed).answer_letter


def balance_report(
    design_type: str, factors: Sequence[tuple[str, Sequence[Any]]], cells: Sequence[Cell], seed: int
) -> BalanceReport:
    """Return the balance report of a design's cells."""
    notes: list[str] = []
    letters = [_letter(cell, seed) for cell in cells]
    results: list[FactorBalance] = []
    if design_type in ("full", "one_at_a_time"):
        per_item = Counter(cell.item.id for cell in cells)
        complete = len(set(per_item.values())) <= 1
        notes.append(
            f"{'every' if complete else 'NOT every'} item has the same {max(per_item.values(), default=0)} cells"
        )
        for name, levels in factors:
            records = [
                (_label(c.condition[name]), c.item.subject, letter)
                for c, letter in zip(cells, letters, strict=True)
            ]
            counts = _factor_balance(name, [_label(v) for v in levels], records, False)
            results.append(
                FactorBalance(
                    name, counts.counts, counts.max_spread_within_subject, None, None, complete
                )
            )
        return BalanceReport(design_type, tuple(results), tuple(notes), complete)
    if design_type == "balanced":
        for name, levels in factors:
            if len(levels) < 2:
                continue
            records = [
                (_label(c.condition[name]), c.item.subject, letter)
                for c, letter in zip(cells, letters, strict=True)
            ]
            results.append(
                _factor_balance(name, [_label(v) for v in levels], records, name != "n_options")
            )
        notes.append("n_options is not tested against the answer letter (set sizes differ)")
        return BalanceReport(
            design_type, tuple(results), tuple(notes), all(r.passed for r in results)
        )
    return _latin_report(factors, cells, letters)


def _latin_report(
    factors: Sequence[tuple[str, Sequence[Any]]], cells: Sequence[Cell], letters: Sequence[str]
) -> BalanceReport:
    notes: list[str] = []
    varies_options = len(dict(factors).get("n_options", ())) > 1
    labels = [_label(cell.condition) for cell in cells]
    conditions = sorted(set(labels))
    by_group: dict[int, list[tuple[str, str, str]]] = defaultdict(list)
    seen: dict[str, Counter[str]] = defaultdict(Counter)
    for cell, label, letter in zip(cells, labels, letters, strict=True):
        if cell.group is not None:
            by_group[cell.group].append((label, cell.item.subject, letter))
        seen[cell.item.id][label] += 1
    results = [
        _factor_balance(f"group {group}", conditions, records, not varies_options)
        for group, records in sorted(by_group.items())
    ]
    complete = all(len(c) == len(conditions) and max(c.values()) == 1 for c in seen.values())
    if len(by_group) == len(conditions):
        notes.append(
            f"{'every' if complete else 'NOT every'} item sees every condition exactly once"
        )
    else:
        complete = True
        notes.append(f"{len(by_group)} of {len(conditions)} groups generated")
    if varies_options:
        notes.append("conditions include n_options: not tested against the answer letter")
    passed = complete and all(r.passed for r in results)
    return BalanceReport("latin_square", tuple(results), tuple(notes), passed)
