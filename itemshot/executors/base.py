"""What an executor does with one job, and what it hands back to the driver.

An executor turns jobs into `JobResult`s — clean render by the backend, then
the capture simulation — in any order and on any machine. It never writes
the output set: the driver (`itemshot.pipeline`) does, with the same atomic
writes whatever ran the jobs, so an output folder is identical on one
process, several, or a cluster.
"""

from __future__ import annotations

import asyncio
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from itemshot.renderer.backends import Backend, Rendered, RenderFailure
from itemshot.renderer.jobs import Job
from itemshot.renderer.records import Layout
from itemshot.renderer.seeds import derive_seed


@dataclass(frozen=True)
class JobResult:
    """One finished job: the clean render, the final image and its layout, or an error.

    `image` is the final image (the capture when there is one, else the clean
    PNG) with its file `suffix`; `layout` is in final-image pixels; `capture`
    holds every parameter the capture sampled. `error` is the manifest error
    entry of a job that failed (then the other fields are None).
    """

    job: Job
    rendered: Rendered | None = None
    image: bytes | None = None
    suffix: str = ".png"
    layout: Layout | None = None
    capture: Mapping[str, Any] | None = None
    error: Mapping[str, Any] | None = None

    @property
    def ok(self) -> bool:
        """Return whether the job produced an image."""
        return self.error is None


async def produce(backend: Backend, job: Job) -> JobResult:
    """Render one job with `backend` and apply its capture; failures become a result."""
    try:
        rendered = await backend.render(job)
    except RenderFailure as failure:
        return JobResult(job, error=failure.as_error(job.item.id))
    if job.presentation.capture == "none" or rendered.layout is None:
        return JobResult(job, rendered, rendered.image, ".png", rendered.layout)
    from itemshot.degradations import capture_layout

    # Capture is numpy/OpenCV work: run it off the event loop so the backend
    # keeps rendering meanwhile.
    captured, layout = await asyncio.to_thread(
        capture_layout,
        rendered.image,
        rendered.layout,
        job.presentation.capture,
        job.presentation.severity,
        # Seeded by what the item keeps across cells: a design's cells of one item
        # that share a capture preset get the same sampled capture.
        derive_seed(job.item_seed, "capture"),
        job.presentation.deliver_size,
    )
    return JobResult(job, rendered, captured.image, captured.suffix, layout, captured.params)


class Executor(Protocol):
    """Runs jobs and streams their results back to the driver, bounded in memory."""

    startup_seconds: float

    def run(self, jobs: Sequence[Job]) -> Generator[JobResult, None, None]:
        """Yield one result per job, in completion order.

        The driver closes the generator when it stops early (a write failed),
        so an executor stops its workers in a `finally`.
        """
        ...
