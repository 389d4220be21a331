"""`itemshot sweep DESIGN.yaml` and `itemshot export OUT --to hf|lmms-eval|vlmevalkit`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from factorial.balance import balance_report
from factorial.controller import SWEEP_SUMMARY, describe_plan, load_items, plan_sweep, run_sweep
from factorial.design import DesignError, load_design
from factorial.export_common import export_rows
from factorial.export_hf import export_hf
from factorial.export_lmms import export_lmms
from factorial.export_vlmevalkit import export_vlmevalkit
from renderer.adapters import DatasetError
from renderer.commands import print_summary
from renderer.output import atomic_write, atomic_write_json
from renderer.pipeline import RunSettings

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_SOME_FAILED = 3
TARGETS = ("hf", "lmms-eval", "vlmevalkit")
BALANCE = "balance.json"


def register(subparsers: Any) -> None:
    """Add the sweep and export subcommands to the `itemshot` parser."""
    sweep = subparsers.add_parser(
        "sweep",
        help="run a factorial design end to end",
        description="Expand a design file into conditions, render the vision cells, write the "
        "text cells, and write one manifest with a column per factor. Re-running skips "
        f"finished jobs. Exit status: {EXIT_OK} all ok, {EXIT_SOME_FAILED} some rows failed, "
        f"{EXIT_USAGE} unusable design or dataset.",
    )
    sweep.add_argument("design", type=Path, metavar="DESIGN.yaml")
    sweep.add_argument(
        "--out", type=Path, default=None, help="output folder (default: the design's `out`)"
    )
    sweep.add_argument("--limit", type=int, default=None, help="use the first N dataset rows only")
    sweep.add_argument("--workers", type=int, default=2, help="Chromium processes (2 pages each)")
    sweep.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    sweep.set_defaults(handler=cmd_sweep)

    export = subparsers.add_parser(
        "export",
        help="export a sweep's output set for an evaluation harness",
        description="Write an output set as a Hugging Face parquet (hf), an lmms-eval task "
        "folder (lmms-eval) or a VLMEvalKit MCQ TSV (vlmevalkit).",
    )
    export.add_argument("source", type=Path, metavar="OUT", help="a sweep output folder")
    export.add_argument("--to", choices=TARGETS, required=True)
    export.add_argument("--out", type=Path, required=True, help="folder to write")
    export.add_argument("--name", default=None, help="dataset/task name (default: OUT's name)")
    export.set_defaults(handler=cmd_export)


def cmd_sweep(args: argparse.Namespace) -> int:
    """Run a design; print the plan, balance and run summaries; return the exit status."""
    console = Console(stderr=True)
    try:
        design = load_design(args.design)
        dataset = load_items(design, args.limit)
    except (DesignError, DatasetError) as error:
        console.print(f"[red]error:[/red] {error}")
        return EXIT_USAGE
    out = args.out or design.out or Path("sweeps") / design.name
    plan = plan_sweep(design, dataset)
    report = balance_report(design.type, design.factors, plan.cells, design.seed)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(out / "design.yaml", args.design.read_bytes())
    atomic_write_json(out / BALANCE, report.as_dict())
    counts = describe_plan(plan)
    progress = Progress(
        TextColumn("sweep"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
        disable=args.no_progress,
        transient=True,
    )
    with progress:
        task = progress.add_task("render", total=counts["render_jobs"])
        result = run_sweep(
            plan,
            out,
            RunSettings(workers=max(1, args.workers)),
            lambda _event: progress.advance(task),
        )
    print_summary(console, result.render, out, f"sweep {design.name} ({design.type})")
    table = Table(title="rows", show_header=False, title_justify="left")
    table.add_row("cells in the design", str(len(plan.cells)))
    table.add_row("manifest rows", str(result.rows))
    table.add_row("text rows (no render)", str(counts["text_rows"]))
    table.add_row("items that failed to load", str(counts["load_errors"]))
    table.add_row("failed rows", str(result.failed_rows))
    table.add_row("option-set inconsistencies", str(len(plan.inconsistencies)))
    table.add_row("balance", "passed" if report.passed else "[red]FAILED[/red]")
    table.add_row("summary", str(out / SWEEP_SUMMARY))
    console.print(table)
    return EXIT_OK if result.failed_rows == 0 else EXIT_SOME_FAILED


def cmd_export(args: argparse.Namespace) -> int:
    """Export an output set; print the files written."""
    console = Console(stderr=True)
    try:
        rows, not_ok = export_rows(args.source)
    except FileNotFoundError as error:
        console.print(f"[red]error:[/red] {error}")
        return EXIT_USAGE
    name = args.name or args.source.resolve().name
    args.out.mkdir(parents=True, exist_ok=True)
    if args.to == "hf":
        written = export_hf(rows, args.out)
    elif args.to == "lmms-eval":
        written = export_lmms(rows, args.out, name)
    else:
        written = export_vlmevalkit(rows, args.out, name)
    console.print(f"exported {len(rows)} rows ({not_ok} not ok, left out) to {args.out}")
    for path in written:
        print(path)
    return EXIT_OK
