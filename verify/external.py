"""Audit a folder of images made elsewhere against a dataset (no layout records)."""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from pathlib import Path

from renderer.adapters import Dataset
from renderer.items import Item, ItemError
from verify.images import load_rgb
from verify.output_set import AuditSummary, summarise
from verify.pool import run_all
from verify.thresholds import DEFAULT_THRESHOLDS, Thresholds
from verify.verdicts import Reason, Verdict, verdict
from verify.whole_image import audit_image

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp")
MATCH_MODES = ("filename", "order", "manifest")
DEFAULT_PATTERN = "page_{n}"


def natural_key(path: Path) -> list[object]:
    """Return a sort key that orders page_2 before page_10."""
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", path.name)]


def image_files(images_dir: Path) -> list[Path]:
    """Return the image files of a folder in natural order."""
    files = [p for p in images_dir.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES]
    return sorted(files, key=natural_key)


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    escaped = re.escape(pattern)
    escaped = escaped.replace(re.escape("{n}"), r"(?P<n>\d+)").replace(
        re.escape("{id}"), r"(?P<id>.+)"
    )
    return re.compile(f"^{escaped}$")


def pair_images(
    images_dir: Path,
    dataset: Dataset,
    match: str = "filename",
    pattern: str = DEFAULT_PATTERN,
) -> list[tuple[Path, Item | ItemError | None]]:
    """Pair each image with its dataset entry.

    - `filename`: the stem matches `pattern`; `{n}` is the 1-based line (entry)
      number, `{id}` the item id (e.g. `page_{n}` for the MMMU-Pro tool's pages).
    - `order`: the k-th image in natural order is the k-th entry.
    - `manifest`: `manifest.jsonl` in the folder maps `image` to `item_id`.
    """
    files = image_files(images_dir)
    entries = list(dataset.entries)
    by_id = {e.id: e for e in entries if isinstance(e, Item)}
    if match == "order":
        return [(f, entries[i] if i < len(entries) else None) for i, f in enumerate(files)]
    if match == "manifest":
        manifest = images_dir / "manifest.jsonl"
        rows = [
            json.loads(line)
            for line in manifest.read_text(encoding="utf-8").splitlines()
            if line.strip()
        ]
        pairs = []
        for row in rows:
            image = images_dir / str(row.get("image", ""))
            if image.is_file():
                pairs.append((image, by_id.get(str(row.get("item_id")))))
        return pairs
    if match != "filename":
        raise ValueError(f"match must be one of {', '.join(MATCH_MODES)}")
    regex = _pattern_regex(pattern)
    pairs: list[tuple[Path, Item | ItemError | None]] = []
    for file in files:
        found = regex.match(file.stem)
        entry: Item | ItemError | None = None
        if found and "n" in found.groupdict() and found.group("n"):
            index = int(found.group("n")) - 1
            entry = entries[index] if 0 <= index < len(entries) else None
        elif found and found.groupdict().get("id"):
            entry = by_id.get(found.group("id"))
        pairs.append((file, entry))
    return pairs


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
    except OSError as error:
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
    summary = summarise(verdicts, report_dir, thresholds, time.perf_counter() - started)
    return summary, verdicts
