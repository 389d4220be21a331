"""Batch API mode of the generative backend: each round's requests go as one batch job.

A round's requests (every unfinished job's next attempt) are sent as inlined
requests with `client.aio.batches.create(model=…, src=[…])`
(`POST /v1beta/models/{model}:batchGenerateContent`), then the batch is polled
with `batches.get` (`GET /v1beta/batches/{id}`) every `poll_interval` seconds
until it reaches a terminal state. Its inlined responses come back in request
order, each with the metadata of its request (`key`: the request key), by
which they are mapped back to their jobs.

- Answers are cached exactly as in online mode (the same request key), so a
  re-run sends nothing; cached requests are never put in a batch.
- A batch that ends without responses (FAILED, CANCELLED, EXPIRED, or timed
  out here) makes each of its requests a transient error: the next round asks
  again. A per-request error keeps its code (a 400 is not asked again).
- Inline batches are limited in size by the service (20 MB per batch request);
  a round larger than `max_bytes` is split into several batches.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from google.genai import types

from itemshot.renderer.backends.nanobanana.client import (
    ImageClient,
    Outcome,
    config,
    content,
    read_reply,
    scrubbed,
)
from itemshot.renderer.backends.nanobanana.prompt import GenRequest
from itemshot.renderer.backends.nanobanana.settings import BatchSettings

SUCCEEDED = frozenset({"JOB_STATE_SUCCEEDED", "JOB_STATE_PARTIALLY_SUCCEEDED"})
TERMINAL = SUCCEEDED | {"JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_EXPIRED"}


@dataclass(frozen=True)
class BatchRecord:
    """What one batch job did: its name, end state, size, polls and HTTP requests."""

    name: str | None
    state: str
    requests: int
    responses: int
    polls: int
    http_requests: int
    seconds: float
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """Return the record as a JSON-ready dict."""
        return asdict(self)


def _state(job: types.BatchJob) -> str:
    value = job.state
    return str(getattr(value, "value", value) or "JOB_STATE_UNSPECIFIED")


def request_bytes(request: GenRequest) -> int:
    """Return the approximate size of a request inlined in a batch (base64 images + prompt)."""
    images = sum(4 * ((len(part.data) + 2) // 3) for part in request.images)
    return images + len(request.prompt.encode("utf-8")) + 1024


def split(requests: Sequence[GenRequest], max_bytes: int) -> list[list[GenRequest]]:
    """Return the requests in consecutive groups of at most `max_bytes` each (at least one)."""
    groups: list[list[GenRequest]] = []
    size = 0
    for request in requests:
        needed = request_bytes(request)
        if not groups or size + needed > max_bytes:
            groups.append([])
            size = 0
        groups[-1].append(request)
        size += needed
    return groups


class BatchClient:
    """Sends rounds of requests as batch jobs through an `ImageClient`'s SDK client and limits."""

    def __init__(self, client: ImageClient, settings: BatchSettings) -> None:
        self.client = client
        self.settings = settings
        self.records: list[BatchRecord] = []

    async def generate_all(self, requests: Sequence[GenRequest]) -> list[Outcome]:
        """Return one outcome per request: cached ones first, the rest from batch jobs."""
        outcomes: dict[str, Outcome] = {}
        todo: dict[str, GenRequest] = {}
        for request in requests:
            key = request.key()
            hit = self.client.cached(request)
            if hit is not None:
                outcomes[key] = hit
            else:
                todo.setdefault(key, request)  # the same request twice is asked once
        groups = split(list(todo.values()), self.settings.max_bytes)
        for answered in await asyncio.gather(*(self._run(group) for group in groups)):
            outcomes.update(answered)
        for key, request in todo.items():
            outcomes[key] = scrubbed(outcomes[key], self.client.redact)
            self.client.remember(request, outcomes[key])
        return [outcomes[request.key()] for request in requests]

    async def _run(self, group: list[GenRequest]) -> dict[str, Outcome]:
        """Submit one batch, wait for its end, and return its outcomes by request key."""
        started = time.monotonic()
        model = group[0].model
        inlined = [
            types.InlinedRequest(contents=[content(r)], config=config(r), metadata={"key": r.key()})
            for r in group
        ]
        sdk = self.client.sdk.aio.batches
        job, statuses, error = await self.client.call(
            lambda: sdk.create(
                model=model,
                src=inlined,
                config=types.CreateBatchJobConfig(display_name=self.settings.display_name),
            )
        )
        requests_made = len(statuses)
        polls = 0
        if job is None or not job.name:
            code = statuses[-1] if statuses else None
            outcomes = _all_failed(group, None, f"batch not created: {error}", code)
            self._record(None, "NOT_CREATED", group, 0, 0, requests_made, started, error)
            return outcomes
        name = job.name
        while _state(job) not in TERMINAL:
            if time.monotonic() - started > self.settings.timeout:
                _, cancel_statuses, _ = await self.client.call(lambda: sdk.cancel(name=name))
                requests_made += len(cancel_statuses)
                message = f"batch {name} timed out after {self.settings.timeout:.0f} s"
                self._record(name, "TIMED_OUT", group, 0, polls, requests_made, started, message)
                return _all_failed(group, name, message, None)
            # The service's state decides when to stop; the interval only paces the polls.
            await asyncio.sleep(self.settings.poll_interval)
            polled, poll_statuses, error = await self.client.call(lambda: sdk.get(name=name))
            polls += 1
            requests_made += len(poll_statuses)
            if polled is None:
                message = f"batch {name} could not be polled: {error}"
                self._record(name, "POLL_FAILED", group, 0, polls, requests_made, started, message)
                return _all_failed(group, name, message, None)
            job = polled
        state = _state(job)
        responses = job.dest.inlined_responses if job.dest is not None else None
        if state not in SUCCEEDED or not responses:
            detail = job.error.message if job.error is not None else None
            message = f"batch {name} ended {state}" + (f": {detail}" if detail else "")
            self._record(name, state, group, 0, polls, requests_made, started, message)
            return _all_failed(group, name, message, None)
        outcomes = _map_responses(group, responses, name, self.client)
        self._record(name, state, group, len(responses), polls, requests_made, started, None)
        return outcomes

    def _record(
        self,
        name: str | None,
        state: str,
        group: list[GenRequest],
        responses: int,
        polls: int,
        http_requests: int,
        started: float,
        error: str | None,
    ) -> None:
        seconds = round(time.monotonic() - started, 3)
        error = self.client.redact.text(error) if error else error
        self.records.append(
            BatchRecord(name, state, len(group), responses, polls, http_requests, seconds, error)
        )


