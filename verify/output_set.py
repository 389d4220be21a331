"""Verify a whole output set: every rendered image against its item, verdicts into the manifest."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from itemshot.outputs import (
    VERDICT_FIELDS,
    VERDICT_OWNER,
    ManifestRow,
    file_sha256,
    read_manifest,
    write_manifest,
)
from itemshot.renderer.adapters.figures import FigureProblem, decode_figure
from itemshot.renderer.items import LETTERS, Item, relative_to_root
from itemshot.renderer.output import atomic_write_json
from itemshot.renderer.output_lock import hold_output
from itemshot.renderer.records import Layout
from itemshot.verify.modes.regions import verify_image
from itemshot.verify.page.images import load_rgb
from itemshot.verify.pool import run_all
from itemshot.verify.report import write_reports
from itemshot.verify.thresholds import DEFAULT_THRESHOLDS, Thresholds
from itemshot.verify.verdicts import Reason, Verdict, verdict


@dataclass(frozen=True)
class AuditSummary:
    """What a verification run found: counts, failures by reason, where the reports are."""

    total: int
    passed: int
    failed: int
    seconds: float
    by_reason: dict[str, int] = field(default_factory=dict)
    report_html: str = ""
    report_json: str = ""

    @property
    def pass_rate(self) -> float:
        """Return the share of verified images that passed."""
        return self.passed / self.total if self.total else 1.0

    @property
    def images_per_second(self) -> float:
        """Return verified images per second of wall time."""
        return self.total / self.seconds if self.seconds > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        """Return the summary as a JSON-ready dict."""
        return {
            "total": self.total,
            "passed": self.passed,
            "failed": self.failed,
            "pass_rate": round(self.pass_rate, 4),
            "seconds": round(self.seconds, 3),
            "images_per_second": round(self.images_per_second, 3),
            "by_reason": dict(sorted(self.by_reason.items())),
            "report_html": self.report_html,
            "report_json": self.report_json,
        }


@dataclass(frozen=True)
class _Task:
    image: Path
    sidecar: Path
    item: Item
    name: str
    thresholds: Thresholds


def item_from_row(row: Mapping[str, Any], out: Path | None = None) -> Item:
    """Rebuild an item from its manifest row, with the figure files the set carries."""
    answer = row.get("answer") or "A"
    figures = {}
    for number, path in (row.get("figure_files") or {}).items():
        root = out or Path(".")
        source = root / path
        if relative_to_root(source, root) and source.is_file():
            try:
                figures[int(number)] = decode_figure(int(number), source.read_bytes(), path)
            except FigureProblem:
                continue  # an unreadable copy: the figure box is then only checked for content
    return Item(
        figures=figures,
        id=str(row["item_id"]),
        question=row.get("question", ""),
        options=tuple(row.get("options", ())),
        answer=LETTERS.index(answer) if answer in LETTERS else 0,
        language=row.get("language") or "en",
        subject=row.get("subject") or "",
    )


def _verify_task(task: _Task) -> Verdict:
    try:
        record = json.loads(task.sidecar.read_text(encoding="utf-8"))
        layout = Layout.from_dict(record["layout"])
    except (OSError, ValueError, KeyError, TypeError) as error:
        reason = Reason("image_mismatch", "", f"layout record: {type(error).__name__}: {error}")
        return verdict(task.name, task.item.id, "regions", "", [_short(reason)], [])
    try:
        image = load_rgb(task.image)
    except (OSError, ValueError) as error:
        reason = Reason("unreadable_image", "", f"{type(error).__name__}: {error}")
        return verdict(task.name, task.item.id, "regions", "", [_short(reason)], [])
    try:
        return verify_image(
            image,
            task.item,
            layout,
            thresholds=task.thresholds,
            render=record.get("render"),
            image_name=task.name,
        )
    except Exception as error:  # one image's failure is its verdict, never the run's end
        reason = Reason("verify_error", "", f"{type(error).__name__}: {error}")
        return verdict(task.name, task.item.id, "regions", "", [_short(reason)], [])


def _short(reason: Reason) -> Reason:
    return Reason(reason.code, reason.region, reason.detail[:200], reason.tokens)


def invalidate_verdicts(out: Path, rows: list[ManifestRow], indices: list[int]) -> None:
    """Remove the earlier verdicts of the rows about to be verified (and the old reports).

    Written before any image is verified, so that an interrupted or failed
    verification leaves those rows without a verdict, never an earlier `pass`
    for pixels that may since have changed. Rows this run does not verify
    (images without a layout record, audited whole) keep theirs.
    """
    stale = [i for i in indices if any(key in rows[i] for key in VERDICT_FIELDS)]
    for index in stale:
        rows[index] = rows[index].without_verdict()
    if stale:
        write_manifest(out, rows, owns=VERDICT_OWNER)
    for report in ("audit.json", "audit.html"):
        (out / report).unlink(missing_ok=True)


def verify_output_set(
    out: Path,
    *,
    items: Iterable[Item] | None = None,
    thresholds: Thresholds | None = None,
    workers: int | None = None,
    on_progress: Callable[[], None] | None = None,
    report: bool = True,
    map_tasks: Callable[..., list[Any]] | None = None,
    item_for: Callable[[Mapping[str, Any]], Item] | None = None,
) -> AuditSummary:
    """Verify every rendered image of an output set; write verdicts, audit.json and audit.html.

    Each manifest row with `status == "ok"` gets `verdict` ("pass"/"fail") and
    `verify` (reasons, per-region scores, thresholds); the manifest is rewritten
    atomically. `items` (the dataset's items) lets figures be compared with
    their sources; without them a figure box only has to be non-empty.
    `map_tasks` runs the per-image checks (default: `pool.run_all`, this
    machine's processes); an executor passes its own, with the same contract.
    The folder is held while its manifest is read and rewritten (`FolderBusy`
    when another run is writing into it). `item_for` (a row → the item its
    image must show), when given, replaces `items` and the rows' own text.
    """
    out = Path(out)
    thresholds = thresholds or DEFAULT_THRESHOLDS
    started = time.perf_counter()
    with hold_output(out, "verify", create=False):
        rows = read_manifest(out)
        by_id = {item.id: item for item in items or ()}
        tasks: list[_Task] = []
        indices: list[int] = []
        for index, row in enumerate(rows):
            if row.get("status") != "ok" or not row.get("image") or not row.get("layout"):
                continue
            if item_for is not None:
                item = item_for(row)
            else:
                item = by_id.get(str(row["item_id"])) or item_from_row(row, out)
            tasks.append(
                _Task(out / row["image"], out / row["layout"], item, row["image"], thresholds)
            )
            indices.append(index)
        invalidate_verdicts(out, rows, indices)
        # The bytes each verdict is about: a later run keeps it only while they are the same.
        digests = [_digest(task.image) for task in tasks]
        verdicts = (map_tasks or run_all)(_verify_task, tasks, workers, on_progress)
        for index, result, digest in zip(indices, verdicts, digests, strict=True):
            record = verify_field(result, thresholds)
            rows[index] = rows[index].with_verdict(result.passed, record, digest)
        write_manifest(out, rows, owns=VERDICT_OWNER)
        seconds = time.perf_counter() - started
        return summarise(verdicts, out, thresholds, seconds, rows=rows, report=report)


def _digest(image: Path) -> str | None:
    try:
        return file_sha256(image)
    except OSError:
        return None  # unreadable: its verdict says so, and is bound to no bytes


def verify_field(result: Verdict, thresholds: Thresholds) -> dict[str, Any]:
    """Return the `verify` manifest field of a verdict."""
    record = result.as_dict()
    return {
        "passed": result.passed,
        "reasons": record["reasons"],
        "codes": result.codes,
        "scores": {r["name"]: r["score"] for r in record["regions"]},
        "mode": result.mode,
        "lang": result.lang,
        "thresholds": thresholds.as_dict(),
    }


def summarise(
    verdicts: list[Verdict],
    out: Path,
    thresholds: Thresholds,
    seconds: float,
    *,
    rows: list[ManifestRow] | None = None,
    sources: dict[str, dict[str, Any]] | None = None,
    report: bool = True,
) -> AuditSummary:
    """Count verdicts by reason, write audit.json and audit.html into `out`, return the summary."""
    counts: Counter[str] = Counter()
    for result in verdicts:
        counts.update(result.codes)
    passed = sum(1 for v in verdicts if v.passed)
    summary = AuditSummary(
        total=len(verdicts),
        passed=passed,
        failed=len(verdicts) - passed,
        seconds=seconds,
        by_reason=dict(counts),
        report_html=str(out / "audit.html") if report else "",
        report_json=str(out / "audit.json") if report else "",
    )
    if report:
        write_reports(
            out, verdicts, summary.as_dict(), thresholds, sources=sources, image_root=out.resolve()
        )
    return summary


def write_summary_json(path: Path, summary: AuditSummary) -> None:
    """Write a summary as JSON atomically."""
    atomic_write_json(path, summary.as_dict())
