"""The run pipeline: planned jobs → executor (backend, capture) → output set on disk.

The output folder holds `images/<stem>.png` with a `<stem>.json` sidecar per
job and one `manifest.jsonl` in plan order. A job whose PNG and sidecar
already exist with the same key is skipped, so a killed run resumes. The
executor may run the jobs anywhere; this module alone writes, so the folder
is the same whatever ran them.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from itemshot.executors.base import Executor, JobResult
from itemshot.outputs import (
    MANIFEST,
    SUMMARY,
    ManifestRow,
    bytes_sha256,
    file_sha256,
    write_manifest,
    write_summary,
)
from itemshot.renderer.jobs import Job, PlanFailure
from itemshot.renderer.measures import final_measures
from itemshot.renderer.output import (
    RunInterrupted,
    RunStopped,
    atomic_write,
    atomic_write_json,
    remove_stale_temps,
    write_figure_files,
)
from itemshot.renderer.output_lock import hold_output

__all__ = [
    "MANIFEST",
    "SUMMARY",
    "RunInterrupted",
    "RunSettings",
    "RunStopped",
    "RunSummary",
    "run_jobs",
    "write_result",
]

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


def write_outcome(out: Path, rows: Sequence[ManifestRow], summary: RunSummary) -> Path | None:
    """Write the manifest and summary; return the manifest path, or None if it could not be written."""
    try:
        path = write_manifest(out, rows)
        write_summary(out, summary.as_dict())
    except OSError:
        return None
    return path


def finished_row(out: Path, job: Job) -> ManifestRow | None:
    """Return the stored row of a job already done by an earlier run, if it is complete.

    Its `image_sha256` is the image's on disk now, so a verdict on other bytes
    is not carried over.
    """
    sidecar = out / job.sidecar_path
    if not sidecar.is_file():
        return None
    try:
        record = json.loads(sidecar.read_text(encoding="utf-8"))
        row = ManifestRow.from_json(record.get("manifest") or {})
    except (OSError, ValueError, AttributeError):
        return None
    images = [row.image, row.clean_image]
    if record.get("job_key") != job.key or not all((out / p).is_file() for p in images if p):
        return None
    try:
        return row.with_image_sha256(file_sha256(out / row.image)) if row.image else row
    except OSError:
        return None


def write_result(out: Path, result: JobResult) -> ManifestRow:
    """Write one finished job (images first, sidecar last) and return its manifest row."""
    job = result.job
    row = ManifestRow.for_job(job)
    if not result.ok or result.rendered is None or result.image is None:
        return row.with_fields(status="failed", stage="render", error=dict(result.error or {}))
    rendered, layout = result.rendered, result.layout
    assert layout is not None
    image_path = job.image_path
    fields: dict[str, Any] = {}
    if result.capture is not None:
        image_path = job.image_path.removesuffix(".png") + result.suffix
        fields["clean_image"] = job.clean_path
    # The sources travel with the set, so it can be re-verified without the dataset.
    figure_files = {str(n): path for n, path in write_figure_files(out, job.item).items()}
    row = row.with_fields(
        **fields,
        status="ok",
        image=image_path,
        image_sha256=bytes_sha256(result.image),
        layout=job.sidecar_path,
        width=layout.width,
        height=layout.height,
        font_scale=layout.font_scale,
        # x-height, figure area, page scale, options and lines, in final pixels.
        measures=final_measures(layout),
        fonts_requested=list(layout.fonts_requested),
        placeholders=list(rendered.record.get("placeholders", ())),
        figure_files=figure_files,
    )
    render_record = {k: v for k, v in rendered.record.items() if k != "placeholders"}
    sidecar = {
        "job_key": job.key,
        "manifest": row.to_json(),
        "layout": layout.as_dict(),
        "capture": dict(result.capture) if result.capture is not None else None,
        "render": render_record,
    }
    # Images first, sidecar last: the sidecar's presence marks the job complete.
    if result.capture is not None:
        atomic_write(out / job.clean_path, rendered.image)
    atomic_write(out / image_path, result.image)
    atomic_write_json(out / job.sidecar_path, sidecar)
    return row


def run_jobs(
    planned: Sequence[Job | PlanFailure],
    out: Path,
    settings: RunSettings | None = None,
    on_event: Callable[[Event], None] | None = None,
    *,
    executor: Executor | None = None,
) -> RunSummary:
    """Render every job not already done, write manifest and summary, and return the summary.

    `executor` runs the jobs (default: a local Chromium pool sized by `settings`).
    The run holds `out` (`FolderBusy` when another run does). A system error
    part-way raises `RunStopped`, an interrupt `RunInterrupted`; either way
    the manifest lists the jobs finished so far.
    """
    with hold_output(out, "render"):
        return _run_jobs(planned, out, settings or RunSettings(), on_event, executor)


def _run_jobs(
    planned: Sequence[Job | PlanFailure],
    out: Path,
    settings: RunSettings,
    on_event: Callable[[Event], None] | None,
    executor: Executor | None,
) -> RunSummary:
    emit = on_event or (lambda _e: None)
    # Only under the folder's lock: a temp here now is a dead run's, never a live one's.
    remove_stale_temps(out)
    summary = RunSummary(total=len(planned))
    started = time.perf_counter()
    rows: list[ManifestRow | None] = [None] * len(planned)
    todo: list[Job] = []
    position: dict[str, int] = {}
    for index, entry in enumerate(planned):
        if isinstance(entry, PlanFailure):
            failed = rows[index] = ManifestRow.for_plan_failure(entry)
            emit({"event": "failed", "item_id": entry.item_id, "row": failed.to_json()})
            continue
        done = finished_row(out, entry)
        if done is not None:
            rows[index] = done
            summary.skipped += 1
            emit({"event": "skipped", "item_id": entry.item.id, "row": done.to_json()})
        else:
            todo.append(entry)
            position[entry.key] = index
    if todo:
        if executor is None:
            from itemshot.executors.local import LocalExecutor, chromium_factory

            browsers = max(1, min(settings.workers, len(todo)))
            executor = LocalExecutor(chromium_factory(browsers, settings.pages_per_worker))
        # Closed on any exit, so the executor stops its workers when a write fails.
        try:
            with closing(executor.run(todo)) as results:
                for result in results:
                    row = write_result(out, result)
                    rows[position[result.job.key]] = row
                    if row.status == "ok":
                        summary.rendered += 1
                    emit({"event": row.status, "item_id": result.job.item.id, "row": row.to_json()})
        except (OSError, KeyboardInterrupt) as ended:
            # A full disk, or Ctrl-C / SIGTERM (the CLI turns it into an interrupt): the
            # executor has been closed; what was written so far goes in the manifest.
            summary.seconds = time.perf_counter() - started
            finished = _count([r for r in rows if r is not None], summary)
            kept = (out, summary.rendered + summary.skipped, summary.total)
            manifest = write_outcome(out, finished, summary)
            if isinstance(ended, OSError):
                raise RunStopped(ended, *kept, manifest) from ended
            raise RunInterrupted(*kept, manifest) from None
        summary.startup_seconds = executor.startup_seconds
    summary.seconds = time.perf_counter() - started
    finished = _count([r for r in rows if r is not None], summary)
    try:
        write_manifest(out, finished)
        write_summary(out, summary.as_dict())
    except OSError as error:
        written = summary.rendered + summary.skipped
        raise RunStopped(error, out, written, summary.total, None) from error
    return summary


def _count(finished: list[ManifestRow], summary: RunSummary) -> list[ManifestRow]:
    """Count the failed rows into the summary; return the rows."""
    for row in finished:
        if row.status != "ok":
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
    return finished
