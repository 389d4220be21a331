"""The `itemshot` command: one entry point, one subcommand per stage."""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

# One module per group of subcommands, each exposing `register(subparsers)`.
# They import the stages they drive only inside their handlers, so that
# `itemshot --help` answers without loading OpenCV, SciPy or google-genai.
COMMAND_MODULES = (
    "itemshot.cli.render",
    "itemshot.cli.verify",
    "itemshot.cli.capture",
    "itemshot.cli.analysis",
    "itemshot.cli.plan",
    "itemshot.cli.sweep",
    "itemshot.cli.review",
    "itemshot.cli.certify",
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
    never a traceback: an unusable `--out`, or one another run is writing
    into, is a usage error (2); a write the machine refuses part-way (disk
    full, permissions) stops the run (5) after saying what was written, which
    a re-run keeps and completes. SIGINT (Ctrl-C) and SIGTERM end a run the
    same way: the finished jobs go in the manifest, one message says so, and
    the status is 128 + the signal's number (130, 143), as a shell reports it.
    """
    from itemshot.api import EXIT_STOPPED, EXIT_USAGE
    from itemshot.renderer.output import (
        RunInterrupted,
        RunStopped,
        UnusableOutput,
        describe_os_error,
    )

    parser = build_parser()
    args = parser.parse_args(argv)
    with _signals_as_interrupts() as received:
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
        except RunInterrupted as interrupted:
            _error(interrupted.report())
            return 128 + received[-1]
        except KeyboardInterrupt:  # outside a run's writing (loading, verifying, exporting)
            _error(
                "interrupted; every file written before it is whole: "
                "run the same command again to finish"
            )
            return 128 + received[-1]
    return int(status or 0)


@contextmanager
def _signals_as_interrupts() -> Iterator[list[int]]:
    """Turn SIGTERM, like SIGINT, into a KeyboardInterrupt for the block; yield the signals seen.

    A run then stops the same way whichever of the two ends it: its
    executor closes, the finished jobs are written into the manifest, and no
    traceback is printed. The list starts with SIGINT (a KeyboardInterrupt
    raised by other means reads as Ctrl-C). Handlers are installed only in
    the main thread (the only one Python lets set them) and restored after.
    """
    received = [int(signal.SIGINT)]
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    def interrupt(signum: int, _frame: object) -> None:
        received.append(signum)
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield received
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _error(message: str) -> None:
    from rich.console import Console
    from rich.markup import escape

    # One line whatever the width: a log or a script reads the whole message on it.
    Console(stderr=True).print(f"[red]error:[/red] {escape(message)}", soft_wrap=True)


if __name__ == "__main__":
    sys.exit(main())
