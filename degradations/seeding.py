"""Stable sub-seeds: every random draw derives from the job seed by hashing, never global state."""

from __future__ import annotations

import numpy as np

from itemshot.seeds import seed_hash


def sub_seed(seed: int, *keys: object) -> int:
    """Return a 63-bit seed derived from `seed` and `keys` by a stable hash (BLAKE2b)."""
    return seed_hash("\x1f".join([str(int(seed)), *(str(k) for k in keys)]), "blake2b")


def rng_for(seed: int, *keys: object) -> np.random.Generator:
    """Return a numpy Generator seeded with `sub_seed(seed, *keys)`."""
    return np.random.default_rng(sub_seed(seed, *keys))
