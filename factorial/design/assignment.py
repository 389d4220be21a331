"""Balanced assignment of levels to items, stratified by subject and answer letter.

Items are grouped into cells of (subject, answer letter). Each cell takes every
level equally often; the few left over go to the levels that are least used so
far within the subject (then within the answer letter, then overall, then by a
seeded order). Adding one to distinct least-used levels never widens a spread
of at most one, so within every subject the level counts differ by at most
one — a guarantee, not a tendency. Which item in a cell gets which level is
seeded.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from itemshot.renderer.seeds import derive_seed


@dataclass(frozen=True)
class Unit:
    """One item as the assignment sees it: id, subject stratum and answer-letter stratum."""

    item_id: str
    subject: str
    letter: str


def balanced_levels(units: Sequence[Unit], k: int, seed: int, salt: str) -> dict[str, int]:
    """Return a level index 0..k-1 per item id, balanced within subject and answer letter."""
    if k < 1:
        raise ValueError("k must be at least 1")
    cells: dict[tuple[str, str], list[Unit]] = defaultdict(list)
    for unit in units:
        cells[(unit.subject, unit.letter)].append(unit)
    by_subject: dict[str, Counter[int]] = defaultdict(Counter)
    by_letter: dict[str, Counter[int]] = defaultdict(Counter)
    overall: Counter[int] = Counter()
    tiebreak = random.Random(derive_seed(seed, salt, "tiebreak"))
    order = list(range(k))
    tiebreak.shuffle(order)
    rank = {level: position for position, level in enumerate(order)}
    chosen: dict[str, int] = {}
    for (subject, letter), members in sorted(cells.items()):
        full, rest = divmod(len(members), k)
        least_used = sorted(
            range(k),
            key=lambda level: (
                by_subject[subject][level],
                by_letter[letter][level],
                overall[level],
                rank[level],
            ),
        )
        levels = [level for level in range(k) for _ in range(full)] + least_used[:rest]
        rng = random.Random(derive_seed(seed, salt, subject, letter))
        rng.shuffle(levels)
        members = sorted(members, key=lambda u: derive_seed(seed, salt, u.item_id))
        for unit, level in zip(members, levels, strict=True):
            chosen[unit.item_id] = level
            by_subject[subject][level] += 1
            by_letter[letter][level] += 1
            overall[level] += 1
    return chosen


def latin_square_levels(base: int, group: int, k: int) -> int:
    """Return the condition an item with base index `base` sees in counterbalanced `group`."""
    return (base + group) % k
