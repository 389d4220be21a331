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
    """Run the `itemshot` command line and return its exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    status = args.handler(args)
    return int(status or 0)


if __name__ == "__main__":
    sys.exit(main())
