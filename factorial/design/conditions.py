"""Expand a design into cells: (item, condition) pairs, one per level combination asked for."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from itemshot.factorial.design.assignment import Unit, balanced_levels, latin_square_levels
from itemshot.factorial.design.design import Design
from itemshot.factorial.design.option_sets import option_set
from itemshot.renderer.items import Item


@dataclass(frozen=True)
class Cell:
    """One item under one condition; `group` is the latin-square list it belongs to."""

    item: Item
    condition: dict[str, Any]
    group: int | None = None


def all_conditions(design: Design) -> list[dict[str, Any]]:
    """Return the Cartesian product of the factor levels, in design order."""
    names = design.factor_names
    return [
        dict(zip(names, combo, strict=True))
        for combo in itertools.product(*dict(design.factors).values())
    ]


def one_at_a_time_conditions(design: Design) -> list[dict[str, Any]]:
    """Return the reference condition, then each other level of each factor around it."""
    reference = dict(design.reference)
    conditions = [reference]
    for name, levels in design.factors:
        for level in levels:
            if level != reference[name]:
                conditions.append({**reference, name: level})
    return conditions


def units(items: Sequence[Item], letters: Mapping[str, str] | None = None) -> list[Unit]:
    """Return the assignment units (subject and answer-letter strata) of items."""
    letters = letters or {}
    return [Unit(item.id, item.subject, letters.get(item.id, item.answer_letter)) for item in items]


def _balanced(design: Design, items: Sequence[Item]) -> list[Cell]:
    """Give each item one level per factor; `n_options` first, so that the other
    factors can be balanced against the answer letter each item actually shows."""
    chosen: dict[str, dict[str, Any]] = {}
    option_levels = design.levels("n_options")
    picks = balanced_levels(units(items), len(option_levels), design.seed, "factor:n_options")
    chosen["n_options"] = {item.id: option_levels[picks[item.id]] for item in items}
    shown = {
        item.id: option_set(item, chosen["n_options"][item.id], design.seed).answer_letter
        for item in items
    }
    for name, levels in design.factors:
        if name == "n_options":
            continue
        picks = balanced_levels(units(items, shown), len(levels), design.seed, f"factor:{name}")
        chosen[name] = {item.id: levels[picks[item.id]] for item in items}
    return [
        Cell(item, {name: chosen[name][item.id] for name in design.factor_names}) for item in items
    ]


def expand(design: Design, items: Sequence[Item]) -> list[Cell]:
    """Return the cells of a design over `items`, item by item in file order."""
    if design.type == "full":
        conditions = all_conditions(design)
        return [Cell(item, dict(c)) for item in items for c in conditions]
    if design.type == "one_at_a_time":
        conditions = one_at_a_time_conditions(design)
        return [Cell(item, dict(c)) for item in items for c in conditions]
    if design.type == "balanced":
        return _balanced(design, items)
    conditions = all_conditions(design)
    k = len(conditions)
    base = balanced_levels(units(items), k, design.seed, "latin_square")
    groups = design.groups if design.groups is not None else tuple(range(k))
    return [
        Cell(item, dict(conditions[latin_square_levels(base[item.id], g, k)]), g)
        for item in items
        for g in groups
    ]
