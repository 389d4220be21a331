"""`itemshot verify OUT` and `itemshot audit IMAGES_DIR --items DATASET`."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from itemshot.api import EXIT_OK, EXIT_SOME_FAILED, EXIT_USAGE
from itemshot.cli.executors import add_executor_flags, guarded
from itemshot.outputs import MANIFEST
from itemshot.progress import progress_bar
from itemshot.verify.pairing import DEFAULT_PATTERN, MATCH_MODES, image_files
from itemshot.verify.thresholds import DEFAULT_THRESHOLDS, Thresholds

if TYPE_CHECKING:
    from itemshot.verify import AuditSummary


def register(subparsers: Any) -> None:
    """Add `verify` and `audit` to the `itemshot` parser."""
    verify = subparsers.add_parser(
        "verify",
        help="re-verify an output set (OCR round trip, figures, layout checks)",
        description="Verify every rendered image of an output set against its item. Writes "
        "`verdict` and `verify` into each manifest row, OUT/audit.json and OUT/audit.html. "
        f"Exit status: {EXIT_OK} all pass, {EXIT_SOME_FAILED} some fail, {EXIT_USAGE} bad input.",
    )
    verify.add_argument("out", type=Path, help="an output folder with manifest.jsonl")
    verify.add_argument(
        "--items",
        type=Path,
        default=None,
        help="the dataset, to compare figures with their sources",
    )
    _common(verify)
    add_executor_flags(verify, "the checks")
    verify.set_defaults(handler=cmd_verify)

    audit = subparsers.add_parser(
        "audit",
        help="audit images made elsewhere against a dataset (no layout record)",
        description="OCR each image as a whole, align it to its item's stem and options, look "
        "for its figures, and write audit.json and audit.html.",
    )
    audit.add_argument("images_dir", type=Path, help="folder of images (png, jpg, webp)")
    audit.add_argument("--items", type=Path, required=True, help="the dataset the images show")
    audit.add_argument(
        "--match",
        choices=MATCH_MODES,
        default="filename",
        help="pair images to items by file name pattern (default), natural order, or the "
        "folder's manifest.jsonl",
    )
    audit.add_argument(
        "--pattern",
        default=DEFAULT_PATTERN,
        help="file name pattern for --match filename: {n} = 1-based dataset line, {id} = item id "
        f"(default {DEFAULT_PATTERN})",
    )
    audit.add_argument("--out", type=Path, default=None, help="report folder (default ./audit-DIR)")
    _common(audit)
    audit.set_defaults(handler=cmd_audit)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workers", type=int, default=None, help="OCR processes (default: cores)")
    parser.add_argument(
        "--threshold",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a threshold, e.g. text_accuracy=0.95 (defaults: "
        + ", ".join(f"{k}={v}" for k, v in DEFAULT_THRESHOLDS.as_dict().items())
        + ")",
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def _thresholds(pairs: list[str]) -> Thresholds:
    values: dict[str, str] = {}
    for pair in pairs:
        if "=" not in pair:
            raise ValueError(f"--threshold takes NAME=VALUE, not {pair!r}")
        name, value = pair.split("=", 1)
        values[name.strip()] = value.strip()
    return DEFAULT_THRESHOLDS.updated(values)


def _print_summary(console: Console, title: str, summary: AuditSummary) -> None:
    table = Table(title=title, show_header=False, title_justify="left")
    table.add_row("images", str(summary.total))
    table.add_row("pass", str(summary.passed))
    table.add_row("fail", f"[red]{summary.failed}[/red]" if summary.failed else "0")
    table.add_row("time", f"{summary.seconds:.1f} s ({summary.images_per_second:.2f} images/s)")
    table.add_row("report", summary.report_html)
    console.print(table)
    if summary.by_reason:
        reasons = Table(title="failures by reason", title_justify="left")
        reasons.add_column("reason")
        reasons.add_column("images", justify="right")
        for code, count in sorted(summary.by_reason.items(), key=lambda kv: -kv[1]):
            reasons.add_row(code, str(count))
        console.print(reasons)


def cmd_verify(args: argparse.Namespace) -> int:
    """Verify an output set and print a one-screen summary."""
    import itemshot
    from itemshot.renderer.adapters import DatasetError

    console = Console(stderr=True)
    manifest = args.out / MANIFEST
    if not manifest.is_file():
        console.print(f"[red]error:[/red] {manifest} not found")
        return EXIT_USAGE
    try:
        thresholds = _thresholds(args.threshold)
        items = itemshot.load(args.items) if args.items else None
    except (ValueError, DatasetError) as error:
        console.print(f"[red]error:[/red] {error}")
        return EXIT_USAGE

    def run() -> int:
        try:
            summary = itemshot.verify(
                args.out,
                items,
                thresholds=thresholds,
                workers=args.workers,
                progress=not args.no_progress,
                executor=args.executor,
                address=args.address,
            )
        except itemshot.SourcesUnavailable as error:
            # Never a check against the text stored with the image: that would pass anything.
            console.print(f"[red]error:[/red] {escape(str(error))}", soft_wrap=True)
            return EXIT_USAGE
        _print_summary(console, f"itemshot verify — {args.out}", summary)
        return EXIT_OK if summary.failed == 0 else EXIT_SOME_FAILED

    return guarded(console, run)


def cmd_audit(args: argparse.Namespace) -> int:
    """Audit a folder of external images and print per-image verdicts and a summary."""
    import itemshot
    from itemshot.renderer.adapters import DatasetError

    console = Console(stderr=True)
    if not args.images_dir.is_dir():
        console.print(f"[red]error:[/red] {args.images_dir} is not a folder")
        return EXIT_USAGE
    try:
        thresholds = _thresholds(args.threshold)
    except ValueError as error:
        console.print(f"[red]error:[/red] {error}")
        return EXIT_USAGE
    total = len(image_files(args.images_dir))
    try:
        with progress_bar(console, total, "auditing", hidden=args.no_progress) as advance:
            summary, verdicts = itemshot.audit(
                args.images_dir,
                args.items,
                match=args.match,
                pattern=args.pattern,
                out=args.out,
                thresholds=thresholds,
                workers=args.workers,
                on_progress=advance,
            )
    except DatasetError as error:
        console.print(f"[red]error:[/red] {error}")
        return EXIT_USAGE
    for result in verdicts:
        line = {
            "image": Path(result.image).name,
            "item_id": result.item_id,
            "verdict": "pass" if result.passed else "fail",
            "reasons": [f"{r.code}:{r.region}" if r.region else r.code for r in result.reasons],
        }
        print(json.dumps(line, ensure_ascii=False))
    _print_summary(console, f"itemshot audit — {args.images_dir}", summary)
    return EXIT_OK if summary.failed == 0 else EXIT_SOME_FAILED
