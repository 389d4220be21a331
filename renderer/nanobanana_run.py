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

import argparse
import asyncio
import dataclasses
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from renderer.items import ItemError
from renderer.jobs import Job, JobRequest, PlanFailure, job_key, plan
from renderer.nanobanana_batch import BatchClient, BatchSettings
from renderer.nanobanana_cache import ResponseCache
from renderer.nanobanana_client import (
    DEFAULT_MODEL,
    ClientSettings,
    ImageClient,
    MissingApiKey,
    api_key_from_env,
)
from renderer.nanobanana_cost import Estimate, Ledger, PriceTable, estimate
from renderer.nanobanana_loop import LoopResult, generate_batched, generate_verified
from renderer.nanobanana_prompt import TEMPLATE_VERSION, image_size
from renderer.output import (
    atomic_write,
    atomic_write_json,
    read_jsonl,
    remove_stale_temps,
    write_figure_files,
    write_jsonl,
)
from renderer.pipeline import MANIFEST, SUMMARY, RunSettings, base_row, failure_row, run_jobs
from renderer.seeds import stable_hash

BACKENDS = ("chromium", "nanobanana", "hybrid")
COST = "cost.json"
HYBRID_BASE = "hybrid_base"
EXIT_OK, EXIT_USAGE, EXIT_SOME_FAILED, EXIT_UNVERIFIED = 0, 2, 3, 4


def add_generative_flags(parser: argparse.ArgumentParser) -> None:
    """Add the backend flags (`--backend`, `--api-base`, `--model`, `--attempts`, …)."""
    group = parser.add_argument_group("generative backends (nanobanana, hybrid)")
    group.add_argument("--backend", choices=BACKENDS, default="chromium", help="image backend")
    group.add_argument(
        "--api-base",
        default=None,
        help="Gemini API base URL (default: GOOGLE_GEMINI_BASE_URL, else the SDK's)",
    )
    group.add_argument("--model", default=DEFAULT_MODEL, help=f"model id (default {DEFAULT_MODEL})")
    group.add_argument(
        "--attempts", type=int, default=3, help="generations per item before the fallback"
    )
    group.add_argument(
        "--dry-run", action="store_true", help="print calls and estimated cost; send nothing"
    )
    group.add_argument("--concurrency", type=int, default=4, help="requests in flight")
    group.add_argument("--rpm", type=float, default=60.0, help="requests per minute (0: no limit)")
    group.add_argument("--max-retries", type=int, default=5, help="retries of 408/429/5xx")
    group.add_argument("--backoff-base", type=float, default=2.0, help="first backoff (s)")
    group.add_argument("--timeout", type=float, default=180.0, help="seconds per request")
    group.add_argument("--cache", type=Path, default=None, help="response cache (OUT/.cache)")
    group.add_argument("--price-table", type=Path, default=None, help="JSON price table")
    group.add_argument(
        "--batch",
        action="store_true",
        help="send each round of requests as one Batch API job (batch prices; slower)",
    )
    group.add_argument(
        "--poll-interval",
        type=float,
        default=BatchSettings.poll_interval,
        help=f"seconds between polls of a batch job (default {BatchSettings.poll_interval:g})",
    )
    group.add_argument(
        "--batch-timeout",
        type=float,
        default=BatchSettings.timeout,
        help="seconds to wait for a batch job before cancelling it (default 48 h)",
    )


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


def chromium_job(job: Job, capture: str | None = None) -> Job:
    """Return the Chromium job of the same item and Presentation (optionally another capture)."""
    presentation = job.presentation
    if capture is not None:
        presentation = dataclasses.replace(presentation, capture=capture)
    key = job_key(job.item, presentation, job.condition, job.content, job.seed)
    return dataclasses.replace(job, presentation=presentation, key=key)


