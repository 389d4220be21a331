"""`itemshot render --backend nanobanana|hybrid`: generate, audit, regenerate, fall back.

The output set has the Chromium layout: `images/<stem>.png` + `<stem>.json`
sidecar per job and `manifest.jsonl` in plan order, every row with `backend`
(of the image actually kept), `attempts` and `fallback`. A job that never
passes the audit is rendered by the Chromium pipeline with the same
Presentation. `cost.json` holds the ledger of the run.

Python API: `render_generative(requests, out, GenerativeOptions(...))` runs a
set (online, or in batch jobs with `batch=BatchSettings(...)`) and
`estimate_generative` prices it without sending anything; the command line
builds the same options from its flags.
"""

from __future__ import annotations

import asyncio
import dataclasses
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from itemshot.executors.base import JobResult
from itemshot.generative.loop import LoopResult, generate_batched, generate_verified
from itemshot.outputs import (
    ManifestRow,
    bytes_sha256,
    file_sha256,
    manifest_path,
    read_manifest,
    write_manifest,
    write_summary,
)
from itemshot.pipeline import RunSettings, run_jobs
from itemshot.renderer.backends import Rendered, RenderFailure
from itemshot.renderer.backends.chromium import ChromiumBackend
from itemshot.renderer.backends.hybrid import HybridBackend
from itemshot.renderer.backends.nanobanana.backend import NanobananaBackend
from itemshot.renderer.backends.nanobanana.cache import ResponseCache
from itemshot.renderer.backends.nanobanana.client import ImageClient
from itemshot.renderer.backends.nanobanana.cost import Estimate, Ledger, PriceTable, estimate
from itemshot.renderer.backends.nanobanana.prompt import TEMPLATE_VERSION, image_size
from itemshot.renderer.backends.nanobanana.settings import (
    BatchSettings,
    ClientSettings,
    api_key_from_env,
)
from itemshot.renderer.imaging import IMAGE_LIMITS, decode_image
from itemshot.renderer.items import ItemError
from itemshot.renderer.jobs import Job, JobRequest, PlanFailure, page_job, plan
from itemshot.renderer.output import (
    RunInterrupted,
    RunStopped,
    atomic_write,
    atomic_write_json,
    remove_stale_temps,
    write_figure_files,
)
from itemshot.renderer.output_lock import hold_output
from itemshot.renderer.seeds import stable_hash

BACKENDS = ("chromium", "nanobanana", "hybrid")
COST = "cost.json"
HYBRID_BASE = "hybrid_base"
EXIT_OK, EXIT_USAGE, EXIT_SOME_FAILED, EXIT_UNVERIFIED = 0, 2, 3, 4


@dataclass(frozen=True)
class GenerativeOptions:
    """Everything a generative run needs besides its jobs and output folder."""

    backend: str = "nanobanana"  # or "hybrid"
    client: ClientSettings = field(default_factory=ClientSettings)
    attempts: int = 3  # generations per job before the Chromium fallback
    batch: BatchSettings | None = None  # None: online, one request at a time per job
    cache: Path | None = None  # None: OUT/.cache/nanobanana
    prices: PriceTable = field(default_factory=PriceTable)
    workers: int = 2  # Chromium processes for hybrid bases and fallbacks
    verify_fallback: bool = True  # audit the Chromium fallback renders too
    seed: int = 0  # the run seed of the plan

    @property
    def mode(self) -> str:
        """Return "batch" or "online": how requests are sent."""
        return "batch" if self.batch is not None else "online"


@dataclass(frozen=True)
class GenerativeResult:
    """A finished generative run: exit status, summary and manifest rows in plan order."""

    status: int
    summary: dict[str, Any]
    manifest: list[dict[str, Any]]


def generative_job(job: Job, backend: str, model: str) -> Job:
    """Return the job with a key that also names the backend, model and prompt version."""
    key = stable_hash(job.key, backend, model, TEMPLATE_VERSION)
    return dataclasses.replace(job, key=key)


def _finished(out: Path, job: Job) -> ManifestRow | None:
    """Return the row of a job an earlier run finished, with its image's hash as it is now."""
    try:
        record = json.loads((out / job.sidecar_path).read_text(encoding="utf-8"))
        row = ManifestRow.from_json(record.get("manifest") or {})
    except (OSError, ValueError, AttributeError):
        return None
    if record.get("job_key") != job.key or not row.image:
        return None
    try:
        return row.with_image_sha256(file_sha256(out / row.image))
    except OSError:
        return None


