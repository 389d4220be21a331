"""The verifier's declared tuning and held-out sets, drawn from the 1,730 MMMU-Pro mix items.

Declared before any tuning: the mix items' ids are sorted, shuffled with
`random.Random(SEED)`, and cut into a held-out set (the first `HELD_OUT`
ids) and a tuning set (the next `TUNING`). Verifier changes are tuned only on
the tuning set; results are reported on the held-out set, which nobody looks
at while tuning.

Listing each false alarm left means looking at held-out images, and what
is looked at can steer the next change. So a second held-out set, `fresh`
(the `FRESH` ids after the tuning set), was declared before the next round of
changes. Its false alarms and misses were then looked at too (one fix came
from them), so a third, `last` (the `LAST` ids after `fresh`), was declared
before the round after that. `last`'s misses and false alarms were looked at
in turn (a fix came from its negation miss), so a fourth, `final` (every id
after `last`), was declared once that round's changes were made, before any
of its images was rendered: the figures to report are `final`'s. Once
measured, every region-mode rejection on `final` was looked at too; no id
of the mix is left unseen, so the next round of changes needs a new source
of held-out items, declared before tuning.

No new items being at hand, the fifth set, `reseeded`, was declared before
the round after that: `RESEEDED` ids drawn by `RESEED` from every mix id
outside the tuning set, rendered with `RESEED` as the job seed (so each gets
another scene, font, capture and edited word than it had). Its images are
unseen; its items are not, so it is weaker evidence than a set of new items.
With it, every other mix id became tuning material: `tuning-wide` (declared
at the same time) is every id outside `reseeded`, rendered with `SEED`.

`reseeded`'s false alarms and misses were looked at in turn (a fix came
from its word miss), so before the round after that a sixth set,
`rerendered`, was declared: the same ids as `reseeded` (the only items
outside every set tuned on), rendered with its job seed from `RERENDERS`, so
each gets yet another scene, font, capture and edited word. Its images are
unseen; its items have been seen twice, which the README states beside its
figures. That round tunes on `tuning` and `tuning-wide` only.

`rerendered`'s false-alarm reasons were read in turn, so before the round
after that a seventh set, `redrawn`, was declared the same way: `reseeded`'s
ids rendered with its own job seed. Its images are unseen; its items
have been seen three times. That round, too, tunes on `tuning` and
`tuning-wide` only.

`redrawn`'s false alarms were looked at in turn, so before the round after
that an eighth set, `recast`, was declared the same way: `reseeded`'s ids
rendered with its own job seed. Its images are unseen; its items
have been seen four times. That round tunes on `tuning` and `tuning-wide`
only.

`recast`'s false alarms were looked at in turn, so before the round after
that a ninth set, `restaged`, was declared the same way: `reseeded`'s ids
rendered with its own job seed. Its images are unseen; its items
have been seen five times. That round tunes on `tuning` and `tuning-wide`
only.

`restaged`'s false alarms and two of its misses were looked at in turn (a
fix came from a swap miss), so before the round after that a tenth set,
`reshot`, was declared the same way: `reseeded`'s ids rendered with its own
job seed from `RERENDERS`. Its images are unseen; its items have been seen
six times. That round tunes on `tuning` and `tuning-wide` only.

`reshot`'s false alarms were looked at in turn, so before the round after
that an eleventh set, `retaken`, was declared the same way: `reseeded`'s ids
rendered with its own job seed from `RERENDERS`. Its images are unseen; its
items have been seen seven times. That round tunes on `tuning`,
`tuning-wide` and `reshot`'s images, which had been looked at.

`retaken`'s false alarms were looked at in turn, so before the round after
that a twelfth set, `reframed`, was declared the same way: `reseeded`'s ids
rendered with its own job seed from `RERENDERS`. Its images are unseen; its
items have been seen eight times. That round tunes on `tuning`,
`tuning-wide` and `retaken`'s images, which had been looked at.

`reframed`'s false alarms and one miss were looked at in turn, so before the
round after that a thirteenth set, `rephrased`, was declared the same way:
`reseeded`'s ids rendered with its own job seed from `RERENDERS`. Its images
are unseen; its items have been seen nine times. That round tunes on
`tuning`, `tuning-wide` and `reframed`'s images, which had been looked at.

`rephrased`'s false alarms and one regression were looked at in turn, so
before the round after that a fourteenth and a fifteenth set, `restated` and
`retold`, were declared together the same way (`reseeded`'s ids, each with
its own job seed from `RERENDERS`). Their figures are reported pooled: 660
clean images and 400 captures, because a face, scene or capture cell of one
330-item set holds 19 to 49 images, where a single false alarm is 2 to 5%
and the per-cell bars (2% and 3%) can only be met by none. Their images are
unseen; their items have been seen ten times. That round tunes on `tuning`,
`tuning-wide` and `rephrased`'s images, which had been looked at.

`restated`'s and `retold`'s false alarms were looked at in turn, so before
the round after that a sixteenth and a seventeenth set, `reworded` and
`rewritten`, were declared together the same way and are reported pooled
for the same reason. Their images are unseen; their items have been seen
twelve times. That round tunes on `tuning`, `tuning-wide` and the images of
`rephrased`, `restated` and `retold`, which had been looked at.

`reworded`'s and `rewritten`'s false alarms were looked at in turn, so before
the round after that an eighteenth and a nineteenth set, `revised` and
`retyped`, were declared together the same way and are reported pooled.
Their images are unseen; their items have been seen fourteen times. That
round tunes on `tuning`, `tuning-wide` and the images of `restated`,
`retold`, `reworded` and `rewritten`, which had been looked at.

`revised`'s and `retyped`'s false alarms were looked at in turn, so before
the round after that a twentieth and a twenty-first set, `restyled` and
`reprinted`, were declared together the same way and are reported pooled.
Their images are unseen; their items have been seen sixteen times. That
round tunes on `tuning`, `tuning-wide` and the images of `restated`,
`retold`, `reworded`, `rewritten`, `revised` and `retyped`, which had been
looked at.

`restyled`'s and `reprinted`'s false alarms were looked at in turn, so before
the round after that a twenty-second and a twenty-third set, `rekeyed` and
`relaid`, were declared together the same way and are reported pooled.
Their images are unseen; their items have been seen eighteen times. That
round tunes on `tuning`, `tuning-wide` and the images of `revised`,
`retyped`, `restyled` and `reprinted`, which had been looked at.

    .venv/bin/python benchmarks/verify_split.py          # prints every set's size and first ids
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
LAST = 400
RESEED = 20261206
RESEEDED = 330
# `reseeded`'s ids rendered again, each set with its own job seed, in the order declared.
RERENDERS = {
    "rerendered": 20261207,
    "redrawn": 20261208,
    "recast": 20261209,
    "restaged": 20261210,
    "reshot": 20261211,
    "retaken": 20261212,
    "reframed": 20261213,
    "rephrased": 20261214,
    "restated": 20261215,
    "retold": 20261216,
    "reworded": 20261217,
    "rewritten": 20261218,
    "revised": 20261219,
    "retyped": 20261220,
    "restyled": 20261221,
    "reprinted": 20261222,
    "rekeyed": 20261223,
    "relaid": 20261224,
}


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


def last_ids() -> list[str]:
    """Return the third held-out set's ids, declared after the second had been looked at."""
    start = HELD_OUT + TUNING + FRESH
    return _shuffled_ids()[start : start + LAST]


