"""The `itemshot` command: one entry point, one subcommand per stage."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# Each stage package contributes its subcommands through a `commands` module
# exposing `register(subparsers)`. Stages that are not installed are skipped.
COMMAND_MODULES = (
    "renderer.commands",
    "verify.commands",
    "degradations.commands",
    "factorial.commands",
    "factorial.sweep_commands",
)


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser with every stage's subcommands registered."""
    parser = argparse.ArgumentParser(
        prog="itemshot",
        description="Render MCQ datasets as vision-only images, audit them, and analyse sweeps.",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module_name in COMMAND_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name != module_name:
                raise
            continue
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `itemshot` command line and return its exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    status = args.handler(args)
    return int(status or 0)


if __name__ == "__main__":
    sys.exit(main())
