"""`itemshot render`, `itemshot demo` and `itemshot sheet`: flags in, `itemshot.render` out."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from itemshot.api import (
    EXIT_OK,
    EXIT_SOME_FAILED,
    EXIT_STOPPED,
    EXIT_UNVERIFIED,
    EXIT_USAGE,
    RunResult,
)
from itemshot.cli.executors import add_executor_flags, guarded
from itemshot.outputs import MANIFEST
from itemshot.renderer.adapters.formats import FORMATS
from itemshot.renderer.backends.nanobanana.settings import DEFAULT_MODEL, BatchSettings
from itemshot.renderer.presentation import (
    ASPECTS,
    CAPTURES,
    COLORS,
    FONT_STYLES,
    MARGINS,
    RANDOM,
    SAMPLED_SCENES,
    SCENES,
    SEVERITIES,
    PresentationError,
)
from itemshot.renderer.presets import PRESET_NAMES

BACKENDS = ("chromium", "nanobanana", "hybrid")

PRESENTATION_FLAGS: dict[str, tuple[str, tuple[str, ...] | None]] = {
    "scene": ("scene (layout)", SCENES),
    "font_style": ("font style", FONT_STYLES),
    "font_size": ("font size in px at 1024 px", None),
    "margin": ("margin", MARGINS),
    "color": ("background colour", tuple(COLORS)),
    "aspect": ("aspect ratio", ASPECTS),
    "resolution": ("long side in px", None),
    "capture": ("capture simulation", CAPTURES),
    "severity": ("capture severity", SEVERITIES),
    "deliver_size": (
        "long side in px of a captured image as the model receives it (default: the render's)",
        None,
    ),
}


def register(subparsers: Any) -> None:
    """Add the render, demo and sheet subcommands to the `itemshot` parser."""
    render = subparsers.add_parser(
        "render",
        help="render a dataset as vision-only images",
        description="Render every item of an MCQ dataset as one image per presentation. "
        "Each presentation flag takes one value, a comma-separated list (every "
        "combination is rendered), or `random` (sampled per item from the seed). "
        "Every image is then verified against its source (OCR round trip, figures, "
        "layout; `--no-verify` skips it). "
        f"Exit status: {EXIT_OK} all rendered and verified, {EXIT_SOME_FAILED} some items "
        f"failed to render (the others are written), {EXIT_UNVERIFIED} all rendered but "
        f"some images failed verification, {EXIT_USAGE} unusable arguments or dataset, "
        f"{EXIT_STOPPED} a system error (disk full, permissions) stopped the run part-way.",
    )
    render.add_argument(
        "dataset",
        type=Path,
        help="dataset file (.jsonl, .csv, .tsv, .parquet), Hub-style folder of parquet shards, "
        "or Hub id (owner/name) in the local cache",
    )
    render.add_argument("--out", type=Path, required=True, help="output folder")
    add_dataset_flags(render)
    add_presentation_flags(render)
    render.add_argument(
        "--preset",
        choices=PRESET_NAMES,
        default=None,
        help="choose each item's presentation by a named preset (instead of the flags above)",
    )
    add_run_flags(render)
    add_executor_flags(render, "rendering and verification")
    add_generative_flags(render)
    render.set_defaults(handler=cmd_render)

    demo = subparsers.add_parser("demo", help="render the embedded sample dataset")
    demo.add_argument("--out", type=Path, default=Path("demo-out"))
    demo.add_argument("--workers", type=int, default=2)
    demo.add_argument("--no-verify", action="store_true", help="skip the audit of the images")
    demo.set_defaults(handler=cmd_demo)

    sheet = subparsers.add_parser("sheet", help="write a contact sheet of an output set")
    sheet.add_argument("out", type=Path, help="an output folder with manifest.jsonl")
    sheet.add_argument(
        "--to", type=Path, default=None, help="PNG path (default OUT/contact_sheet.png)"
    )
    sheet.add_argument("--columns", type=int, default=None)
    sheet.set_defaults(handler=cmd_sheet)


def add_dataset_flags(parser: argparse.ArgumentParser) -> None:
    """Add the flags that say how to read a dataset."""
    parser.add_argument(
        "--format", choices=FORMATS, default=None, help="dataset layout (default: detect)"
    )
    parser.add_argument(
        "--map",
        action="append",
        default=[],
        metavar="FIELD=COLUMN",
        help="generic layout column mapping, e.g. question=prompt options=A,B,C,D answer=label "
        "answer_format=index0 images=img1,img2 id=uid subject=topic language=lang",
    )
    parser.add_argument(
        "--missing-images",
        choices=("fail", "placeholder"),
        default="fail",
        help="items whose figure files are missing fail (default) or get a labelled placeholder",
    )
    parser.add_argument("--limit", type=int, default=None, help="use the first N items only")
    add_hub_flags(parser)


def add_hub_flags(parser: argparse.ArgumentParser) -> None:
    """Add `--config` and `--split`, which choose the part of a Hub-style dataset."""
    parser.add_argument(
        "--config",
        default=None,
        help='config of a Hub-style folder or Hub id, e.g. "standard (10 options)"; `all` for every one',
    )
    parser.add_argument("--split", default=None, help="split, e.g. test or validation")


def add_presentation_flags(parser: argparse.ArgumentParser) -> None:
    """Add one flag per presentation parameter."""
    for name, (label, choices) in PRESENTATION_FLAGS.items():
        hint = f" ({', '.join(choices)})" if choices else ""
        parser.add_argument(
            f"--{name.replace('_', '-')}",
            dest=name,
            default=None,
            help=f"{label}{hint}; comma list or `random`",
        )


def add_run_flags(parser: argparse.ArgumentParser) -> None:
    """Add seed, worker and progress flags."""
    parser.add_argument("--seed", type=int, default=0, help="run seed (default 0)")
    parser.add_argument(
        "--workers",
        type=int,
        default=2,
        help="Chromium processes, 2 pages each (with --executor ray: render actors, one CPU each)",
    )
    parser.add_argument(
        "--events", action="store_true", help="print one JSON line per finished job"
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.add_argument(
        "--no-verify", action="store_true", help="skip the audit of every image against its source"
    )


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
    group.add_argument(
        "--timeout",
        type=float,
        default=180.0,
        help="deadline of each request in seconds, from connecting to the answer's last byte",
    )
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


def presentation_levels(args: argparse.Namespace) -> dict[str, Any]:
    """Return the presentation flags as API levels: a value, or a list for a comma list."""
    levels: dict[str, Any] = {}
    for name in PRESENTATION_FLAGS:
        raw = getattr(args, name, None)
        if raw is None:
            continue
        values: list[Any] = []
        for part in str(raw).split(","):
            part = part.strip()
            if name in ("font_size", "resolution", "deliver_size") and part != RANDOM:
                if not part.isdigit():
                    raise PresentationError(name, f"{part!r} is not a whole number")
                values.append(int(part))
            else:
                values.append(part)
        levels[name] = values if len(values) > 1 else values[0]
    return levels


def column_mapping(pairs: list[str]) -> dict[str, str] | None:
    """Return the generic column mapping given as FIELD=COLUMN pairs (None when empty)."""
    from itemshot.renderer.adapters import DatasetError

    if not pairs:
        return None
    parsed: dict[str, str] = {}
    for pair in pairs:
        if "=" not in pair:
            raise DatasetError(f"--map takes FIELD=COLUMN, not {pair!r}")
        key, value = pair.split("=", 1)
        parsed[key.strip()] = value.strip()
    return parsed


def generative_options(args: argparse.Namespace) -> Any:
    """Return the `GenerativeOptions` of `itemshot render --backend nanobanana|hybrid` flags."""
    from itemshot.generative.run import GenerativeOptions
    from itemshot.renderer.backends.nanobanana.cost import PriceTable
    from itemshot.renderer.backends.nanobanana.settings import ClientSettings

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


def cmd_render(args: argparse.Namespace) -> int:
    """Render a dataset; print a summary; return the documented exit status."""
    import itemshot
    from itemshot.renderer.adapters import DatasetError

    console = Console(stderr=True)
    try:
        levels = presentation_levels(args)
        if args.preset and levels:
            raise PresentationError("preset", "--preset replaces the presentation flags")
        items = itemshot.load(
            args.dataset,
            format=args.format,
            mapping=column_mapping(args.map),
            missing_images=args.missing_images,
            limit=args.limit,
            config=args.config,
            split=args.split,
        )
        requests = itemshot.api.requests_for(
            items, itemshot.api.presentation_specs(**levels), preset=args.preset, seed=args.seed
        )
    except (DatasetError, PresentationError) as error:
        console.print(f"[red]error:[/red] {error}")
        return EXIT_USAGE
    if args.backend != "chromium":
        if args.executor != "local":
            console.print(f"[red]error:[/red] the {args.backend} backend runs on this machine only")
            return EXIT_USAGE
        return _render_generative(requests, args, console)

    def run() -> int:
        result = itemshot.render(
            requests,
            args.out,
            seed=args.seed,
            workers=args.workers,
            verify=not args.no_verify,
            progress=not args.no_progress,
            executor=args.executor,
            address=args.address,
            on_event=_printer(args.events),
            console=console,
        )
        print_run(console, result, f"{args.dataset.name} ({items.format})")
        return int(result.status)

    return guarded(console, run)


def _render_generative(requests: list[Any], args: argparse.Namespace, console: Console) -> int:
    """Run the nanobanana or hybrid backend from the command line; return the exit status."""
    import itemshot
    from itemshot.renderer.backends.nanobanana.settings import MissingApiKey

    options = generative_options(args)
    if args.dry_run:
        estimate = itemshot.estimate(
            requests, args.out, backend=args.backend, generative=options, seed=args.seed,
            workers=args.workers,
        )  # fmt: skip
        print(estimate.line(), flush=True)
        return EXIT_OK
    try:
        result = itemshot.render(
            requests,
            args.out,
            backend=args.backend,
            generative=options,
            seed=args.seed,
            workers=args.workers,
            verify=not args.no_verify,
            console=console,
        )
    except MissingApiKey as error:
        console.print(f"[red]error:[/red] {error}")
        return EXIT_USAGE
    return int(result.status)


def _printer(events: bool) -> Any:
    if not events:
        return None

    def emit(event: dict[str, Any]) -> None:
        print(json.dumps({k: event[k] for k in ("event", "item_id")}), flush=True)

    return emit


def print_run(console: Console, result: RunResult, title: str) -> None:
    """Print the render summary, the failures by reason and the audit counts of a run."""
    summary = result.render
    assert summary is not None
    table = Table(title=f"itemshot render — {title}", show_header=False, title_justify="left")
    table.add_row("jobs", str(summary.total))
    table.add_row("rendered", str(summary.rendered))
    table.add_row("skipped (already done)", str(summary.skipped))
    table.add_row("failed", f"[red]{summary.failed}[/red]" if summary.failed else "0")
    table.add_row("time", f"{summary.seconds:.1f} s")
    table.add_row("throughput", f"{summary.images_per_second:.2f} images/s")
    table.add_row("output", f"{result.out / MANIFEST}")
    console.print(table)
    if summary.failures:
        reasons = Table(title="failures by reason", title_justify="left")
        reasons.add_column("reason")
        reasons.add_column("count", justify="right")
        reasons.add_column("first example")
        for reason, count in summary.failures.most_common():
            example = next(f for f in summary.failed_items if f["reason"] == reason)
            where = (
                f"{example['item_id']}, {example['field']}"
                if example.get("field")
                else example["item_id"]
            )
            reasons.add_row(reason, str(count), f"{where}: {example['message']}"[:110])
        console.print(reasons)
    audit = result.audit
    if audit is not None:
        line = f"verified {audit.total} images: {audit.passed} passed, {audit.failed} failed"
        if audit.by_reason:
            counts = ", ".join(f"{k} {v}" for k, v in sorted(audit.by_reason.items()))
            line += f" ({counts})"
        console.print(line)
        if audit.report_html:
            console.print(f"audit report: {audit.report_html}")


def cmd_demo(args: argparse.Namespace) -> int:
    """Render the embedded sample dataset in every scene and write a contact sheet."""
    import itemshot
    from itemshot.contact_sheet import contact_sheet
    from itemshot.outputs import read_manifest
    from itemshot.renderer.items import ItemError
    from itemshot.renderer.jobs import JobRequest
    from itemshot.renderer.presentation import PresentationSpec

    console = Console(stderr=True)
    requests: list[Any] = []
    for index, entry in enumerate(itemshot.load(itemshot.sample_dataset()).entries):
        if isinstance(entry, ItemError):
            requests.append(entry)
            continue
        scene = SAMPLED_SCENES[index % len(SAMPLED_SCENES)]
        requests.append(JobRequest(entry, PresentationSpec(scene=scene, font_style=RANDOM)))
    result = itemshot.render(
        requests, args.out, seed=0, workers=args.workers, verify=not args.no_verify, console=console
    )
    print_run(console, result, "embedded sample dataset")
    # The demo is a showcase: images that fail the audit are listed in the
    # report, and only a rendering failure makes the demo itself fail.
    status = EXIT_OK if result.status == EXIT_UNVERIFIED else result.status
    rows = [row.to_json() for row in read_manifest(args.out)]
    sheet = contact_sheet(args.out, rows, args.out / "contact_sheet.png")
    console.print(f"images:        {args.out / 'images'}")
    console.print(f"manifest:      {args.out / MANIFEST}")
    console.print(f"contact sheet: {sheet}")
    return status


def cmd_sheet(args: argparse.Namespace) -> int:
    """Write a contact sheet of an existing output set."""
    from itemshot.contact_sheet import contact_sheet
    from itemshot.outputs import read_manifest

    manifest = args.out / MANIFEST
    if not manifest.is_file():
        Console(stderr=True).print(f"[red]error:[/red] {manifest} not found")
        return EXIT_USAGE
    target = args.to or args.out / "contact_sheet.png"
    rows = [row.to_json() for row in read_manifest(args.out)]
    contact_sheet(args.out, rows, target, args.columns)
    print(target)
    return EXIT_OK
