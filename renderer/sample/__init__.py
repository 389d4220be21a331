"""The embedded sample dataset: 12 items, English and Japanese, with their figures."""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def sample_jsonl() -> Path:
    """Return the path of the sample's JSONL file (its figures lie beside it)."""
    return Path(str(resources.files(__package__) / "sample.jsonl"))