def _map_responses(
    group: list[GenRequest],
    responses: list[types.InlinedResponse],
    name: str,
    client: ImageClient,
) -> dict[str, Outcome]:
    """Return the outcomes by request key: by each response's metadata key, else by position.

    Each answer is checked like an online one (`read_reply`); an answer of
    the wrong shape is an `invalid` outcome of its own request only.
    """
    keys = [r.key() for r in group]
    outcomes: dict[str, Outcome] = {}
    for position, answer in enumerate(responses):
        metadata = answer.metadata if isinstance(answer.metadata, dict) else {}
        key = metadata.get("key")
        if key is None and position < len(keys):
            key = keys[position]
        if key not in keys:
            continue
        if answer.error is not None:
            code = answer.error.code if isinstance(answer.error.code, int) else None
            detail = client.redact.text(str(answer.error.message or "error"))
            message = f"{code} in batch: {detail}"
            outcomes[key] = Outcome("error", error=message, error_code=code, batch=name)
        elif answer.response is not None:
            checked = read_reply(answer.response, client.redact)
            outcomes[key] = Outcome(**{**vars(checked), "batch": name})
    missing = [r for r in group if r.key() not in outcomes]
    outcomes.update(_all_failed(missing, name, f"batch {name} returned no answer", None))
    return outcomes


def _all_failed(
    group: Sequence[GenRequest], name: str | None, message: str, code: int | None
) -> dict[str, Outcome]:
    return {r.key(): Outcome("error", error=message, error_code=code, batch=name) for r in group}
