"""Progress bars for long jobs: one rich bar that yields an `advance()` callable."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn


@contextmanager
def progress_bar(
    console: Console, total: int | None, label: str = "rendering", *, hidden: bool = False
) -> Iterator[Callable[[], None]]:
    """Show a transient progress bar of `total` steps; yield the callable that advances it."""
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
