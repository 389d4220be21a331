"""A process pool for OCR work: one tesseract thread per process (`OMP_THREAD_LIMIT=1`)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _init_worker(parent: int) -> None:
    """Set up one OCR worker: one tesseract thread, and death together with the parent.

    A worker outlives a killed parent otherwise (re-parented to init, waiting
    on its task queue forever). The kernel sends it SIGTERM when the parent
    dies; the handler kills the tesseract it may be waiting on, then exits.
    """
    os.environ["OMP_THREAD_LIMIT"] = "1"
    signal.signal(signal.SIGTERM, _end_worker)
    # Ctrl-C reaches the whole process group: the parent alone handles it (it drops
    # the queued tasks and reports the interrupt); a worker finishes its task and
    # leaves with the pool, instead of dying with a KeyboardInterrupt traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(OSError, AttributeError):  # Linux only; elsewhere nothing changes
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # the parent died before the request took effect
        _end_worker(signal.SIGTERM, None)


def _end_worker(_signal: int, _frame: object) -> None:
    """Kill this worker's own children (tesseract), then leave at once."""
    me = str(os.getpid())
    with contextlib.suppress(OSError):
        for entry in os.listdir("/proc"):
            if entry.isdigit() and _parent_of(entry) == me:
                with contextlib.suppress(OSError):
                    os.kill(int(entry), signal.SIGKILL)
    os._exit(1)


def _parent_of(pid: str) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as handle:
            return handle.read().rsplit(")", 1)[1].split()[1]
    except (OSError, IndexError):
        return None


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
    with ProcessPoolExecutor(
        max_workers=count, initializer=_init_worker, initargs=(os.getpid(),)
    ) as executor:
        futures = {executor.submit(function, task): i for i, task in enumerate(todo)}
        try:
            for future in as_completed(futures):
                results[futures[future]] = future.result()
                if on_done:
                    on_done()
        except BaseException:
            # Interrupted (or a task failed): drop the tasks not started, so leaving
            # the pool waits for the running ones only, not for the whole queue.
            executor.shutdown(wait=False, cancel_futures=True)
            raise
    return [r for r in results if r is not None]
