"""`itemshot render`, `itemshot demo` and `itemshot sheet`."""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from renderer.adapters import FORMATS, ColumnMapping, DatasetError, load_dataset
from renderer.contact_sheet import contact_sheet
from renderer.items import ItemError
from renderer.jobs import JobRequest, plan
from renderer.nanobanana_run import add_generative_flags, run_generative
from renderer.output import read_jsonl
from renderer.pipeline import MANIFEST, RunSettings, RunSummary, run_jobs
from renderer.presentation import (
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
    PresentationSpec,
)
from renderer.presets import PRESETS, preset_choice
from verify import AuditSummary, verify_output_set

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_SOME_FAILED = 3
EXIT_UNVERIFIED = 4

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
}


def register(subparsers: Any) -> None:
    """Add the renderer's subcommands to the `itemshot` parser."""
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
        f"some images failed verification, {EXIT_USAGE} unusable arguments or dataset.",
    )
    render.add_argument("dataset", type=Path, help="dataset file (.jsonl, .csv, .tsv, .parquet)")
    render.add_argument("--out", type=Path, required=True, help="output folder")
    add_dataset_flags(render)
    add_presentation_flags(render)
    render.add_argument(
        "--preset",
        choices=tuple(PRESETS),
        default=None,
        help="choose each item's presentation by a named preset (instead of the flags above)",
    )
    add_run_flags(render)
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
    parser.add_argument("--workers", type=int, default=2, help="Chromium processes (2 pages each)")
    parser.add_argument(
        "--events", action="store_true", help="print one JSON line per finished job"
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.add_argument(
        "--no-verify", action="store_true", help="skip the audit of every image against its source"
    )


def presentation_specs(args: argparse.Namespace) -> list[PresentationSpec]:
    """Return one spec per combination of the comma-separated presentation flag values."""
    axes: list[list[tuple[str, Any]]] = []
    for name in PRESENTATION_FLAGS:
        raw = getattr(args, name, None)
        if raw is None:
            continue
        values: list[Any] = []
        for part in str(raw).split(","):
            part = part.strip()
            if name in ("font_size", "resolution") and part != RANDOM:
                if not part.isdigit():
                    raise PresentationError(name, f"{part!r} is not a whole number")
                values.append(int(part))
            else:
                values.append(part)
        axes.append([(name, v) for v in values])
    specs = [PresentationSpec(**dict(combo)) for combo in itertools.product(*axes)]
    for spec in specs:
        spec.check()
    return specs


def column_mapping(pairs: list[str]) -> ColumnMapping | None:
    """Return the generic column mapping given as FIELD=COLUMN pairs (None when empty)."""
    if not pairs:
        return None
    parsed: dict[str, str] = {}
    for pair in pairs:
        if "=" not in pair:
            raise DatasetError(f"--map takes FIELD=COLUMN, not {pair!r}")
        key, value = pair.split("=", 1)
        parsed[key.strip()] = value.strip()
    return ColumnMapping.from_pairs(parsed)


def cmd_render(args: argparse.Namespace) -> int:
    """Render a dataset; print a summary; return the documented exit status."""
    console = Console(stderr=True)
    try:
        specs = presentation_specs(args)
        preset = getattr(args, "preset", None)
        if preset and any(getattr(args, name, None) is not None for name in PRESENTATION_FLAGS):
            raise PresentationError("preset", "--preset replaces the presentation flags")
        dataset = load_dataset(
            args.dataset,
            format=args.format,
            mapping=column_mapping(args.map),
            missing_images=args.missing_images,
            limit=args.limit,
        )
    except (DatasetError, PresentationError) as error:
        console.print(f"[red]error:[/red] {error}")
        return EXIT_USAGE
    requests: list[JobRequest | ItemError] = []
    for entry in dataset.entries:
        if isinstance(entry, ItemError):
            requests.append(entry)
        elif preset:
            try:
                choice = preset_choice(preset, entry, args.seed)
            except ItemError as error:
                requests.append(error)
                continue
            requests.append(JobRequest(entry, choice.spec, choice.condition))
        else:
            requests.extend(JobRequest(entry, spec) for spec in specs)
    if getattr(args, "backend", "chromium") != "chromium":
        return run_generative(requests, args, console)
    return execute(requests, args, console, f"{dataset.path.name} ({dataset.format})")


def execute(
    requests: list[JobRequest | ItemError],
    args: argparse.Namespace,
    console: Console,
    title: str,
) -> int:
    """Plan, run and verify with progress bars, print the summaries, return the exit status."""
    planned = plan(requests, args.seed)
    settings = RunSettings(workers=max(1, args.workers))
    with _progress(console, len(planned), hidden=args.no_progress) as advance:

        def on_event(event: dict[str, Any]) -> None:
            advance()
            if args.events:
                print(json.dumps({k: event[k] for k in ("event", "item_id")}), flush=True)

        summary = run_jobs(planned, args.out, settings, on_event)
    print_summary(console, summary, args.out, title)
    status = EXIT_SOME_FAILED if summary.failed else EXIT_OK
    if getattr(args, "no_verify", False) or summary.rendered + summary.skipped == 0:
        return status
    items = {r.item.id: r.item for r in requests if isinstance(r, JobRequest)}
    with _progress(
        console, summary.rendered + summary.skipped, args.no_progress, "verifying"
    ) as tick:
        audit = verify_output_set(
            args.out, items=list(items.values()), workers=max(1, args.workers), on_progress=tick
        )
    print_audit(console, audit)
    return EXIT_UNVERIFIED if status == EXIT_OK and audit.failed else status


def print_audit(console: Console, audit: AuditSummary) -> None:
    """Print the verification counts and where the audit report is."""
    line = f"verified {audit.total} images: {audit.passed} passed, {audit.failed} failed"
    if audit.by_reason:
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(audit.by_reason.items()))
        line += f" ({reasons})"
    console.print(line)
    if audit.report_html:
        console.print(f"audit report: {audit.report_html}")