def _plan(
    requests: list[JobRequest | ItemError], options: GenerativeOptions
) -> list[Job | PlanFailure]:
    return [
        generative_job(p, options.backend, options.client.model) if isinstance(p, Job) else p
        for p in plan(requests, options.seed)
    ]


def estimate_generative(
    requests: list[JobRequest | ItemError], out: Path, options: GenerativeOptions
) -> Estimate:
    """Return the calls and cost a run would make (jobs already in `out` are free); send nothing."""
    jobs = [p for p in _plan(requests, options) if isinstance(p, Job)]
    sizes = [image_size(j.presentation) for j in jobs if _finished(out, j) is None]
    return estimate(sizes, options.attempts, options.prices, batch=options.mode == "batch")


def render_generative(
    requests: list[JobRequest | ItemError],
    out: Path,
    options: GenerativeOptions,
    *,
    api_key: str | None = None,
    console: Console | None = None,
) -> GenerativeResult:
    """Generate, audit, regenerate and fall back for every request; write the output set.

    The API key comes from the environment unless given (MissingApiKey before
    any work when there is none). Jobs already finished in `out` are kept.
    """
    if options.backend not in BACKENDS[1:]:
        raise ValueError(f"backend must be nanobanana or hybrid, not {options.backend!r}")
    api_key = api_key or api_key_from_env()
    console = console or Console(stderr=True, quiet=True)
    hybrid = options.backend == "hybrid"
    planned = _plan(requests, options)
    jobs = [p for p in planned if isinstance(p, Job)]
    # One run per folder, held from the first write to the last (verification included).
    with hold_output(out, "render"):
        return _generate_into(out, planned, jobs, options, api_key, hybrid, console)


def _generate_into(
    out: Path,
    planned: list[Job | PlanFailure],
    jobs: list[Job],
    options: GenerativeOptions,
    api_key: str,
    hybrid: bool,
    console: Console,
) -> GenerativeResult:
    """Generate, write and verify the jobs not yet finished in `out` (held by the caller)."""
    # Only under the folder's lock: a temp here now is a dead run's, never a live one's.
    remove_stale_temps(out)
    rows: dict[str, ManifestRow] = {}
    todo = []
    for job in jobs:
        done = _finished(out, job)
        if done is None:
            todo.append(job)
        else:
            rows[job.key] = done
    ledger = Ledger(options.prices, batch=options.mode == "batch")
    cache = ResponseCache(options.cache or out / ".cache" / "nanobanana")
    try:
        results, endpoint, requests_made, based = asyncio.run(
            _generate_all(todo, hybrid, options, api_key, cache, ledger, out)
        )
        fallback = [job for job in todo if not results[job.key].passed]
        for job in todo:
            if results[job.key].passed:
                rows[job.key] = _write_generated(
                    out, job, results[job.key], options, endpoint, job.key in based
                )
        if fallback:
            fallback_jobs = [page_job(job) for job in fallback]
            run_jobs(fallback_jobs, out, RunSettings(workers=options.workers))
            for job, chromium in zip(fallback, fallback_jobs, strict=True):
                rows[job.key] = _write_fallback(
                    out, job, chromium, results[job.key], options, endpoint
                )
        manifest = [_planned_row(p, rows) for p in planned]
        write_manifest(out, manifest)
        costs = ledger.as_dict() | {"http_requests_this_run": requests_made}
        atomic_write_json(out / COST, costs)
        summary = _summary(manifest, options, costs)
        write_summary(out, summary)
    except (OSError, RunStopped) as error:
        raise _stopped(error, out, planned, rows) from error
    except KeyboardInterrupt as interrupt:
        # Ctrl-C or SIGTERM: what is finished goes in the manifest, as for a full disk.
        raise _interrupted(interrupt, out, planned, rows) from None
    console.print(json.dumps(summary, ensure_ascii=False))
    status = EXIT_SOME_FAILED if any(r.status != "ok" for r in manifest) else EXIT_OK
    if fallback and options.verify_fallback:
        from itemshot.verify import verify_output_set

        audit = verify_output_set(out, items=[j.item for j in jobs], workers=options.workers)
        console.print(f"fallback renders verified: {audit.passed} passed, {audit.failed} failed")
        if status == EXIT_OK and audit.failed:
            status = EXIT_UNVERIFIED
        manifest = read_manifest(out)  # now with the fallback renders' verdicts
    return GenerativeResult(status, summary, [row.to_json() for row in manifest])


