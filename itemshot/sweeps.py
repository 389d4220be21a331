"""Running a planned sweep: render its vision cells, then write the combined manifest.

Planning (design → cells → jobs and text rows) is `itemshot.factorial`'s
job; this module drives the render pipeline over the plan and writes the
manifest with a column per factor and `sweep.json`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from itemshot.executors.base import Executor
from itemshot.factorial.controller import SWEEP_SUMMARY, SweepPlan, manifest_rows, sweep_record
from itemshot.pipeline import RunSettings, RunSummary, run_jobs
from itemshot.renderer.manifest import MANIFEST
from itemshot.renderer.output import atomic_write_json, read_jsonl, write_jsonl
from itemshot.renderer.output_lock import hold_output


@dataclass
class SweepResult:
    """What a sweep did: render counts, text rows, failures, time."""

    render: RunSummary
    rows: int = 0
    text_rows: int = 0
    failed_rows: int = 0
    seconds: float = 0.0
    failures: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """Return the result as a JSON-ready dict."""
        return {
            "rows": self.rows,
            "text_rows": self.text_rows,
            "failed_rows": self.failed_rows,
            "render": self.render.as_dict(),
            "seconds": round(self.seconds, 3),
        }


def run_sweep(
    plan: SweepPlan,
    out: Path,
    settings: RunSettings | None = None,
    on_event: Callable[[dict[str, Any]], None] | None = None,
    *,
    executor: Executor | None = None,
) -> SweepResult:
    """Render the jobs not yet done, then write the combined manifest and the sweep summary.

    The folder is held from rendering to the last write (`FolderBusy` when
    another run holds it).
    """
    with hold_output(out, "sweep"):
        return _run_sweep(plan, out, settings, on_event, executor)


def _run_sweep(
    plan: SweepPlan,
    out: Path,
    settings: RunSettings | None,
    on_event: Callable[[dict[str, Any]], None] | None,
    executor: Executor | None,
) -> SweepResult:
    started = time.perf_counter()
    summary = run_jobs(plan.jobs, out, settings, on_event, executor=executor)
    rendered = {row["job_key"]: row for row in read_jsonl(out / MANIFEST) if row.get("job_key")}
    rows = manifest_rows(plan, rendered, out)
    write_jsonl(out / MANIFEST, rows)
    result = SweepResult(render=summary, rows=len(rows))
    result.text_rows = sum(
        1 for planned in plan.rows if planned.job is None and planned.error is None
    )
    result.failures = [row for row in rows if row.get("status") != "ok"]
    result.failed_rows = len(result.failures)
    result.seconds = time.perf_counter() - started
    atomic_write_json(out / SWEEP_SUMMARY, sweep_record(plan, result.as_dict()))
    return result
