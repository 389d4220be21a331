"""`itemshot plan`: how many items a paired contrast needs, before the sweep is run."""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from itemshot.api import EXIT_USAGE


def register(subparsers: Any) -> None:
    """Add the plan subcommand to the `itemshot` parser."""
    plan = subparsers.add_parser(
        "plan",
        help="items needed to detect an effect between two conditions (McNemar power)",
        description="Say how many items a paired contrast needs to detect a difference in "
        "accuracy of --effect at --power (Connor's McNemar formula, checked by simulation), "
        "or, with --items, the smallest difference that many items detect. The discordant "
        "rate (pairs right in one condition and wrong in the other) is stated "
        "(--discordant), measured between two scored response files (--pilot A B: rows "
        "with id and if_right or correct), or measured per contrast from a pilot sweep's "
        "predictions (--predictions P --sets S). With DESIGN.yaml, every contrast of the "
        "design is planned, and the items needed after Holm's adjustment across them are "
        "shown beside.",
    )
    plan.add_argument("design", type=Path, nargs="?", metavar="DESIGN.yaml")
    plan.add_argument(
        "--effect", type=float, default=0.10, help="difference in accuracy (0.10 = 10 points)"
    )
    plan.add_argument("--discordant", type=float, help="share of discordant pairs (e.g. 0.30)")
    plan.add_argument("--pilot", type=Path, nargs=2, metavar=("A.jsonl", "B.jsonl"))
    plan.add_argument("--predictions", type=Path, nargs="+", metavar="PREDICTIONS.jsonl")
    plan.add_argument("--sets", type=Path, nargs="+", metavar="OUT", help="the pilot's sets")
    plan.add_argument("--parser", default="strict", help="parser of the pilot's predictions")
    plan.add_argument(
        "--items",
        type=int,
        help="items at hand: give the smallest detectable effect (default with DESIGN: "
        "the design's dataset)",
    )
    plan.add_argument("--power", type=float, default=0.80)
    plan.add_argument("--alpha", type=float, default=0.05)
    plan.add_argument("--simulations", type=int, default=2000, help="0 skips the check")
    plan.add_argument("--seed", type=int, default=0)
    plan.add_argument("--json", action="store_true", help="print machine-readable JSON")
    plan.set_defaults(handler=run_plan_command)


def _pct(value: float) -> str:
    return "—" if not math.isfinite(value) else f"{100 * value:.1f}"


def _count(value: int | None) -> str:
    return "—" if value is None else str(value)


def _rates(args: argparse.Namespace) -> dict[str, tuple[float, str]]:
    """Return the discordant rates to plan with, by contrast, factor or '*' (every contrast)."""
    from itemshot.api import pilot_rates

    given = [args.discordant is not None, args.pilot is not None, args.predictions is not None]
    if sum(given) > 1:
        raise ValueError("give one of --discordant, --pilot or --predictions")
    if args.predictions is not None and not args.sets:
        raise ValueError("--predictions needs --sets (the pilot sweep's output sets)")
    if args.discordant is not None:
        return {"*": (args.discordant, "stated")}
    if args.pilot is not None:
        return pilot_rates(pilot=args.pilot)
    if args.predictions is not None:
        return pilot_rates(predictions=args.predictions, sets=args.sets, parser=args.parser)
    return {"*": (0.30, "assumed (no pilot given)")}


def _single(args: argparse.Namespace, rates: dict[str, tuple[float, str]], console: Console) -> int:
    from itemshot.api import plan

    rate, source = rates.get("*") or next(iter(rates.values()))
    effect = None if args.items is not None else args.effect
    result = plan(effect=effect, discordant=rate, power=args.power, alpha=args.alpha,
                  items=args.items, simulations=args.simulations, seed=args.seed)  # fmt: skip
    if args.json:
        print(json.dumps(dataclasses.asdict(result) | {"source": source}, indent=2))
        return 0
    if result.solved == "items":
        console.print(
            f"{result.items} items detect a difference of {_pct(result.effect)} points at "
            f"power {result.power:g}, α {result.alpha:g}, with {_pct(rate)}% discordant pairs "
            f"({escape(source)}; formula {result.items_exact:.1f})"
        )
    else:
        console.print(
            f"{result.items} items detect a difference of {_pct(result.effect)} points or more "
            f"at power {result.power:g}, α {result.alpha:g}, with {_pct(rate)}% discordant "
            f"pairs ({escape(source)})"
        )
    if result.simulations:
        console.print(
            f"simulated power over {result.simulations} sets: {_pct(result.simulated_power)}% "
            f"(asymptotic McNemar), {_pct(result.simulated_power_exact)}% (exact McNemar)"
        )
    console.print(f"method: {result.method}")
    return 0


def _design(args: argparse.Namespace, rates: dict[str, tuple[float, str]], console: Console) -> int:
    from itemshot.api import plan_design

    plans = plan_design(args.design, rates, effect=args.effect, power=args.power,
                        alpha=args.alpha, items=args.items)  # fmt: skip
    if args.json:
        print(json.dumps([dataclasses.asdict(p) for p in plans], indent=2, ensure_ascii=False))
        return 0
    available = plans[0].available if plans else 0
    title = (
        f"{args.design.name}: items to detect {_pct(args.effect)} points at power "
        f"{args.power:g}, α {args.alpha:g} ({len(plans)} contrasts)"
    )
    sources = {item.source for item in plans}
    shared = len(sources) == 1  # one pilot rate for all: said once, above the table
    table = Table(title=title)
    columns = ["contrast", "discordant %", *([] if shared else ["measured on"]), "items",
               "items (Holm)", f"detectable with {available} items, points"]  # fmt: skip
    for column in columns:
        left = column in ("contrast", "measured on")
        table.add_column(column, justify="left" if left else "right")
    for item in plans:
        source = [] if shared else [escape(item.source)]
        cells = [escape(item.contrast), _pct(item.discordant), *source, _count(item.items),
                 _count(item.items_family), _pct(item.detectable)]  # fmt: skip
        table.add_row(*cells)
    if shared:
        console.print(f"discordant pairs: {escape(next(iter(sources)))}")
    console.print(table)
    console.print(
        "items (Holm): at α / contrasts, the strictest step of Holm's adjustment across the "
        "design; detectable: the smallest difference the items at hand detect at the power "
        "(— when none up to the discordant rate does; items — : the discordant rate is "
        "below the effect)."
    )
    return 0


def run_plan_command(args: argparse.Namespace) -> int:
    """Print the items needed (or the detectable effect), for one contrast or a design's."""
    console = Console(highlight=False, soft_wrap=True)
    if not console.is_terminal:  # a pipe or file: the table whole, not wrapped at 80 columns
        console = Console(highlight=False, soft_wrap=True, width=150)
    try:
        rates = _rates(args)
        if args.design is not None:
            return _design(args, rates, console)
        return _single(args, rates, console)
    except ValueError as error:
        Console(stderr=True, highlight=False).print(f"[red]error[/red] {escape(str(error))}")
        return EXIT_USAGE
