"""Progress for long jobs: a rich bar on a terminal, plain lines in a log; an `advance()` callable.

Without a terminal (a log file, CI, `nohup`), a live bar shows nothing for
minutes, so the same counts are printed as plain lines instead: one every
tenth of the work or every `LOG_SECONDS`, whichever comes first, and one at
the end.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

LOG_SECONDS = 10.0  # longest silence between two progress lines in a log
LOG_STEPS = 10  # lines per run at most, besides the time-driven ones


@contextmanager
def progress_bar(
    console: Console, total: int | None, label: str = "rendering", *, hidden: bool = False
) -> Iterator[Callable[[], None]]:
    """Show progress of `total` steps (a bar, or lines without a terminal); yield `advance()`."""
    if not hidden and not console.is_terminal and not console.quiet:
        with progress_lines(console, total, label) as advance:
            yield advance
        return
    progress = Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
        disable=hidden,
        transient=True,
    )
    with progress:
        task = progress.add_task(label, total=total)
        yield lambda: progress.advance(task)


@contextmanager
def progress_lines(
    console: Console,
    total: int | None,
    label: str,
    *,
    every: float = LOG_SECONDS,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[Callable[[], None]]:
    """Yield `advance()`, which prints `label: done/total (pct), rate, elapsed` lines now and then."""
    started = clock()
    step = max(1, (total or 0) // LOG_STEPS)
    state = {"done": 0, "printed": 0, "at": started}

    def line() -> None:
        done, elapsed = state["done"], clock() - started
        share = f"{done}/{total} ({100 * done / total:.0f}%)" if total else f"{done}"
        rate = f", {done / elapsed:.2f}/s" if elapsed > 0 and done else ""
        console.print(f"{label}: {share}{rate}, {elapsed:.0f} s", markup=False, highlight=False)
        state["printed"], state["at"] = done, clock()

    def advance() -> None:
        state["done"] += 1
        if state["done"] - state["printed"] >= step or clock() - state["at"] >= every:
            line()

    yield advance
    if total and state["done"] != state["printed"]:
        line()
