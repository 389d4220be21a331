"""`itemshot sweep DESIGN.yaml` and `itemshot export OUT --to hf|lmms-eval|vlmevalkit`."""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from itemshot.api import EXIT_OK, EXIT_SOME_FAILED, EXIT_STOPPED, EXIT_UNVERIFIED, EXIT_USAGE
from itemshot.cli.executors import add_executor_flags, guarded
from itemshot.cli.render import add_hub_flags
from itemshot.factorial.exports.exports import TARGETS
from itemshot.factorial.review.log import REJECTED_POLICIES


def register(subparsers: Any) -> None:
    """Add the sweep and export subcommands to the `itemshot` parser."""
    sweep = subparsers.add_parser(
        "sweep",
        help="run a factorial design end to end",
        description="Expand a design file into conditions, render the vision cells, write the "
        "text cells, and write one manifest with a column per factor. Re-running skips "
        f"finished jobs. Exit status: {EXIT_OK} all ok, {EXIT_SOME_FAILED} some rows failed, "
        f"{EXIT_USAGE} unusable design or dataset, {EXIT_STOPPED} the output folder could not "
        f"be written (disk full; re-run to resume), {EXIT_UNVERIFIED} some images failed "
        "verification (--verify).",
    )
    sweep.add_argument("design", type=Path, metavar="DESIGN.yaml")
    sweep.add_argument(
        "--out", type=Path, default=None, help="output folder (default: the design's `out`)"
    )
    sweep.add_argument(
        "--dataset",
        default=None,
        metavar="PATH",
        help="read the items from PATH (a file, a Hub-style folder, a Hub id or itemshot:sample) "
        "instead of the design's dataset.path; its other dataset settings still apply",
    )
    sweep.add_argument("--limit", type=int, default=None, help="use the first N dataset rows only")
    add_hub_flags(sweep)
    sweep.add_argument(
        "--workers",
        type=int,
        default=2,
        help="Chromium processes, 2 pages each (with --executor ray: render actors, one CPU each)",
    )
    sweep.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    sweep.add_argument(
        "--verify",
        action="store_true",
        default=None,
        help="verify the rendered images afterwards, verdicts into the manifest (as "
        f"`itemshot verify`; also the design's `verify: true`); exit {EXIT_UNVERIFIED} when "
        "some fail",
    )
    add_executor_flags(sweep)
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
    export.add_argument(
        "--rejected",
        choices=REJECTED_POLICIES,
        default="leave-out",
        help="images rejected in review (OUT/review.jsonl): leave them out (default), or "
        "keep them and mark each image's review status in OUT/review.json",
    )
    export.add_argument(
        "--certified",
        action="store_true",
        help="require a complete certified review (itemshot certify): refuse to export "
        "a set whose audit sample or review is incomplete",
    )
    export.set_defaults(handler=cmd_export)


def cmd_sweep(args: argparse.Namespace) -> int:
    """Run a design; print the plan, balance and run summaries; return the exit status."""
    console = Console(stderr=True)
    return guarded(console, lambda: _sweep(args, console))


def _sweep(args: argparse.Namespace, console: Console) -> int:
    import itemshot
    from itemshot.cli.render import print_run
    from itemshot.factorial.design.controller import SWEEP_SUMMARY
    from itemshot.factorial.design.design import DesignError
    from itemshot.renderer.adapters import DatasetError

    try:
        run = itemshot.sweep(
            args.design,
            args.out,
            dataset=args.dataset,
            limit=args.limit,
            config=args.config,
            split=args.split,
            workers=args.workers,
            progress=not args.no_progress,
            executor=args.executor,
            address=args.address,
            console=console,
            verify=args.verify,
        )
    except (DesignError, DatasetError) as error:
        console.print(f"[red]error:[/red] {error}")
        return EXIT_USAGE
    result = run.result
    rendered = itemshot.RunResult(run.out, run.status, (), {}, render=result.render)
    print_run(console, rendered, f"sweep {run.name} ({run.design_type})")
    table = Table(title="rows", show_header=False, title_justify="left")
    table.add_row("cells in the design", str(run.cells))
    table.add_row("manifest rows", str(result.rows))
    table.add_row("text rows (no render)", str(run.counts["text_rows"]))
    table.add_row("items that failed to load", str(run.counts["load_errors"]))
    table.add_row("failed rows", str(result.failed_rows))
    table.add_row("option-set inconsistencies", str(run.inconsistencies))
    table.add_row("balance", "passed" if run.balance.passed else "[red]FAILED[/red]")
    if run.confounds is not None:
        table.add_row("confounds", "passed" if run.confounds.passed else "[red]FAILED[/red]")
    table.add_row("summary", str(run.out / SWEEP_SUMMARY))
    if run.audit is not None:
        audit = run.audit
        table.add_row(
            "verified", f"{audit.passed} passed, {audit.failed} failed ({audit.report_html})"
        )
    console.print(table)
    if run.confounds is not None:
        # Per contrast, how far each nuisance measure moved within an item.
        for line in run.confounds.lines():
            console.print(line, markup=False, highlight=False)
    return run.status


def cmd_export(args: argparse.Namespace) -> int:
    """Export an output set; print the files written."""
    import itemshot

    console = Console(stderr=True)
    try:
        result = itemshot.export(
            args.source,
            args.to,
            args.out,
            name=args.name,
            rejected=args.rejected,
            certified=args.certified,
        )
    except (FileNotFoundError, ValueError) as error:
        console.print(f"[red]error:[/red] {error}")
        return EXIT_USAGE
    console.print(f"exported {result.rows} rows to {result.dest}")
    if result.left_out:
        console.print(f"  left out {result.left_out} rows that are not ok in the manifest")
    if result.filtered:
        console.print(f"  left out {result.filtered} rows by the export filter")
    if result.skipped:
        reasons = Counter(entry["reason"] for entry in result.skipped)
        listed = ", ".join(f"{count} {reason}" for reason, count in reasons.most_common())
        console.print(f"  skipped {len(result.skipped)} rows this harness cannot hold ({listed})")
    if result.review:
        review = result.review
        console.print(
            f"  review: {review['left_out']} rejected left out, {review['rejected']} rejected, "
            f"{review['conflict']} in conflict, {review['flagged']} flagged, "
            f"{review['accepted']} accepted, {review['unreviewed']} unreviewed"
        )
    if result.certification is not None:
        said = "certified" if result.certification["certified"] else "NOT certified"
        console.print(f"  {said}: {result.certification['statement']}")
    for path in result.paths:
        print(path)
    return EXIT_OK
