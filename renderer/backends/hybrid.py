"""The hybrid backend: Chromium's exact page, re-photographed by the image model.

A composition, not a third backend: a page backend (Chromium) renders the
job's clean page with no capture, and the Nano Banana backend is asked to
restyle that page into the requested scene and capture. The pages are
rendered once per job (`prepare` renders a whole set up front, so they can be
written and reviewed before any model request) and reused for every attempt.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace

from itemshot.renderer.backends.base import FIRST_ATTEMPT, Attempt, Backend, Rendered, RenderFailure
from itemshot.renderer.backends.nanobanana.backend import NanobananaBackend
from itemshot.renderer.jobs import Job, page_job


class HybridBackend:
    """Render the exact page with `pages`, then have `model` restyle it."""

    name = "hybrid"

    def __init__(self, pages: Backend, model: NanobananaBackend) -> None:
        self.pages = pages
        self.model = model
        self.slots = model.slots
        self._pages: dict[str, Rendered | RenderFailure] = {}

    async def __aenter__(self) -> HybridBackend:
        await self.pages.__aenter__()
        await self.model.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.model.__aexit__(*exc)
        await self.pages.__aexit__(*exc)

    async def prepare(self, jobs: Sequence[Job]) -> dict[str, Rendered | RenderFailure]:
        """Render the exact page of every job (at most `pages.slots` at once); return by job key."""
        limit = asyncio.Semaphore(max(1, self.pages.slots))

        async def one(job: Job) -> None:
            async with limit:
                await self.page(job)

        await asyncio.gather(*(one(job) for job in jobs))
        return {job.key: self._pages[job.key] for job in jobs}

    async def page(self, job: Job) -> Rendered:
        """Return the job's exact clean page, rendering it on first use; raise RenderFailure."""
        if job.key not in self._pages:
            try:
                self._pages[job.key] = await self.pages.render(page_job(job, capture="none"))
            except RenderFailure as failure:
                self._pages[job.key] = failure
        found = self._pages[job.key]
        if isinstance(found, RenderFailure):
            raise RenderFailure(
                "base_failed", f"the exact page could not be rendered: {found}", found.field
            )
        return found

    def forget(self, job: Job) -> None:
        """Drop a finished job's page from memory."""
        self._pages.pop(job.key, None)

    async def render(self, job: Job, attempt: Attempt = FIRST_ATTEMPT) -> Rendered:
        """Restyle the job's exact page; the result carries the page as its `base`."""
        page = await self.page(job)
        drawn = await self.model.draw(job, attempt, page.image)
        return replace(drawn, base=page)

    async def render_round(
        self, entries: Sequence[tuple[Job, Attempt]]
    ) -> list[Rendered | RenderFailure]:
        """Restyle one attempt of every entry in one Batch API job (pages rendered first)."""
        pages: list[Rendered | RenderFailure] = []
        for job, _attempt in entries:
            try:
                pages.append(await self.page(job))
            except RenderFailure as failure:
                pages.append(failure)
        ready = [
            (job, attempt, page.image)
            for (job, attempt), page in zip(entries, pages, strict=True)
            if isinstance(page, Rendered)
        ]
        drawn = iter(await self.model.draw_round(ready) if ready else [])
        results: list[Rendered | RenderFailure] = []
        for page in pages:
            if isinstance(page, RenderFailure):
                results.append(page)
                continue
            result = next(drawn)
            results.append(replace(result, base=page) if isinstance(result, Rendered) else result)
        return results
