"""Audit a folder of images made elsewhere against a dataset (no layout records)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from itemshot.renderer.adapters import Dataset
from itemshot.renderer.items import Item, ItemError
from itemshot.renderer.output_lock import hold_output
from itemshot.verify.modes.whole_image import audit_image
from itemshot.verify.output_set import AuditSummary, summarise
from itemshot.verify.page.images import load_rgb
from itemshot.verify.pairing import DEFAULT_PATTERN, pair_images
from itemshot.verify.pool import run_all
from itemshot.verify.thresholds import DEFAULT_THRESHOLDS, Thresholds
from itemshot.verify.verdicts import Reason, Verdict, verdict


@dataclass(frozen=True)
class _Task:
    path: Path
    item: Item | None
    name: str
    problem: str
    thresholds: Thresholds


def _audit_task(task: _Task) -> Verdict:
    if task.item is None:
        return verdict(task.name, "", "whole_image", "", [Reason("no_item", "", task.problem)], [])
    try:
        image = load_rgb(task.path)
    except (OSError, ValueError) as error:  # unreadable, or refused by the bounded decoder
        return verdict(
            task.name,
            task.item.id,
            "whole_image",
            "",
            [Reason("unreadable_image", "", str(error))],
            [],
        )
    return audit_image(image, task.item, thresholds=task.thresholds, image_name=task.name)


def audit_images(
    images_dir: Path,
    dataset: Dataset,
    *,
    match: str = "filename",
    pattern: str = DEFAULT_PATTERN,
    out: Path | None = None,
    thresholds: Thresholds | None = None,
    workers: int | None = None,
    on_progress: object = None,
) -> tuple[AuditSummary, list[Verdict]]:
    """Audit every image of a folder against its paired item; write audit.json/html into `out`."""
    thresholds = thresholds or DEFAULT_THRESHOLDS
    started = time.perf_counter()
    report_dir = Path(out) if out is not None else Path.cwd() / f"audit-{images_dir.name}"
    tasks = []
    for path, entry in pair_images(images_dir, dataset, match, pattern):
        name = str(path.resolve())
        if isinstance(entry, ItemError):
            tasks.append(_Task(path, None, name, f"item error: {entry}", thresholds))
        elif entry is None:
            tasks.append(_Task(path, None, name, f"no dataset entry for {path.name}", thresholds))
        else:
            tasks.append(_Task(path, entry, name, "", thresholds))
    verdicts = run_all(_audit_task, tasks, workers, on_progress)  # type: ignore[arg-type]
    with hold_output(report_dir, "audit"):  # one writer per report folder
        summary = summarise(verdicts, report_dir, thresholds, time.perf_counter() - started)
    return summary, verdicts
