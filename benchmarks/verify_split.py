"""The verifier's declared tuning and held-out sets, drawn from the 1,730 MMMU-Pro mix items.

Declared before any tuning: the mix items' ids are sorted, shuffled with
`random.Random(SEED)`, and cut into a held-out set (the first `HELD_OUT`
ids) and a tuning set (the next `TUNING`). Verifier changes are tuned only on
the tuning set; results are reported on the held-out set, which nobody looks
at while tuning.

Listing each false alarm left means looking at held-out images, and what
is looked at can steer the next change. So a second held-out set, `fresh`
(the `FRESH` ids after the tuning set), was declared before the next round of
changes: its figures are the ones no change has seen. The rest of the items
are unused here.

    .venv/bin/python benchmarks/verify_split.py          # prints both sets' sizes and first ids
"""

from __future__ import annotations

import json
import random
from pathlib import Path

MIX = (
    Path(__file__).resolve().parent.parent
    / "tests"
    / "data"
    / "mmmu-pro"
    / "mix"
    / "mix_data.jsonl"
)
SEED = 20261203
HELD_OUT = 400
TUNING = 200
FRESH = 400


def _shuffled_ids() -> list[str]:
    """Return every mix item's id in the split's seeded order."""
    with MIX.open(encoding="utf-8") as lines:
        ids = sorted(json.loads(line)["id"] for line in lines if line.strip())
    random.Random(SEED).shuffle(ids)
    return ids


def held_out_ids() -> list[str]:
    """Return the held-out item ids (reported on, never tuned on)."""
    return _shuffled_ids()[:HELD_OUT]


def tuning_ids() -> list[str]:
    """Return the tuning item ids (the only items a verifier change may be tuned on)."""
    return _shuffled_ids()[HELD_OUT : HELD_OUT + TUNING]


def fresh_ids() -> list[str]:
    """Return the second held-out set's ids, declared after the first had been looked at."""
    start = HELD_OUT + TUNING
    return _shuffled_ids()[start : start + FRESH]


if __name__ == "__main__":
    held_out, tuning, fresh = held_out_ids(), tuning_ids(), fresh_ids()
    assert not set(held_out) & set(tuning) and not set(fresh) & (set(held_out) | set(tuning))
    print(f"seed {SEED}: held-out {len(held_out)} ({', '.join(held_out[:3])}, ...)")
    print(f"seed {SEED}: tuning {len(tuning)} ({', '.join(tuning[:3])}, ...)")
    print(f"seed {SEED}: fresh {len(fresh)} ({', '.join(fresh[:3])}, ...)")