def _planned_row(entry: Job | PlanFailure, rows: Mapping[str, ManifestRow]) -> ManifestRow:
    if isinstance(entry, PlanFailure):
        return ManifestRow.for_plan_failure(entry)
    return rows[entry.key]


def _stopped(
    error: OSError | RunStopped,
    out: Path,
    planned: list[Job | PlanFailure],
    rows: dict[str, ManifestRow],
) -> RunStopped:
    """Return the RunStopped of a generative run: the rows written so far go in its manifest."""
    cause = error.error if isinstance(error, RunStopped) else error
    # Fallback pages the Chromium run wrote before it stopped are not rows here yet.
    fallbacks = error.written if isinstance(error, RunStopped) else 0
    written, manifest = _keep_finished(out, planned, rows)
    return RunStopped(cause, out, written + fallbacks, len(planned), manifest)


def _interrupted(
    interrupt: KeyboardInterrupt,
    out: Path,
    planned: list[Job | PlanFailure],
    rows: dict[str, ManifestRow],
) -> RunInterrupted:
    """Return the RunInterrupted of a generative run: the rows written so far go in its manifest."""
    fallbacks = interrupt.written if isinstance(interrupt, RunInterrupted) else 0
    written, manifest = _keep_finished(out, planned, rows)
    return RunInterrupted(out, written + fallbacks, len(planned), manifest)


def _keep_finished(
    out: Path, planned: list[Job | PlanFailure], rows: dict[str, ManifestRow]
) -> tuple[int, Path | None]:
    """Write the manifest of the rows finished so far; return how many are ok and its path.

    The path is None when even the manifest could not be written.
    """
    done = [row for row in rows.values() if row.status == "ok"]
    kept = [p for p in planned if isinstance(p, PlanFailure) or p.key in rows]
    try:
        write_manifest(out, [_planned_row(p, rows) for p in kept])
    except OSError:
        return len(done), None
    return len(done), manifest_path(out)


class _Ready:
    """An executor over results already made (the pages a hybrid run rendered first)."""

    startup_seconds = 0.0

    def __init__(self, results: dict[str, JobResult]) -> None:
        self.results = results

    def run(self, jobs: list[Job]) -> Any:
        """Yield the stored result of each job."""
        return (self.results[job.key] for job in jobs)


def _write_pages(out: Path, todo: list[Job], pages: dict[str, Rendered | RenderFailure]) -> None:
    """Write the exact pages the model is asked to restyle as an output set of their own."""
    ready: dict[str, JobResult] = {}
    for job in todo:
        page, found = page_job(job, capture="none"), pages[job.key]
        if isinstance(found, Rendered):
            ready[page.key] = JobResult(page, found, found.image, ".png", found.layout)
        else:
            ready[page.key] = JobResult(page, error=found.as_error(job.item.id))
    run_jobs([result.job for result in ready.values()], out / HYBRID_BASE, executor=_Ready(ready))


async def _generate_all(
    todo: list[Job],
    hybrid: bool,
    options: GenerativeOptions,
    api_key: str,
    cache: ResponseCache,
    ledger: Ledger,
    out: Path,
) -> tuple[dict[str, LoopResult], dict[str, str], int, set[str]]:
    client = ImageClient(options.client, api_key, cache)
    try:
        return await _generate_with(client, todo, hybrid, options, ledger, out)
    finally:
        await client.aclose()


async def _generate_with(
    client: ImageClient,
    todo: list[Job],
    hybrid: bool,
    options: GenerativeOptions,
    ledger: Ledger,
    out: Path,
) -> tuple[dict[str, LoopResult], dict[str, str], int, set[str]]:
    model = NanobananaBackend(client, ledger, options.batch)
    audits = asyncio.Semaphore(2)
    results = {job.key: LoopResult((), None, None) for job in todo}
    if not todo:
        return results, client.endpoint, client.http_requests, set()
    backend: NanobananaBackend | HybridBackend = model
    if hybrid:
        browsers = max(1, min(options.workers, len(todo)))
        backend = HybridBackend(ChromiumBackend(browsers, 2), model)
    runnable = todo
    async with backend:
        if isinstance(backend, HybridBackend):
            pages = await backend.prepare(todo)
            _write_pages(out, todo, pages)
            # A hybrid job without its exact page goes straight to the fallback.
            runnable = [job for job in todo if isinstance(pages[job.key], Rendered)]
        if options.batch is not None:
            results |= await generate_batched(
                runnable, backend, attempts=options.attempts, audit_slots=audits
            )
        else:

            async def one(job: Job) -> tuple[str, LoopResult]:
                result = await generate_verified(
                    job, backend, attempts=options.attempts, audit_slots=audits
                )
                return job.key, result

            results |= dict(await asyncio.gather(*(one(job) for job in runnable)))
    for record in model.batch_records():
        ledger.add_batch(record)
    based = {job.key for job in runnable} if hybrid else set()
    return results, client.endpoint, client.http_requests, based


