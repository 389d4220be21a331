"""The Nano Banana backend: one generation attempt of a job, as a `Backend`.

Each attempt builds a request from the job's Presentation (its sampling seed
derived from the job seed and the attempt number, its prompt adjusted by the
attempt's adjustments), asks the image model — online through the client's
limits, retries and cache, or a whole round at once in one Batch API job —
and records the outcome in the cost ledger. An image comes back as
`Rendered` without a layout record; a refusal, a missing image or a service
error as `RenderFailure` whose `record` keeps the request and the outcome.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from itemshot.renderer.backends.base import FIRST_ATTEMPT, Attempt, Rendered, RenderFailure
from itemshot.renderer.backends.nanobanana.batch import BatchClient, BatchSettings
from itemshot.renderer.backends.nanobanana.client import ImageClient, Outcome
from itemshot.renderer.backends.nanobanana.cost import Ledger
from itemshot.renderer.backends.nanobanana.prompt import GenRequest, build_request
from itemshot.renderer.jobs import Job
from itemshot.renderer.seeds import derive_seed

# One attempt of a round: the job, which attempt, and the exact page to restyle (or None).
RoundEntry = tuple[Job, Attempt, bytes | None]


class NanobananaBackend:
    """The Gemini image model drawing each job's scene from its Presentation."""

    name = "nanobanana"

    def __init__(
        self, client: ImageClient, ledger: Ledger, batch: BatchSettings | None = None
    ) -> None:
        self.client = client
        self.ledger = ledger
        self.batches = BatchClient(client, batch) if batch is not None else None
        self.slots = max(1, client.settings.concurrency)

    async def __aenter__(self) -> NanobananaBackend:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    def request(self, job: Job, attempt: Attempt, page: bytes | None = None) -> GenRequest:
        """Return the request of one attempt (restyle `page` when given, else draw from scratch)."""
        return build_request(
            job.item,
            job.presentation,
            model=self.client.settings.model,
            seed=derive_seed(job.seed, "nanobanana", attempt.number),
            mode="generate" if page is None else "restyle",
            adjustments=attempt.adjustments,
            base_png=page,
        )

    async def render(self, job: Job, attempt: Attempt = FIRST_ATTEMPT) -> Rendered:
        """Draw one job's image; raise RenderFailure on a refusal, no image or an error."""
        return await self.draw(job, attempt)

    async def draw(self, job: Job, attempt: Attempt, page: bytes | None = None) -> Rendered:
        """Run one attempt online (restyling `page` when given)."""
        request = self.request(job, attempt, page)
        outcome = await self.client.generate(request)
        return self._result(job, request, outcome, batched=False)

    async def render_round(
        self, entries: Sequence[tuple[Job, Attempt]]
    ) -> list[Rendered | RenderFailure]:
        """Draw one attempt of every entry in one Batch API job; one result per entry."""
        return await self.draw_round([(job, attempt, None) for job, attempt in entries])

    async def draw_round(self, entries: Sequence[RoundEntry]) -> list[Rendered | RenderFailure]:
        """Run one attempt of every entry (restyling its page when given) in one batch."""
        if self.batches is None:
            raise RuntimeError("draw_round needs batch settings")
        requests = [self.request(job, attempt, page) for job, attempt, page in entries]
        outcomes = await self.batches.generate_all(requests)
        results: list[Rendered | RenderFailure] = []
        for (job, _attempt, _page), request, outcome in zip(
            entries, requests, outcomes, strict=True
        ):
            try:
                results.append(self._result(job, request, outcome, batched=True))
            except RenderFailure as failure:
                results.append(failure)
        return results

    def batch_records(self) -> list[dict[str, Any]]:
        """Return what each batch job of this backend did (empty online)."""
        return [record.as_dict() for record in self.batches.records] if self.batches else []

    def _result(self, job: Job, request: GenRequest, outcome: Outcome, batched: bool) -> Rendered:
        self.ledger.add(job.item.id, job.key, request.image_size, outcome)
        record = {
            "request": request.describe(),
            "request_key": request.key(),
            "outcome": outcome.record(),
        }
        if outcome.kind == "image" and outcome.image is not None:
            return Rendered(outcome.image, None, record)
        # A refusal or a missing image may not recur with a fresh seed. An error was
        # already retried online by the client; in a batch it has had no retry yet.
        retryable = outcome.kind != "error" or (batched and outcome.transient)
        message = outcome.error or f"the model returned no image ({outcome.reason})"
        raise RenderFailure(outcome.kind, message, retryable=retryable, record=record)
