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
from typing import TYPE_CHECKING, Any

from rich.console import Console

from itemshot.executors.base import Executor
from itemshot.factorial.design.controller import (
    SWEEP_SUMMARY,
    SweepPlan,
    manifest_rows,
    sweep_record,
)
from itemshot.outputs import (
    RENDER_FIELDS,
    ManifestRow,
    manifest_path,
    read_manifest,
    with_earlier,
    write_manifest,
)
from itemshot.pipeline import RunSettings, RunSummary, run_jobs
from itemshot.renderer.output import atomic_write_json
from itemshot.renderer.output_lock import hold_output

if TYPE_CHECKING:
    from itemshot.executors.select import ExecutorChoice
    from itemshot.results import SweepRun


@dataclass
class SweepResult:
    """What a sweep did: render counts, text rows, failures, time."""

    render: RunSummary
    rows: int = 0
    text_rows: int = 0
    failed_rows: int = 0
    seconds: float = 0.0
    failures: list[ManifestRow] = field(default_factory=list)

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
    # The rows before this run: the render below rewrites the manifest with its rows only.
    earlier = read_manifest(out) if manifest_path(out).is_file() else []
    summary = run_jobs(plan.jobs, out, settings, on_event, executor=executor)
    # The render rows as the pipeline merged them (verdicts on unchanged images kept).
    current = read_manifest(out)
    rendered = {row.job_key: row.to_json() for row in current if row.job_key}
    rows = manifest_rows(plan, rendered, out)
    # The sweep also owns its factor columns: a level a design no longer has is not kept.
    owns = RENDER_FIELDS | set(plan.design.factor_names)
    write_manifest(out, rows, owns=owns, base=with_earlier(current, earlier))
    result = SweepResult(render=summary, rows=len(rows))
    result.text_rows = sum(
        1 for planned in plan.rows if planned.job is None and planned.error is None
    )
    result.failures = [row for row in rows if row.get("status") != "ok"]
    result.failed_rows = len(result.failures)
    result.seconds = time.perf_counter() - started
    atomic_write_json(out / SWEEP_SUMMARY, sweep_record(plan, result.as_dict()))
    return result


def sweep_design(
    design: str | Path,
    out: str | Path | None = None,
    *,
    dataset: str | Path | None = None,
    limit: int | None = None,
    config: str | None = None,
    split: str | None = None,
    workers: int = 2,
    verify: bool | None = None,
    progress: bool = True,
    executor: ExecutorChoice = None,
    address: str | None = None,
    console: Console | None = None,
) -> SweepRun:
    """Run a factorial design file end to end: plan, check balance, render, write the manifest.

    The design is read and its dataset loaded (`dataset`, `config`, `split`
    and `limit` override its own); the plan's balance report, the confound
    check of the rendered images (`confounds.json`) and the design go into the
    folder beside the manifest. With `verify` (None: the design's
    `verify`), every image is then checked against its source item as its
    condition shows it, and the verdicts go into the manifest.
    """
    from itemshot.executors.select import open_executor
    from itemshot.factorial.design.balance import balance_report
    from itemshot.factorial.design.confounds import CONFOUNDS_FILE, confound_report
    from itemshot.factorial.design.controller import describe_plan, load_items, plan_sweep
    from itemshot.factorial.design.design import load_design, with_dataset
    from itemshot.progress import progress_bar
    from itemshot.renderer.output import atomic_write
    from itemshot.results import SweepRun
    from itemshot.verifying import verify_set

    design_path = Path(design)
    loaded = load_design(design_path)
    if dataset is not None:
        loaded = with_dataset(loaded, dataset)
    items = load_items(loaded, limit, config=config, split=split)
    folder = Path(out) if out is not None else loaded.out or Path("sweeps") / loaded.name
    plan = plan_sweep(loaded, items)
    report = balance_report(loaded.type, loaded.factors, plan.cells, loaded.seed)
    counts = describe_plan(plan)
    console = console or Console(stderr=True, quiet=not progress)
    audit = None
    with (
        hold_output(folder, "sweep"),  # one run per folder, taken before anything is written
        open_executor(executor, address=address, workers=workers) as chosen,
    ):
        with progress_bar(console, counts["render_jobs"], "sweep", hidden=not progress) as step:
            atomic_write(folder / "design.yaml", design_path.read_bytes())
            atomic_write_json(folder / "balance.json", report.as_dict())
            result = run_sweep(
                plan,
                folder,
                RunSettings(workers=max(1, workers)),
                lambda _event: step(),
                executor=chosen,
            )
        # Beside the balance of the plan, the confounds of what was drawn: whether
        # each contrast changed, within an item, anything besides its factor.
        rows = tuple(row.to_json() for row in read_manifest(folder))
        confounds = confound_report(rows, loaded.factors, loaded.reference, loaded.held)
        atomic_write_json(folder / CONFOUNDS_FILE, confounds.as_dict())
        checking = loaded.verify if verify is None else verify
        if checking and result.render.rendered + result.render.skipped > 0:
            audit = verify_set(
                folder,
                items.entries,
                workers=workers,
                progress=progress,
                console=console,
                executor=chosen,
            )
    return SweepRun(
        folder,
        counts,
        len(plan.cells),
        len(plan.inconsistencies),
        report,
        result,
        loaded.name,
        loaded.type,
        rows=tuple(row.to_json() for row in read_manifest(folder)),
        audit=audit,
        confounds=confounds,
    )