def _finished(out: Path, job: Job) -> dict[str, Any] | None:
    try:
        record = json.loads((out / job.sidecar_path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    row = record.get("manifest") or {}
    if record.get("job_key") != job.key or not row.get("image"):
        return None
    return row if (out / row["image"]).is_file() else None


def options_from_args(args: argparse.Namespace) -> GenerativeOptions:
    """Return the options of `itemshot render --backend nanobanana|hybrid` flags."""
    client = ClientSettings(
        model=args.model,
        api_base=args.api_base,
        concurrency=max(1, args.concurrency),
        requests_per_minute=args.rpm,
        max_retries=max(0, args.max_retries),
        backoff_base=args.backoff_base,
        timeout=args.timeout,
        jitter_seed=args.seed,
    )
    batch = None
    if args.batch:
        batch = BatchSettings(
            poll_interval=max(0.0, args.poll_interval), timeout=args.batch_timeout
        )
    return GenerativeOptions(
        backend=args.backend,
        client=client,
        attempts=max(1, args.attempts),
        batch=batch,
        cache=args.cache,
        prices=PriceTable.from_json(args.price_table) if args.price_table else PriceTable(),
        workers=max(1, args.workers),
        verify_fallback=not args.no_verify,
        seed=args.seed,
    )


def run_generative(
    requests: list[JobRequest | ItemError], args: argparse.Namespace, console: Console
) -> int:
    """Run the nanobanana or hybrid backend from the command line; return the exit status."""
    options = options_from_args(args)
    if args.dry_run:
        print(estimate_generative(requests, Path(args.out), options).line(), flush=True)
        return EXIT_OK
    try:
        result = render_generative(requests, Path(args.out), options, console=console)
    except MissingApiKey as error:
        console.print(f"[red]error:[/red] {error}")
        return EXIT_USAGE
    return result.status


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
    out.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(out)
    rows: dict[str, dict[str, Any]] = {}
    todo = []
    for job in jobs:
        done = _finished(out, job)
        if done is None:
            todo.append(job)
        else:
            rows[job.key] = done
    bases = _hybrid_bases(todo, out, options.workers) if hybrid else {}
    ledger = Ledger(options.prices, batch=options.mode == "batch")
    cache = ResponseCache(options.cache or out / ".cache" / "nanobanana")
    results, endpoint, requests_made = asyncio.run(
        _generate_all(todo, bases, hybrid, options, api_key, cache, ledger)
    )
    fallback = [job for job in todo if not results[job.key].passed]
    for job in todo:
        if results[job.key].passed:
            rows[job.key] = _write_generated(
                out, job, results[job.key], options, endpoint, bases.get(job.key) is not None
            )
    if fallback:
        fallback_jobs = [chromium_job(job) for job in fallback]
        run_jobs(fallback_jobs, out, RunSettings(workers=options.workers))
        for job, chromium in zip(fallback, fallback_jobs, strict=True):
            rows[job.key] = _write_fallback(out, job, chromium, results[job.key], options, endpoint)
    manifest = [failure_row(p) if isinstance(p, PlanFailure) else rows[p.key] for p in planned]
    write_jsonl(out / MANIFEST, manifest)
    costs = ledger.as_dict() | {"http_requests_this_run": requests_made}
    atomic_write_json(out / COST, costs)
    summary = _summary(manifest, options, costs)
    atomic_write_json(out / SUMMARY, summary)
    console.print(json.dumps(summary, ensure_ascii=False))
    status = EXIT_SOME_FAILED if any(r.get("status") != "ok" for r in manifest) else EXIT_OK
    if fallback and options.verify_fallback:
        from verify import verify_output_set

        audit = verify_output_set(out, items=[j.item for j in jobs], workers=options.workers)
        console.print(f"fallback renders verified: {audit.passed} passed, {audit.failed} failed")
        if status == EXIT_OK and audit.failed:
            status = EXIT_UNVERIFIED
        manifest = read_jsonl(out / MANIFEST)  # now with the fallback renders' verdicts
    return GenerativeResult(status, summary, manifest)


def _hybrid_bases(todo: list[Job], out: Path, workers: int) -> dict[str, bytes]:
    """Render the exact Chromium pages (no capture) the model is asked to restyle."""
    if not todo:
        return {}
    base_jobs = [chromium_job(job, capture="none") for job in todo]
    folder = out / HYBRID_BASE
    run_jobs(base_jobs, folder, RunSettings(workers=workers))
    bases: dict[str, bytes] = {}
    for job, base in zip(todo, base_jobs, strict=True):
        path = folder / base.image_path
        if path.is_file():
            bases[job.key] = path.read_bytes()
    return bases


async def _generate_all(
    todo: list[Job],
    bases: dict[str, bytes],
    hybrid: bool,
    options: GenerativeOptions,
    api_key: str,
    cache: ResponseCache,
    ledger: Ledger,
) -> tuple[dict[str, LoopResult], dict[str, str], int]:
    client = ImageClient(options.client, api_key, cache)
    audits = asyncio.Semaphore(2)
    mode = "restyle" if hybrid else "generate"
    # A hybrid job without its exact render goes straight to the fallback.
    results = {job.key: LoopResult((), None, None) for job in todo}
    runnable = [job for job in todo if not hybrid or job.key in bases]
    if options.batch is not None:
        batches = BatchClient(client, options.batch)
        results |= await generate_batched(
            runnable,
            batches,
            ledger,
            attempts=options.attempts,
            mode=mode,
            bases=bases,
            audit_slots=audits,
        )
        for record in batches.records:
            ledger.add_batch(record.as_dict())
    else:

        async def one(job: Job) -> tuple[str, LoopResult]:
            result = await generate_verified(
                job,
                client,
                ledger,
                attempts=options.attempts,
                mode=mode,
                base_png=bases.get(job.key),
                audit_slots=audits,
            )
            return job.key, result

        results |= dict(await asyncio.gather(*(one(job) for job in runnable)))
    return results, client.endpoint, client.http_requests


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
    row = base_row(job)
    row.update(
        backend=options.backend,
        requested_backend=options.backend,
        status="ok",
        image=job.image_path,
        layout=None,
        width=result.size[0],
        height=result.size[1],
        attempts=len(result.attempts),
        fallback=False,
        model=last.request["model"],
        template_version=TEMPLATE_VERSION,
        verdict="pass",
        verify={"mode": "whole_image", "verdict": last.verdict},
    )
    if restyled:
        row["base_image"] = f"{HYBRID_BASE}/{chromium_job(job, capture='none').image_path}"
    row["figure_files"] = {str(n): p for n, p in write_figure_files(out, job.item).items()}
    sidecar = {
        "job_key": job.key,
        "manifest": row,
        "layout": None,
        "render": _generation(result, options, endpoint),
    }
    atomic_write(out / job.image_path, _as_png(result.image))
    atomic_write_json(out / job.sidecar_path, sidecar)
    return row


def _write_fallback(
    out: Path,
    job: Job,
    chromium: Job,
    result: LoopResult,
    options: GenerativeOptions,
    endpoint: dict[str, str],
) -> dict[str, Any]:
    try:
        record = json.loads((out / chromium.sidecar_path).read_text(encoding="utf-8"))
        row = dict(record["manifest"])
    except (OSError, json.JSONDecodeError, KeyError):
        row = base_row(job) | {
            "status": "failed",
            "stage": "fallback",
            "error": {"reason": "fallback_failed", "message": "the Chromium fallback failed"},
        }
    row.update(
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
        "manifest": row,
        "layout": None,
        "render": _generation(result, options, endpoint)
        | {"fallback": {"backend": "chromium", "sidecar": chromium.sidecar_path}},
    }
    if row.get("status") == "ok":
        atomic_write_json(out / job.sidecar_path, sidecar)
    return row


def _as_png(image: bytes) -> bytes:
    """Return the image as PNG bytes (models may answer JPEG or WebP)."""
    if image[:8] == b"\x89PNG\r\n\x1a\n":
        return image
    from PIL import Image

    with Image.open(io.BytesIO(image)) as opened:
        buffer = io.BytesIO()
        opened.convert("RGB").save(buffer, "PNG")
        return buffer.getvalue()


def _summary(
    manifest: list[dict[str, Any]], options: GenerativeOptions, costs: dict[str, Any]
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
