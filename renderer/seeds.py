"""Stable seeds and job keys: hashes of content, never of order, worker or time."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from itemshot.seeds import seed_hash


def canonical_json(value: Any) -> str:
    """Return `value` as JSON with sorted keys and no whitespace (stable across runs)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def stable_hash(*parts: Any) -> str:
    """Return the SHA-256 hex digest of the canonical JSON of `parts`."""
    return hashlib.sha256(canonical_json(list(parts)).encode("utf-8")).hexdigest()


def derive_seed(*parts: Any) -> int:
    """Return a 63-bit seed derived from `parts` (e.g. run seed, item id, condition)."""
    return seed_hash(canonical_json(list(parts)))
