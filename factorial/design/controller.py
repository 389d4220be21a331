"""The factorial controller: design → cells → render jobs and text rows → one manifest.

Vision cells become render jobs for the Chromium pipeline; blind and standard
cells need no render and become rows carrying the prompt text and the paths of
their figures (written once, content-addressed, under OUT/figures/). Identical
cells (same key) are kept once. The combined manifest lists every row in a
stable order: item file order, then condition order in the design.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from itemshot.factorial.design.conditions import Cell, expand
from itemshot.factorial.design.design import PRESENTATION_FACTORS, TEXT_FORMATS, Design
from itemshot.factorial.design.option_sets import (
    Inconsistency,
    answer_check,
    describe,
    inconsistencies,
    option_set,
    with_options,
)
from itemshot.factorial.design.sweep_rows import figure_fields, prompt_for, text_row
from itemshot.outputs import ManifestRow, as_row
from itemshot.renderer.adapters import ColumnMapping, Dataset, load_dataset
from itemshot.renderer.items import Item, ItemError
from itemshot.renderer.jobs import Content, Job, JobRequest, PlanFailure, make_job
from itemshot.renderer.presentation import PresentationSpec
from itemshot.renderer.seeds import stable_hash

SWEEP_SUMMARY = "sweep.json"

CONTENT_BY_FORMAT = {
    "vision": Content(),
    "vision_placeholder": Content(figures="placeholder"),
    "vision_text_only": Content(figures="omit"),
    "vision_question_only": Content(options=False),
}


@dataclass(frozen=True)
class PlannedRow:
    """One manifest row to produce: a render job, a text row, or a failure."""

    key: str
    item: Item
    condition: dict[str, Any]
    extra: dict[str, Any]
    job: Job | None = None
    error: ItemError | None = None


@dataclass(frozen=True)
class SweepPlan:
    """Everything a sweep will write, before anything is rendered."""

    design: Design
    rows: tuple[PlannedRow, ...]
    cells: tuple[Cell, ...]
    load_errors: tuple[ItemError, ...]
    inconsistencies: tuple[Inconsistency, ...]

    @property
    def jobs(self) -> list[Job]:
        """Return the render jobs, in row order."""
        return [row.job for row in self.rows if row.job is not None]


def load_items(
    design: Design, limit: int | None = None, *, config: str | None = None, split: str | None = None
) -> Dataset:
    """Read the design's dataset (first `limit` rows; `config`/`split` override the design's)."""
    spec = design.dataset
    mapping = ColumnMapping.from_pairs(dict(spec.mapping)) if spec.mapping else None
    return load_dataset(
        spec.path,
        format=spec.format,
        mapping=mapping,
        missing_images=spec.missing_images,
        limit=limit if limit is not None else spec.limit,
        config=config if config is not None else spec.config,
        split=split if split is not None else spec.split,
    )


def plan_sweep(design: Design, dataset: Dataset) -> SweepPlan:
    """Return the rows of a sweep: option sets applied, jobs keyed, duplicates dropped."""
    cells = expand(design, dataset.items)
    rows: list[PlannedRow] = []
    seen: set[str] = set()
    for cell in cells:
        row = _plan_cell(design, cell)
        if row.key not in seen:
            seen.add(row.key)
            rows.append(row)
    found = [problem for item in dataset.items for problem in inconsistencies(item)]
    return SweepPlan(design, tuple(rows), tuple(cells), tuple(dataset.errors), tuple(found))


def _plan_cell(design: Design, cell: Cell) -> PlannedRow:
    fmt = cell.condition["format"]
    chosen = option_set(cell.item, cell.condition["n_options"], design.seed)
    item = with_options(cell.item, chosen)
    factors = {name: cell.condition.get(name) for name in design.factor_names}
    extra: dict[str, Any] = {
        **factors,
        **describe(chosen),
        "answer_check": answer_check(cell.item, chosen),
        "group": cell.group,
    }
    if fmt in TEXT_FORMATS:
        # Presentation factors do not apply to text rows: they are left out of the
        # condition (and so of the key), and identical text rows are kept once.
        condition = {"format": fmt, "n_options": cell.condition["n_options"]}
        extra.update({name: None for name in design.factor_names if name in PRESENTATION_FACTORS})
        key = stable_hash("text-row", item.content_hash(), condition)
        return PlannedRow(key, item, condition, extra)
    presentation = {
        **design.presentation,
        **{k: v for k, v in cell.condition.items() if k in PRESENTATION_FACTORS},
    }
    request = JobRequest(
        item, PresentationSpec(**presentation), dict(cell.condition), CONTENT_BY_FORMAT[fmt]
    )
    try:
        job = make_job(request, design.seed)
    except ItemError as error:
        key = stable_hash("failed", item.content_hash(), cell.condition)
        return PlannedRow(key, item, dict(cell.condition), extra, error=error)
    return PlannedRow(job.key, item, dict(cell.condition), extra, job=job)


def manifest_rows(
    plan: SweepPlan, rendered: dict[str, dict[str, Any]], out: Path
) -> list[ManifestRow]:
    """Return the sweep's combined manifest: load errors, then every planned row in order.

    `rendered` maps job keys to the rows the render pipeline wrote; text rows and
    their figures are written under `out` here.
    """
    rows = [ManifestRow.for_load_error(error) for error in plan.load_errors]
    rows += [_finish_row(planned, rendered, out) for planned in plan.rows]
    return rows


def sweep_record(plan: SweepPlan, result: dict[str, Any]) -> dict[str, Any]:
    """Return the JSON record of a finished sweep (`sweep.json`)."""
    return {
        "design": plan.design.name,
        "design_type": plan.design.type,
        # The dataset read, which `--dataset` may have put in place of the design's.
        "dataset": str(plan.design.dataset.path),
        "factors": {name: list(levels) for name, levels in plan.design.factors},
        "cells": len(plan.cells),
        **result,
        "load_errors": [error.as_record() for error in plan.load_errors],
        "inconsistencies": [problem.as_record() for problem in plan.inconsistencies],
    }


def _finish_row(planned: PlannedRow, rendered: dict[str, dict[str, Any]], out: Path) -> ManifestRow:
    fmt = planned.condition["format"]
    if planned.error is not None:
        failure = PlanFailure(planned.item.id, planned.condition, planned.error)
        row = ManifestRow.for_plan_failure(failure)
        return row.with_fields(**{"job_key": planned.key, **planned.extra})
    if planned.job is None:
        return as_row(text_row(planned.item, planned.key, planned.condition, planned.extra, out))
    row = dict(rendered.get(planned.key) or {"item_id": planned.item.id, "status": "failed"})
    row.update(planned.extra)
    row["format"] = fmt
    row.update(figure_fields(out, planned.item, fmt))
    row["prompt"] = prompt_for(
        fmt, planned.item.question, planned.item.options, planned.item.language
    )
    return as_row(row)


def describe_plan(plan: SweepPlan) -> dict[str, int]:
    """Return row counts by kind: render jobs, text rows, failures, load errors."""
    return {
        "render_jobs": len(plan.jobs),
        "text_rows": sum(1 for r in plan.rows if r.job is None and r.error is None),
        "plan_failures": sum(1 for r in plan.rows if r.error is not None),
        "load_errors": len(plan.load_errors),
    }
