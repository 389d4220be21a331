"""Cost ledger of the generative backend: a price table, dry-run estimates, actual spend.

The default prices are PUBLISHED LIST PRICES as reported by third parties for
Nano Banana Pro (not verified from Google, and they change): USD 0.134 per
output image at 1K or 2K, USD 0.24 at 4K, USD 2.00 per million input tokens,
half of everything in batch mode (`batch_factor` 0.5, also a published figure,
not verified). Pass your own table as JSON (`PriceTable.from_json`) when your
contract or the list price differs.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from itemshot.renderer.backends.nanobanana.client import Outcome

# Published list prices (third-party figures, USD), used when no table is given.
DEFAULT_IMAGE_PRICES = {"1K": 0.134, "2K": 0.134, "4K": 0.24}
DEFAULT_INPUT_PER_MILLION = 2.00
DEFAULT_BATCH_FACTOR = 0.5


@dataclass(frozen=True)
class PriceTable:
    """USD per output image by size, per million input tokens, and the batch discount."""

    image: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_IMAGE_PRICES))
    input_per_million: float = DEFAULT_INPUT_PER_MILLION
    batch_factor: float = DEFAULT_BATCH_FACTOR
    source: str = (
        "published list prices and batch discount (third-party figures, not verified from Google)"
    )

    @classmethod
    def from_json(cls, path: Path) -> PriceTable:
        """Return a price table read from a JSON file with any of the fields above."""
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        base = cls()
        return cls(
            image={**base.image, **{str(k): float(v) for k, v in data.get("image", {}).items()}},
            input_per_million=float(data.get("input_per_million", base.input_per_million)),
            batch_factor=float(data.get("batch_factor", base.batch_factor)),
            source=str(data.get("source", f"price table {Path(path).name}")),
        )

    def image_price(self, size: str, batch: bool = False) -> float:
        """Return the price of one output image of a size."""
        return self.image[size] * (self.batch_factor if batch else 1.0)

    def input_price(self, tokens: int, batch: bool = False) -> float:
        """Return the price of input tokens."""
        return tokens / 1e6 * self.input_per_million * (self.batch_factor if batch else 1.0)


@dataclass(frozen=True)
class Estimate:
    """A dry-run estimate: calls and cost at one attempt per job, and at most attempts."""

    jobs: int
    calls: int
    max_calls: int
    images_by_size: dict[str, int]
    cost: float
    max_cost: float
    prices: str

    batch_factor: float | None = None  # set in batch mode: the share of list price paid

    def line(self) -> str:
        """Return the estimate as one printable line."""
        sizes = ", ".join(f"{n}×{s}" for s, n in sorted(self.images_by_size.items()))
        mode = ""
        if self.batch_factor is not None:
            mode = f" at batch prices ({self.batch_factor:g} × list price)"
        return (
            f"dry run: {self.jobs} jobs → {self.calls} model calls ({sizes}), estimated "
            f"${self.cost:.2f}{mode}; at most {self.max_calls} calls / ${self.max_cost:.2f} if "
            f"every attempt is regenerated; prices: {self.prices}; no request was made"
        )


def estimate(sizes: list[str], attempts: int, prices: PriceTable, batch: bool = False) -> Estimate:
    """Return the estimate for jobs of the given image sizes (one entry per job)."""
    by_size = Counter(sizes)
    cost = sum(prices.image_price(s, batch) * n for s, n in by_size.items())
    return Estimate(
        jobs=len(sizes),
        calls=len(sizes),
        max_calls=len(sizes) * attempts,
        images_by_size=dict(by_size),
        cost=round(cost, 4),
        max_cost=round(cost * attempts, 4),
        prices=prices.source,
        batch_factor=prices.batch_factor if batch else None,
    )


@dataclass
class ItemCost:
    """The spend of one job: requests, images by size, tokens, cost."""

    item_id: str
    job_key: str
    http_requests: int = 0
    answers: int = 0
    cached_answers: int = 0
    images: Counter[str] = field(default_factory=Counter)
    prompt_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """Return the record as a JSON-ready dict."""
        data = asdict(self)
        data["images"] = dict(self.images)
        data["cost"] = round(self.cost, 6)
        return data


class Ledger:
    """Actual calls, images, tokens and cost per job and in total."""

    def __init__(self, prices: PriceTable, batch: bool = False) -> None:
        self.prices = prices
        self.batch = batch
        self.items: dict[str, ItemCost] = {}
        self.batches: list[dict[str, Any]] = []

    def add_batch(self, record: dict[str, Any]) -> None:
        """Record one batch job; its HTTP requests (create, polls) are shared by its jobs."""
        self.batches.append(dict(record))

    def add(self, item_id: str, job_key: str, size: str, outcome: Outcome) -> None:
        """Record one attempt's outcome (a cached answer costs nothing)."""
        entry = self.items.setdefault(job_key, ItemCost(item_id, job_key))
        entry.http_requests += outcome.requests
        if outcome.cached:
            entry.cached_answers += 1
            return
        if outcome.kind == "error":
            return
        entry.answers += 1
        prompt = int(outcome.usage.get("prompt_token_count", 0))
        entry.prompt_tokens += prompt
        entry.output_tokens += int(outcome.usage.get("candidates_token_count", 0))
        entry.cost += self.prices.input_price(prompt, self.batch)
        # An image the decoder refused was still made, and billed.
        made = (1 if outcome.kind == "image" else 0) + outcome.refused_images
        if made:
            entry.images[size] += made
            entry.cost += self.prices.image_price(size, self.batch) * made

    def totals(self) -> dict[str, Any]:
        """Return the totals over all jobs."""
        images: Counter[str] = Counter()
        for entry in self.items.values():
            images.update(entry.images)
        shared = sum(int(b.get("http_requests", 0)) for b in self.batches)
        return {
            "jobs": len(self.items),
            "http_requests": sum(e.http_requests for e in self.items.values()) + shared,
            "batches": len(self.batches),
            "answers": sum(e.answers for e in self.items.values()),
            "cached_answers": sum(e.cached_answers for e in self.items.values()),
            "images_by_size": dict(images),
            "prompt_tokens": sum(e.prompt_tokens for e in self.items.values()),
            "output_tokens": sum(e.output_tokens for e in self.items.values()),
            "cost": round(sum(e.cost for e in self.items.values()), 6),
        }

    def as_dict(self) -> dict[str, Any]:
        """Return the ledger (prices, totals, per job) as a JSON-ready dict."""
        return {
            "currency": "USD",
            "prices": asdict(self.prices),
            "batch": self.batch,
            "total": self.totals(),
            "jobs": [e.as_dict() for e in self.items.values()],
            "batches": self.batches,
        }
