"""`itemshot certify OUT --max-defect-rate R`: where a set's certified review stands."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from itemshot.api import EXIT_OK, EXIT_SOME_FAILED, EXIT_USAGE


def register(subparsers: Any) -> None:
    """Add the certify subcommand to the `itemshot` parser."""
    certify = subparsers.add_parser(
        "certify",
        help="state how far a set's certified review is (audit sample, bound reached)",
        description="Print the audit sample size still needed for the target 'defect rate "
        "among accepted images ≤ R at confidence C' (exact binomial bound), the bound the "
        "sample reached, and what is left to review. --draw draws the seeded sample of "
        "verifier-passed images (or grows it after a defect) for the review app. Exit status: "
        f"{EXIT_OK} certified, {EXIT_SOME_FAILED} not (yet) certified, {EXIT_USAGE} bad "
        "arguments or no manifest.",
    )
    certify.add_argument("out", type=Path, metavar="OUT", help="an output folder")
    certify.add_argument(
        "--max-defect-rate", type=float, required=True, metavar="R", help="e.g. 0.02"
    )
    certify.add_argument("--confidence", type=float, default=0.95, metavar="C", help="default 0.95")
    certify.add_argument(
        "--draw", action="store_true", help="draw (or grow) the audit sample if needed"
    )
    certify.add_argument("--seed", type=int, default=0, help="the sample's seed (default 0)")
    certify.set_defaults(handler=cmd_certify)


def cmd_certify(args: argparse.Namespace) -> int:
    """Print the certification state of OUT; return 0 only when it is certified."""
    from itemshot.outputs import MANIFEST
    from itemshot.review import certify

    console = Console(stderr=True)
    if not (args.out / MANIFEST).is_file():
        console.print(f"[red]error:[/red] {args.out / MANIFEST} not found")
        return EXIT_USAGE
    try:
        certify.check_target(args.max_defect_rate, args.confidence)
        sample = certify.read_sample(args.out)
    except ValueError as error:
        console.print(f"[red]error:[/red] {error}")
        return EXIT_USAGE
    state = certify.SetState.read(args.out)
    rate, level = args.max_defect_rate, args.confidence
    if sample is None:
        passed = certify.passed_images(state)
        needed = certify.sample_size(rate, level, 0, len(passed))
        if not args.draw:
            shown = needed if needed is not None else f"more than the {len(passed)}"
            print(f"sample size still needed: {shown}")
            print("bound reached: none (no audit sample drawn; use --draw or the review app)")
            return EXIT_SOME_FAILED
        sample = certify.draw_sample(passed, rate, level, args.seed)
        certify.write_sample(args.out, sample)
        console.print(
            f"drew audit sample {sample.id}: {sample.size} of {len(passed)} passed images"
        )
    found = certify.assess(sample, state, rate, level)
    if args.draw and found.trusted and found.more:
        sample = sample.grown(found.needed or 0)
        certify.write_sample(args.out, sample)
        console.print(f"grew audit sample {sample.id} to {sample.size} images")
        found = certify.assess(sample, state, rate, level)
    _print(found)
    return EXIT_OK if found.certified else EXIT_SOME_FAILED


def _print(found: Any) -> None:
    still = found.more if found.more is not None else "more than the passed images"
    pending = found.sample_pending + (found.more or 0)
    print(f"sample size still needed: {pending if found.trusted else still}")
    print(
        f"bound reached: defect rate ≤ {found.bound:.2%} at {found.confidence:.0%} confidence "
        f"(target {found.max_defect_rate:.2%}; {found.defects} defect(s) in "
        f"{found.sample_reviewed} of {found.sample_size} sampled)"
    )
    table = Table(title=f"certified review · {found.sample_id}", show_header=False)
    table.add_row("images", str(found.images))
    table.add_row("verifier-passed (sample drawn from)", str(found.passed))
    table.add_row("to review in full (failed, unverified, new)", str(found.by_hand_required))
    table.add_row("  of them still to review", str(found.by_hand_pending))
    table.add_row("sample", f"{found.sample_reviewed} of {found.sample_size} reviewed")
    table.add_row("sample size needed", str(found.needed) if found.needed else "unreachable")
    table.add_row("unsampled passes still to accept", str(found.unsampled_pending))
    table.add_row("accepted as certified by sample", str(found.certified_images))
    Console(stderr=True).print(table)
    print(f"next: {found.next_step()}")
    if found.certified:
        print(f"certified: {found.statement()}")
