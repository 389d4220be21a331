"""A process pool for OCR work: one tesseract thread per process (`OMP_THREAD_LIMIT=1`)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def _init_worker() -> None:
    os.environ["OMP_THREAD_LIMIT"] = "1"


@contextmanager
def _one_thread() -> Iterator[None]:
    previous = os.environ.get("OMP_THREAD_LIMIT")
    os.environ["OMP_THREAD_LIMIT"] = "1"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("OMP_THREAD_LIMIT", None)
        else:
            os.environ["OMP_THREAD_LIMIT"] = previous


def default_workers() -> int:
    """Return the default number of worker processes: one per available core."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def run_all(
    function: Callable[[T], R],
    tasks: Iterable[T],
    workers: int | None = None,
    on_done: Callable[[], None] | None = None,
) -> list[R]:
    """Return `function(task)` for every task, in task order, run on `workers` processes.

    One worker (or one task) runs in this process, still with one tesseract
    thread per call, so small jobs pay no process start-up.
    """
    todo = list(tasks)
    count = min(workers or default_workers(), len(todo))
    results: list[R | None] = [None] * len(todo)
    if count <= 1:
        with _one_thread():
            for index, task in enumerate(todo):
                results[index] = function(task)
                if on_done:
                    on_done()
        return [r for r in results if r is not None]
    with ProcessPoolExecutor(max_workers=count, initializer=_init_worker) as executor:
        futures = {executor.submit(function, task): i for i, task in enumerate(todo)}
        for future in as_completed(futures):
            results[futures[future]] = future.result()
            if on_done:
                on_done()
    return [r for r in results if r is not None]