class _progress:
    """A rich progress bar as a context manager that yields an `advance()` callable."""

    def __init__(
        self, console: Console, total: int, hidden: bool, label: str = "rendering"
    ) -> None:
        self.progress = Progress(
            TextColumn(label),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=console,
            disable=hidden,
            transient=True,
        )
        self.total = total

    def __enter__(self) -> Callable[[], None]:
        self.progress.start()
        task = self.progress.add_task("render", total=self.total)
        return lambda: self.progress.advance(task)

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()


def print_summary(console: Console, summary: RunSummary, out: Path, title: str) -> None:
    """Print the one-screen summary of a run."""
    table = Table(title=f"itemshot render — {title}", show_header=False, title_justify="left")
    table.add_row("jobs", str(summary.total))
    table.add_row("rendered", str(summary.rendered))
    table.add_row("skipped (already done)", str(summary.skipped))
    table.add_row("failed", f"[red]{summary.failed}[/red]" if summary.failed else "0")
    table.add_row("time", f"{summary.seconds:.1f} s")
    table.add_row("throughput", f"{summary.images_per_second:.2f} images/s")
    table.add_row("output", f"{out / MANIFEST}")
    console.print(table)
    if summary.failures:
        reasons = Table(title="failures by reason", title_justify="left")
        reasons.add_column("reason")
        reasons.add_column("count", justify="right")
        reasons.add_column("first example")
        for reason, count in summary.failures.most_common():
            example = next(f for f in summary.failed_items if f["reason"] == reason)
            reasons.add_row(reason, str(count), f"{example['item_id']}: {example['message']}"[:110])
        console.print(reasons)


def cmd_demo(args: argparse.Namespace) -> int:
    """Render the embedded sample dataset in every scene and write a contact sheet."""
    console = Console(stderr=True)
    sample = Path(str(resources.files("renderer") / "sample" / "sample.jsonl"))
    demo_args = argparse.Namespace(
        out=args.out,
        seed=0,
        workers=args.workers,
        events=False,
        no_progress=False,
        no_verify=args.no_verify,
    )
    dataset = load_dataset(sample)
    requests: list[JobRequest | ItemError] = []
    for index, entry in enumerate(dataset.entries):
        if isinstance(entry, ItemError):
            requests.append(entry)
            continue
        scene = SAMPLED_SCENES[index % len(SAMPLED_SCENES)]
        requests.append(JobRequest(entry, PresentationSpec(scene=scene, font_style=RANDOM)))
    status = execute(requests, demo_args, console, "embedded sample dataset")
    # The demo is a showcase: images that fail the audit are listed in the
    # report, and only a rendering failure makes the demo itself fail.
    status = EXIT_OK if status == EXIT_UNVERIFIED else status
    sheet = contact_sheet(args.out, read_jsonl(args.out / MANIFEST), args.out / "contact_sheet.png")
    console.print(f"images:        {args.out / 'images'}")
    console.print(f"manifest:      {args.out / MANIFEST}")
    console.print(f"contact sheet: {sheet}")
    return status


def cmd_sheet(args: argparse.Namespace) -> int:
    """Write a contact sheet of an existing output set."""
    manifest = args.out / MANIFEST
    if not manifest.is_file():
        print(f"error: {manifest} not found", file=sys.stderr)
        return EXIT_USAGE
    target = args.to or args.out / "contact_sheet.png"
    contact_sheet(args.out, read_jsonl(manifest), target, args.columns)
    print(target)
    return EXIT_OK
