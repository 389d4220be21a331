"""The `--executor` and `--address` flags that `render`, `verify` and `sweep` share."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from rich.console import Console

from itemshot.api import EXIT_USAGE
from itemshot.executors.select import EXECUTORS


def add_executor_flags(parser: argparse.ArgumentParser, work: str = "the jobs") -> None:
    """Add `--executor local|ray` and `--address ADDR`."""
    group = parser.add_argument_group("where the work runs")
    group.add_argument(
        "--executor",
        choices=EXECUTORS,
        default="local",
        help=f"run {work} on this machine (default) or on a Ray cluster "
        "(pip install 'itemshot[ray]'); the output set is the same",
    )
    group.add_argument(
        "--address",
        default=None,
        metavar="ADDR",
        help="the Ray cluster to use, HOST:PORT of its head (default: RAY_ADDRESS, else a new "
        "single-machine instance on 127.0.0.1); needs --executor ray",
    )


def guarded(console: Console, command: Callable[[], int]) -> int:
    """Run a command; turn an unusable executor into one error line."""
    from itemshot.executors.ray import RayUnavailable
    from itemshot.executors.select import ExecutorError

    try:
        return command()
    except (ExecutorError, RayUnavailable) as error:
        # One line whatever the terminal's width: it is meant to be read and grepped whole.
        console.print(f"[red]error:[/red] {error}", soft_wrap=True)
        return EXIT_USAGE
