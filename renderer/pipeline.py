"""Run planned jobs through the Chromium pool and write the output set.

The output folder holds `images/<stem>.png` with a `<stem>.json` sidecar per
job and one `manifest.jsonl` in plan order. A job whose PNG and sidecar
already exist with the same key is skipped, so a killed run resumes.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from degradations import capture_layout
from renderer.chromium import ChromiumPool, RenderFailure
from renderer.jobs import RENDERER_VERSION, Job, PlanFailure
from renderer.output import (
    atomic_write,
    atomic_write_json,
    remove_stale_temps,
    write_figure_files,
    write_jsonl,
)
from renderer.page import build_page
from renderer.seeds import derive_seed

MANIFEST = "manifest.jsonl"
SUMMARY = "summary.json"

Event = dict[str, Any]


@dataclass(frozen=True)
class RunSettings:
    """How to run: browser processes and pages per browser."""

    workers: int = 2
    pages_per_worker: int = 2


@dataclass
class RunSummary:
    """What a run did: counts, failures by reason, throughput."""

    total: int = 0
    rendered: int = 0
    skipped: int = 0
    failed: int = 0
    seconds: float = 0.0
    startup_seconds: float = 0.0  # launching the browsers, part of `seconds`
    failures: Counter[str] = field(default_factory=Counter)
    failed_items: list[dict[str, Any]] = field(default_factory=list)

    @property
    def steady_images_per_second(self) -> float:
        """Return rendered images per second once the browsers are up."""
        busy = self.seconds - self.startup_seconds
        return self.rendered / busy if busy > 0 else 0.0

    @property
    def images_per_second(self) -> float:
        """Return rendered images per second of wall time."""
        return self.rendered / self.seconds if self.seconds > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        """Return the summary as a JSON-ready dict."""
        return {
            "total": self.total,
            "rendered": self.rendered,
            "skipped": self.skipped,
            "failed": self.failed,
            "seconds": round(self.seconds, 3),
            "images_per_second": round(self.images_per_second, 3),
            "failures_by_reason": dict(sorted(self.failures.items())),
            "failed_items": self.failed_items,
        }


def base_row(job: Job) -> dict[str, Any]:
    """Return the manifest fields every row of a job has, rendered or not."""
    item = job.item
    return {
        "item_id": item.id,
        "job_key": job.key,
        "seed": job.seed,
        "condition": dict(job.condition),
        "content": job.content.as_dict(),
        "question": item.question,
        "options": list(item.options),
        "answer": item.answer_letter,
        "n_options": len(item.options),
        "subject": item.subject,
        "language": item.language,
        "presentation": job.presentation.as_dict(),
        "backend": "chromium",
        "image": None,
        "layout": None,
        "status": "pending",
        "error": None,
    }


def failure_row(failure: PlanFailure) -> dict[str, Any]:
    """Return the manifest row of a request that never became a job."""
    return {
        "item_id": failure.item_id,
        "condition": dict(failure.condition),
        "status": "failed",
        "stage": "load",
        "image": None,
        "error": {**failure.error.as_record(), "reason": "invalid_item"},
    }


def _finished_row(out: Path, job: Job) -> dict[str, Any] | None:
    """Return the stored row of a job already done by an earlier run, if it is complete."""
    sidecar = out / job.sidecar_path
    if not sidecar.is_file():
        return None
    try:
        record = json.loads(sidecar.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    row = record.get("manifest") or {}
    images = [row.get("image"), row.get("clean_image")]
    if record.get("job_key") != job.key or not all((out / p).is_file() for p in images if p):
        return None
    return row


async def _render_job(pool: ChromiumPool, out: Path, job: Job) -> dict[str, Any]:
    row = base_row(job)
    try:
        document = build_page(job.item, job.presentation, job.seed, job.content)
        result = await pool.render(document)
    except RenderFailure as failure:
        row.update(
            status="failed",
            stage="render",
            error={
                "item_id": job.item.id,
                "field": failure.field or "page",
                "reason": failure.reason,
                "message": str(failure),
            },
        )
        return row
    layout, image, image_path = result.layout, result.png, job.image_path
    capture_params: dict[str, Any] | None = None
    if job.presentation.capture != "none":
        # Capture is numpy/OpenCV work: run it off the event loop so the
        # browsers keep rendering meanwhile.
        captured, layout = await asyncio.to_thread(
            capture_layout,
            result.png,
            result.layout,
            job.presentation.capture,
            job.presentation.severity,
            derive_seed(job.seed, "capture"),
        )
        image, capture_params = captured.image, captured.params
        image_path = job.image_path.removesuffix(".png") + captured.suffix
        row["clean_image"] = job.clean_path
    row.update(
        status="ok",
        image=image_path,
        layout=job.sidecar_path,
        width=layout.width,
        height=layout.height,
        font_scale=layout.font_scale,
        fonts_requested=list(layout.fonts_requested),
        placeholders=list(document.placeholders),
    )
    sidecar = {
        "job_key": job.key,
        "manifest": row,
        "layout": layout.as_dict(),
        "capture": capture_params,
        "render": {
            "backend": "chromium",
            "browser": result.browser_version,
            "renderer_version": RENDERER_VERSION,
            "decor": document.decor,
            "css_size": [document.css_width, document.css_height],
            "device_scale": document.device_scale,
        },
    }
    # The sources travel with the set, so it can be re-verified without the dataset.
    row["figure_files"] = {str(n): path for n, path in write_figure_files(out, job.item).items()}
    # Images first, sidecar last: the sidecar's presence marks the job complete.
    if capture_params is not None:
        atomic_write(out / job.clean_path, result.png)
    atomic_write(out / image_path, image)
    atomic_write_json(out / job.sidecar_path, sidecar)
    return row


async def _run(
    planned: Sequence[Job | PlanFailure],
    out: Path,
    settings: RunSettings,
    on_event: Callable[[Event], None],
    summary: RunSummary,
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any] | None] = [None] * len(planned)
    todo: list[tuple[int, Job]] = []
    for index, entry in enumerate(planned):
        if isinstance(entry, PlanFailure):
            rows[index] = failure_row(entry)
            on_event({"event": "failed", "item_id": entry.item_id, "row": rows[index]})
            continue
        done = _finished_row(out, entry)
        if done is not None:
            rows[index] = done
            summary.skipped += 1
            on_event({"event": "skipped", "item_id": entry.item.id, "row": done})
        else:
            todo.append((index, entry))
    if todo:
        browsers = max(1, min(settings.workers, len(todo)))
        launched = time.perf_counter()
        async with ChromiumPool(browsers, settings.pages_per_worker) as pool:
            summary.startup_seconds = time.perf_counter() - launched
            limit = asyncio.Semaphore(browsers * settings.pages_per_worker)

            async def one(index: int, job: Job) -> None:
                async with limit:
                    row = await _render_job(pool, out, job)
                rows[index] = row
                if row["status"] == "ok":
                    summary.rendered += 1
                on_event({"event": row["status"], "item_id": job.item.id, "row": row})

            await asyncio.gather(*(one(i, j) for i, j in todo))
    return [r for r in rows if r is not None]


def run_jobs(
    planned: Sequence[Job | PlanFailure],
    out: Path,
    settings: RunSettings | None = None,
    on_event: Callable[[Event], None] | None = None,
) -> RunSummary:
    """Render every job not already done, write manifest and summary, and return the summary."""
    settings = settings or RunSettings()
    out.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(out)
    summary = RunSummary(total=len(planned))
    started = time.perf_counter()
    rows = asyncio.run(_run(planned, out, settings, on_event or (lambda _e: None), summary))
    summary.seconds = time.perf_counter() - started
    for row in rows:
        if row["status"] != "ok":
            summary.failed += 1
            error = row.get("error") or {}
            summary.failures[error.get("reason", "unknown")] += 1
            summary.failed_items.append(
                {
                    "item_id": row["item_id"],
                    "field": error.get("field"),
                    "reason": error.get("reason"),
                    "message": error.get("message"),
                }
            )
    write_jsonl(out / MANIFEST, rows)
    atomic_write_json(out / SUMMARY, summary.as_dict())
    return summary