def final_ids() -> list[str]:
    """Return the fourth held-out set's ids (the rest), declared after the third was looked at."""
    return _shuffled_ids()[HELD_OUT + TUNING + FRESH + LAST :]


def reseeded_ids() -> list[str]:
    """Return the fifth set's ids: seen items outside the tuning set, drawn by `RESEED`."""
    tuning = set(tuning_ids())
    pool = sorted(i for i in _shuffled_ids() if i not in tuning)
    return random.Random(RESEED).sample(pool, RESEEDED)


def tuning_wide_ids() -> list[str]:
    """Return every mix id outside `reseeded`: what this round may tune on."""
    held = set(reseeded_ids())
    return [i for i in _shuffled_ids() if i not in held]


def job_seed(which: str) -> int:
    """Return the job seed a set is rendered with (each re-rendered set has its own)."""
    seeds = {"reseeded": RESEED, **RERENDERS}
    return seeds.get(which, SEED)


if __name__ == "__main__":
    sets = {
        "held-out": held_out_ids(),
        "tuning": tuning_ids(),
        "fresh": fresh_ids(),
        "last": last_ids(),
        "final": final_ids(),
    }
    every = [item_id for ids in sets.values() for item_id in ids]
    sets["reseeded"] = reseeded_ids()  # seen items, new renders: it overlaps by design
    sets["tuning-wide"] = tuning_wide_ids()
    for name in RERENDERS:  # reseeded's items, rendered again with each set's own seed
        sets[name] = reseeded_ids()
    assert not set(sets["reseeded"]) & set(sets["tuning-wide"]), "tuning overlaps reseeded"
    assert len(every) == len(set(every)), "the declared sets overlap"
    for name, ids in sets.items():
        print(f"seed {job_seed(name)}: {name} {len(ids)} ({', '.join(ids[:3])}, ...)")
