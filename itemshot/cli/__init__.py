"""The `itemshot` command: one entry point, one subcommand per stage."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# One module per group of subcommands, each exposing `register(subparsers)`.
# They import the stages they drive only inside their handlers, so that
# `itemshot --help` answers without loading OpenCV, SciPy or google-genai.
COMMAND_MODULES = (
    "itemshot.cli.render",
    "itemshot.cli.verify",
    "itemshot.cli.capture",
    "itemshot.cli.analysis",
    "itemshot.cli.sweep",
    "itemshot.cli.review",
)


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser with every stage's subcommands registered."""
    parser = argparse.ArgumentParser(
        prog="itemshot",
        description="Render MCQ datasets as vision-only images, audit them, and analyse sweeps.",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `itemshot` command line and return its exit status.

    System errors end the command with one message and a documented status,
    never a traceback: an unusable `--out` is a usage error (2); a write the
    machine refuses part-way (disk full, permissions) stops the run (5) after
    saying what was written, which a re-run keeps and completes.
    """
    from itemshot.api import EXIT_STOPPED, EXIT_USAGE
    from itemshot.renderer.output import RunStopped, UnusableOutput, describe_os_error

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status = args.handler(args)
    except UnusableOutput as error:
        _error(str(error))
        return EXIT_USAGE
    except RunStopped as stopped:
        _error(stopped.report())
        return EXIT_STOPPED
    except OSError as error:
        _error(f"{describe_os_error(error)}; files written before it are intact")
        return EXIT_STOPPED
    return int(status or 0)


def _error(message: str) -> None:
    from rich.console import Console
    from rich.markup import escape

    Console(stderr=True).print(f"[red]error:[/red] {escape(message)}")


if __name__ == "__main__":
    sys.exit(main())
