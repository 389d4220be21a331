"""Measurement helpers for benchmarks: process-tree memory sampling."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path


def _children(pid: int) -> list[int]:
    kids: list[int] = []
    task_dir = Path(f"/proc/{pid}/task")
    try:
        tasks = list(task_dir.iterdir())
    except OSError:  # the process ended meanwhile
        return kids
    for task in tasks:
        try:
            kids += [int(k) for k in (task / "children").read_text().split()]
        except OSError:
            continue
    return kids


def _pss_bytes(pid: int) -> int:
    """Return a process's proportional set size: shared pages split among their users."""
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1]) * 1024
    return 0


def tree_rss_bytes(pid: int | None = None) -> int:
    """Return the summed memory (PSS, so shared pages count once) of a process tree."""
    pending, total = [pid or os.getpid()], 0
    while pending:
        current = pending.pop()
        try:
            total += _pss_bytes(current)
        except (OSError, IndexError, ValueError):
            continue
        pending += _children(current)
    return total


class PeakSamples:
    """Context manager calling `sample` (name → bytes) every `interval` s; `.peaks` per name."""

    def __init__(self, sample: Callable[[], dict[str, int]], interval: float = 0.1) -> None:
        self.sample = sample
        self.interval = interval
        self.peaks: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _take(self) -> None:
        for name, value in self.sample().items():
            self.peaks[name] = max(self.peaks.get(name, 0), value)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._take()
            self._stop.wait(self.interval)

    def __enter__(self) -> PeakSamples:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._take()


class PeakRss(PeakSamples):
    """Context manager sampling the process tree's RSS every `interval` seconds; `.peak` in bytes."""

    def __init__(self, interval: float = 0.1) -> None:
        super().__init__(lambda: {"tree": tree_rss_bytes()}, interval)

    @property
    def peak(self) -> int:
        """Return the highest memory of the process tree seen so far, in bytes."""
        return self.peaks.get("tree", 0)


_TICKS = os.sysconf("SC_CLK_TCK")


def _process_kind(pid: int) -> str | None:
    """Return a short name for a process of the tree: python, driver, or Chromium's --type."""
    try:
        # Chromium rewrites its children's command lines into one space-separated string.
        words = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split()
    except OSError:
        return None
    for word in words:
        if word.startswith("--type="):
            return word.removeprefix("--type=")
    command = " ".join(words)
    if "chrom" in command:
        return "browser"
    if "node" in command or "playwright" in command:
        return "driver"
    return None


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS  # utime + stime


def cpu_by_process() -> dict[str, float]:
    """Return CPU seconds used so far by this process (`python`) and its descendants, by kind."""
    totals = {"python": sum(os.times()[:2])}
    pending = _children(os.getpid())
    while pending:
        pid = pending.pop()
        kind = _process_kind(pid)
        try:
            if kind:
                totals[kind] = totals.get(kind, 0.0) + _cpu_seconds(pid)
        except (OSError, IndexError, ValueError):
            continue
        pending += _children(pid)
    return totals


def cpu_per_item(before: dict[str, float], after: dict[str, float], items: int) -> dict[str, float]:
    """Return milliseconds of CPU per item, by process kind, between two `cpu_by_process` calls."""
    return {
        kind: (after[kind] - before.get(kind, 0.0)) * 1000 / items
        for kind in after
        if after[kind] - before.get(kind, 0.0) > 0
    }