def _generation(result: LoopResult, options: GenerativeOptions, endpoint: dict[str, str]) -> dict:
    return {
        "backend": options.backend,
        "model": result.attempts[0].request["model"] if result.attempts else None,
        "template_version": TEMPLATE_VERSION,
        "endpoint": endpoint,
        "mode": options.mode,
        "attempts": [a.as_dict() for a in result.attempts],
    }


def _write_generated(
    out: Path,
    job: Job,
    result: LoopResult,
    options: GenerativeOptions,
    endpoint: dict[str, str],
    restyled: bool,
) -> dict[str, Any]:
    assert result.image is not None and result.size is not None
    last = result.attempts[-1]
    png = _as_png(result.image)
    row = ManifestRow.generated(
        job,
        backend=options.backend,
        image=job.image_path,
        image_sha256=bytes_sha256(png),
        size=result.size,
        attempts=len(result.attempts),
        model=last.request["model"],
        template_version=TEMPLATE_VERSION,
        passed=True,
        audit=last.verdict,
    )
    fields: dict[str, Any] = {}
    if restyled:
        fields["base_image"] = f"{HYBRID_BASE}/{page_job(job, capture='none').image_path}"
    figure_files = {str(n): p for n, p in write_figure_files(out, job.item).items()}
    row = row.with_fields(**fields, figure_files=figure_files)
    sidecar = {
        "job_key": job.key,
        "manifest": row.to_json(),
        "layout": None,
        "render": _generation(result, options, endpoint),
    }
    atomic_write(out / job.image_path, png)
    atomic_write_json(out / job.sidecar_path, sidecar)
    return row


def _write_fallback(
    out: Path,
    job: Job,
    chromium: Job,
    result: LoopResult,
    options: GenerativeOptions,
    endpoint: dict[str, str],
) -> ManifestRow:
    try:
        record = json.loads((out / chromium.sidecar_path).read_text(encoding="utf-8"))
        row = ManifestRow.from_json(record["manifest"])
    except (OSError, ValueError, KeyError, TypeError):
        row = ManifestRow.for_job(job).with_fields(
            status="failed",
            stage="fallback",
            error={"reason": "fallback_failed", "message": "the Chromium fallback failed"},
        )
    row = row.with_fields(
        job_key=job.key,
        backend="chromium",
        requested_backend=options.backend,
        attempts=len(result.attempts),
        fallback=True,
        fallback_job_key=chromium.key,
        model=result.attempts[0].request["model"] if result.attempts else None,
        template_version=TEMPLATE_VERSION,
    )
    sidecar = {
        "job_key": job.key,
        "manifest": row.to_json(),
        "layout": None,
        "render": _generation(result, options, endpoint)
        | {"fallback": {"backend": "chromium", "sidecar": chromium.sidecar_path}},
    }
    if row.status == "ok":
        atomic_write_json(out / job.sidecar_path, sidecar)
    return row


def _as_png(image: bytes) -> bytes:
    """Return the image as PNG bytes (models may answer JPEG or WebP)."""
    if image[:8] == b"\x89PNG\r\n\x1a\n":
        return image
    with decode_image(image, IMAGE_LIMITS, "the model's image") as opened:
        buffer = io.BytesIO()
        opened.convert("RGB").save(buffer, "PNG")
        return buffer.getvalue()


def _summary(
    manifest: list[ManifestRow], options: GenerativeOptions, costs: dict[str, Any]
) -> dict:
    ok = [r for r in manifest if r.get("status") == "ok"]
    return {
        "backend": options.backend,
        "mode": options.mode,
        "batches": costs["total"]["batches"],
        "jobs": len(manifest),
        "generated": sum(1 for r in ok if not r.get("fallback")),
        "fallback": sum(1 for r in ok if r.get("fallback")),
        "failed": len(manifest) - len(ok),
        "http_requests": costs["http_requests_this_run"],
        "cost_usd": costs["total"]["cost"],
    }
