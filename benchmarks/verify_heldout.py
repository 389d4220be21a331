"""Out-of-sample verifier figures: false alarms and meaning-defect recall on MMMU-Pro mix items.

Takes the declared tuning or held-out set (`verify_split.py`) of the 1,730
MMMU-Pro mix items (figures as placeholders: the mix file ships without its
images) and renders with the real Chromium pipeline:

- every item once, in a scene and font style drawn from its job seed (clean);
- the first `--capture-items` items through light and medium captures of
  every preset, `--captures-per-item` preset × severity cells each (rotated,
  so every cell gets as many);
- one-defect images: the item-side edits of `tests.item_edits` (a meaning
  word changed, a negation dropped, a digit inside a formula changed, a unit
  prefix changed) rendered with the original's seed, scene, font and capture,
  and the pixel defects `options_swapped` and `option_removed` of
  `tests.defects` (on a capture: made on its clean page, captured again with
  the same record). Clean renders get up to `--per-kind` images of each kind;
  each capture gets one defect, the kind rotated, up to `--capture-per-kind`
  of each kind.

Every image is verified against the ORIGINAL item in region mode (with its
layout record) and in whole-image mode (no layout record). A clean or
captured image the verifier rejects is read by the independent reader of
`verify_agreement.py` (PP-OCRv6 small, whole page): a rejection the reader
reads is a false alarm, one it does not read is an illegible image and left
out of the false-alarm rate (`--read all` reads the passed images too).

Prints, per mode: the clean pass rate and false-alarm rate per face (font
style), scene and language, and per capture preset × severity, the worst
cell beside the average; the recall per defect kind with its worst face and
capture cell; every false alarm with its image path and reasons. Writes every
figure and verdict to `--json` (default: `<out>/verify-heldout-<set>.json`).

    .venv/bin/python benchmarks/verify_heldout.py --set tuning --out /tmp/heldout-tuning
    .venv/bin/python benchmarks/verify_heldout.py --set tuning --out /tmp/heldout-tuning \\
        --kinds clean,word_changed --modes region --limit 50     # a quick re-check

`--out` keeps the renders, pixel defects and the reader's verdicts: a second
run only verifies. Verdicts are cached too, under a fingerprint of the
verifier's source (`verify/`): a run cut short resumes where it stopped, and
any change to the verifier verifies everything again (`--reverify` forces
it). `--limit N` takes the set's first N items (its captures and defects are
theirs); `--kinds` and `--modes` pick what is verified. Tune only on
`--set tuning`; the held-out figures are the ones to report.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import random
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402
from verify_agreement import readable  # noqa: E402
from verify_split import (  # noqa: E402
    MIX,
    RERENDERS,
    SEED,
    final_ids,
    fresh_ids,
    held_out_ids,
    job_seed,
    last_ids,
    reseeded_ids,
    tuning_ids,
    tuning_wide_ids,
)

from itemshot.degradations import replay  # noqa: E402
from itemshot.degradations.presets import PRESETS  # noqa: E402
from itemshot.pipeline import RunSettings, run_jobs  # noqa: E402
from itemshot.renderer.adapters import load_dataset  # noqa: E402
from itemshot.renderer.items import IMAGE_TAG, Item, ItemError  # noqa: E402
from itemshot.renderer.jobs import Job, JobRequest, make_job  # noqa: E402
from itemshot.renderer.output import read_jsonl  # noqa: E402
from itemshot.renderer.presentation import PresentationSpec  # noqa: E402
from itemshot.renderer.records import Layout, Region  # noqa: E402
from itemshot.verify import audit_image, verify_image  # noqa: E402
from itemshot.verify.page.images import load_rgb  # noqa: E402
from itemshot.verify.pool import run_all  # noqa: E402
from tests import defects  # noqa: E402
from tests.item_edits import EDIT_KINDS  # noqa: E402

SEVERITIES = ("light", "medium")
CELLS = tuple(f"{preset}/{severity}" for preset in PRESETS for severity in SEVERITIES)
CLEAN = "clean"
PIXEL_KINDS = ("options_swapped", "option_removed")
DEFECT_KINDS = (*EDIT_KINDS, *PIXEL_KINDS)
MODES = ("region", "whole")
READINGS = "independent-reader.json"  # the reader's verdicts per image, kept with the renders
FAILED = "failed-renders.json"  # manifest rows of the renders that failed, by image
PIXELS = "pixel-defects.json"
CHUNK = 48  # verifications per pool round: the cache is written after each  # pixel defects made: "kind|source image" -> image (or null)


@dataclass(frozen=True)
class Task:
    """One image to verify: its file, its layout record, the item it is checked against, its look."""

    image: str  # relative to the render folder
    sidecar: str  # its layout record (a pixel defect's: that of the render it was made from)
    item: Item  # the original item: what the image must show
    kind: str  # "clean" or a defect kind
    scene: str
    font: str
    capture: str  # "clean" or "preset/severity"
    edit: str = ""  # what the defect changed


# The declared sets (`verify_split.py`), by the name `--set` takes.
SETS: dict[str, Callable[[], list[str]]] = {
    "tuning": tuning_ids,
    "held-out": held_out_ids,
    "fresh": fresh_ids,
    "last": last_ids,
    "final": final_ids,
    "reseeded": reseeded_ids,
    "tuning-wide": tuning_wide_ids,
    **{name: reseeded_ids for name in RERENDERS},  # the same ids, each set its own job seed
}


def _items(which: str, limit: int | None) -> tuple[list[Item], list[str]]:
    """Return the set's loadable items in the set's order, and the ids that would not load."""
    ids = SETS[which]()
    dataset = load_dataset(MIX, missing_images="placeholder")
    loaded = {item.id: item for item in dataset.items}
    refused = [i for i in ids if i not in loaded]
    chosen = [loaded[i] for i in ids if i in loaded]
    return chosen[:limit] if limit else chosen, refused


def _spec(cell: str = CLEAN) -> PresentationSpec:
    if cell == CLEAN:
        return PresentationSpec(scene="random", font_style="random")
    preset, severity = cell.split("/")
    return PresentationSpec(scene="random", font_style="random", capture=preset, severity=severity)


def _text_options(item: Item) -> int:
    return sum(1 for o in item.options if o.strip() and not IMAGE_TAG.search(o))


@dataclass(frozen=True)
class Planned:
    """A render the suite needs: its job, the original item, the kind, the capture cell, the edit."""

    job: Job
    item: Item
    kind: str
    capture: str
    edit: str = ""


def _plan(
    items: list[Item], capture_items: int, per_item: int, seed: int
) -> tuple[list[Planned], list[tuple]]:
    """Return the renders (clean, captures, item-side edits) and the pixel defects to make.

    A pixel defect is (kind, index of its source render in the returned list).
    `seed` is the jobs' seed: it draws their scenes, fonts, captures and edits.
    """
    planned: list[Planned] = []
    pixels: list[tuple[str, int]] = []

    def add(request: JobRequest, original: Item, kind: str, cell: str, edit: str = "") -> None:
        try:
            planned.append(Planned(make_job(request, seed), original, kind, cell, edit))
        except ItemError as error:  # an edit the item model refuses is no defect of this kind
            print(f"  not planned: {original.id} {kind}: {error}")

    for item in items:
        request = JobRequest(item, _spec())
        add(request, item, CLEAN, CLEAN)
        source = len(planned) - 1
        for kind in EDIT_KINDS:
            made = defects.edited_request(request, kind, seed)
            if made is not None:
                add(made[0], item, kind, CLEAN, made[1].describe())
        pixels += [(kind, source) for kind in PIXEL_KINDS if _text_options(item) >= 2]
    number = 0
    for index, item in enumerate(items[:capture_items]):
        for j in range(min(per_item, len(CELLS))):
            cell = CELLS[(index + j) % len(CELLS)]
            request = JobRequest(item, _spec(cell))
            add(request, item, CLEAN, cell)
            source = len(planned) - 1
            # One defect per capture, its kind rotated; the next kind when an item has none.
            for turn in range(len(DEFECT_KINDS)):
                kind = DEFECT_KINDS[(number + turn) % len(DEFECT_KINDS)]
                if kind in PIXEL_KINDS:
                    if _text_options(item) >= 2:
                        pixels.append((kind, source))
                        break
                    continue
                made = defects.edited_request(request, kind, seed)
                if made is not None:
                    add(made[0], item, kind, cell, made[1].describe())
                    break
            number += 1
    return planned, pixels


def _render(planned: list[Planned], renders: Path, workers: int) -> dict[str, dict]:
    """Render every planned job not yet on disk; return the manifest rows by image.

    A job that failed before (a render failure such as `raw_latex`) is not
    tried again: its row is kept in `FAILED` beside the renders.
    """
    failed_path = renders / FAILED
    failed = json.loads(failed_path.read_text()) if failed_path.is_file() else {}
    jobs = [
        j for j in {p.job.key: p.job for p in planned}.values() if _stem(j.image_path) not in failed
    ]
    todo = sum(1 for j in jobs if not (renders / j.sidecar_path).is_file())
    started = time.perf_counter()
    # All jobs, not only the missing ones: the run skips those done and lists every one.
    summary = run_jobs(jobs, renders, RunSettings(workers=workers, pages_per_worker=2))
    print(
        f"{len(jobs)} pages: rendered {summary.rendered} of {todo} missing in "
        f"{time.perf_counter() - started:.0f} s (failed {summary.failed}: "
        f"{dict(summary.failures)}; {len(failed)} failed before, not retried)"
    )
    # By stem: a capture's image is a JPEG where the job names a PNG. A failed render has
    # no image: its row is found by its job.
    planned_at = {j.key: j.image_path for j in jobs}
    rows = {
        _stem(r["image"] or planned_at[r["job_key"]]): r
        for r in read_jsonl(renders / "manifest.jsonl")
    }
    failed.update({stem: row for stem, row in rows.items() if row["status"] != "ok"})
    failed_path.write_text(json.dumps(failed, indent=0, sort_keys=True))
    return {**failed, **rows}


class _Progress:
    """Print a line every tenth of the work done (a long run shows it is alive)."""

    def __init__(self, total: int, what: str) -> None:
        self.total, self.what, self.done = total, what, 0
        self.started = time.perf_counter()

    def __call__(self) -> None:
        self.done += 1
        if self.done % max(1, self.total // 10) == 0:
            seconds = time.perf_counter() - self.started
            print(f"  {self.what} {self.done}/{self.total} in {seconds:.0f} s", flush=True)


def _stem(image: str) -> str:
    """Return an image path without its extension (`images/x-key.jpg` → `images/x-key`)."""
    return image.rsplit(".", 1)[0]


def _look(row: Mapping[str, Any]) -> tuple[str, str]:
    presentation = row["presentation"]
    return presentation["scene"], presentation["font_style"]


def _recapture(image: np.ndarray, regions: Sequence[Region], params: Mapping) -> np.ndarray:
    """Take the stored capture again of a (defective) clean page; return its decoded pixels."""
    return replay(image, regions, params).array()


def _make_pixel(job: tuple[str, str, str, Item, str]) -> str:
    """Make one pixel defect of a render and save it; return its image path ('': none fits)."""
    renders, kind, sidecar, item, target = job
    case = defects.load_case(Path(renders), Path(renders) / sidecar, item)
    rng = random.Random(f"{SEED}:{case.name}:{kind}")
    recapture = _recapture if case.capture is not None else None
    made = defects.defective_cases([case], 1, rng, recapture, kinds=(kind,))
    if not made:
        return ""  # not None: `run_all` drops None results
    path = Path(renders) / target
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(made[0].image).save(path)
    return target


def _tasks(
    planned: list[Planned],
    pixels: list[tuple[str, int]],
    rows: Mapping[str, dict],
    renders: Path,
    workers: int,
) -> tuple[list[Task], Counter[str]]:
    """Return the images to verify (pixel defects made and cached), and render failures by kind."""
    tasks: list[Task] = []
    failed: Counter[str] = Counter()
    by_index: dict[int, Task] = {}
    for index, p in enumerate(planned):
        row = rows.get(_stem(p.job.image_path))
        if row is None or row["status"] != "ok":
            reason = (row or {}).get("error", {}).get("reason", "not rendered")
            failed[f"{p.kind} {reason}"] += 1
            continue
        task = Task(
            row["image"], p.job.sidecar_path, p.item, p.kind, *_look(row), p.capture, p.edit
        )
        tasks.append(task)
        if p.kind == CLEAN:
            by_index[index] = task
    index_path = renders / PIXELS
    known: dict[str, str] = json.loads(index_path.read_text()) if index_path.is_file() else {}
    wanted = [(kind, by_index[i]) for kind, i in pixels if i in by_index]
    todo = [(kind, t) for kind, t in wanted if f"{kind}|{t.image}" not in known]
    if todo:
        started = time.perf_counter()
        jobs = [
            (str(renders), kind, t.sidecar, t.item, f"pixel/{kind}/{Path(t.image).stem}.png")
            for kind, t in todo
        ]
        for (kind, t), made in zip(todo, run_all(_make_pixel, jobs, workers), strict=True):
            known[f"{kind}|{t.image}"] = made
        index_path.write_text(json.dumps(known, indent=0, sort_keys=True))
        print(f"made {len(todo)} pixel defects in {time.perf_counter() - started:.0f} s")
    for kind, t in wanted:
        made = known[f"{kind}|{t.image}"]
        if not made:
            failed[f"{kind} not applicable"] += 1
            continue
        tasks.append(Task(made, t.sidecar, t.item, kind, t.scene, t.font, t.capture, kind))
    return tasks, failed


def _verify(job: tuple[str, Task, str]) -> dict[str, Any]:
    """Verify one image in one mode against its original item; return a JSON-ready result."""
    renders, task, mode = job
    image = load_rgb(Path(renders) / task.image)
    started = time.perf_counter()
    if mode == "region":
        record = json.loads((Path(renders) / task.sidecar).read_text(encoding="utf-8"))
        verdict = verify_image(
            image,
            task.item,
            Layout.from_dict(record["layout"]),
            render=record["render"],
            image_name=task.image,
        )
    else:
        verdict = audit_image(image, task.item, image_name=task.image)
    return {
        "passed": verdict.passed,
        "reasons": [f"{r.code}:{r.region} {r.detail}"[:160] for r in verdict.reasons],
        "seconds": round(time.perf_counter() - started, 3),
    }


def verifier_fingerprint() -> str:
    """Return a hash of the verifier's source: verdicts cached under it are this verifier's."""
    digest = hashlib.sha256()
    for path in sorted((ROOT / "verify").rglob("*.py")):
        digest.update(path.relative_to(ROOT).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _verify_all(
    jobs: list[tuple[str, Task, str]],
    renders: Path,
    workers: int,
    reverify: bool,
    fingerprint: str | None = None,
    cached_only: bool = False,
) -> tuple[dict[str, dict[str, dict]], int]:
    """Verify every (image, mode); return the results by image and mode, and how many were run.

    Verdicts are appended, chunk by chunk, to a cache named by the verifier's
    source fingerprint: a run cut short resumes, and an unchanged verifier
    is not asked again (`reverify` asks anyway). Any edit under `verify/`
    starts a new cache; `fingerprint` names an earlier one instead (to report
    a finished run again after the verifier moved on).
    """
    cache = renders / f"verdicts-{fingerprint or verifier_fingerprint()}.jsonl"
    print(f"verdict cache {cache.name}")
    known: dict[tuple[str, str], dict] = {}
    if cache.is_file() and not reverify:
        for line in cache.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            known[(entry["image"], entry["mode"])] = entry["result"]
    todo = [] if cached_only else [j for j in jobs if (j[1].image, j[2]) not in known]
    progress = _Progress(len(todo), "verified")
    with cache.open("a", encoding="utf-8") as out:
        for start in range(0, len(todo), CHUNK):
            chunk = todo[start : start + CHUNK]
            for (_r, task, mode), result in zip(
                chunk, run_all(_verify, chunk, workers, on_done=progress), strict=True
            ):
                known[(task.image, mode)] = result
                out.write(json.dumps({"image": task.image, "mode": mode, "result": result}) + "\n")
            out.flush()
    results: dict[str, dict[str, dict]] = defaultdict(dict)
    for _r, task, mode in jobs:
        if (task.image, mode) in known:  # all of them, unless `cached_only`
            results[task.image][mode] = known[(task.image, mode)]
    return results, len(todo)


def _read(job: tuple[str, Task]) -> bool:
    renders, task = job
    return readable(load_rgb(Path(renders) / task.image), task.item)


def _legibility(
    tasks: list[Task], renders: Path, workers: int, read_all: bool, results: Mapping
) -> dict[str, bool]:
    """Return the independent reader's verdict on the clean and captured images it must read.

    Without `read_all` only images rejected in some mode are read: the passed
    ones count as legible (a pass is no false alarm either way).
    """
    path = renders / READINGS
    known: dict[str, bool] = json.loads(path.read_text()) if path.is_file() else {}
    wanted = [
        t
        for t in tasks
        if t.kind == CLEAN
        and (read_all or any(not r["passed"] for r in results.get(t.image, {}).values()))
    ]
    todo = [t for t in wanted if t.image not in known]
    if todo:
        started = time.perf_counter()
        for task, ok in zip(
            todo, run_all(_read, [(str(renders), t) for t in todo], workers), strict=True
        ):
            known[task.image] = ok
        path.write_text(json.dumps(known, indent=0, sort_keys=True))
        print(
            f"independent reader read {len(todo)} images in {time.perf_counter() - started:.0f} s"
        )
    return known


def _cell_table(
    title: str,
    groups: Mapping[str, list[tuple[bool, bool | None]]],
) -> dict[str, Any]:
    """Print pass rate and false alarms per cell; return the figures.

    Each entry is (passed, legible); legible None means not read (counted legible).
    """
    figures = {key: _cell(groups[key]) for key in sorted(groups)}
    total = _cell([e for entries in groups.values() for e in entries])
    return cell_figures(title, figures, total)


def cell_figures(
    title: str, figures: Mapping[str, dict[str, Any]], total: dict[str, Any]
) -> dict[str, Any]:
    """Print a table's cells, its average and its worst cells; return the table's figures."""
    print(f"\n{title}")
    print(f"  {'cell':<30} {'pass':>13}   {'false alarms / legible':>24}")
    if not figures:
        print("  (none)")
        return {}
    for key, f in figures.items():
        print(
            f"  {key:<30} {f['passed']:5d}/{f['images']:<5d} {f['pass_rate']:6.1%}   "
            f"{f['false_alarms']:5d}/{f['legible']:<5d} {f['false_alarm_rate']:6.1%}"
        )
    worst = max(figures, key=lambda k: (figures[k]["false_alarm_rate"], -figures[k]["legible"]))
    worst_pass = min(figures, key=lambda k: figures[k]["pass_rate"])
    print(
        f"  {'average':<30} {total['passed']:5d}/{total['images']:<5d} {total['pass_rate']:6.1%}   "
        f"{total['false_alarms']:5d}/{total['legible']:<5d} {total['false_alarm_rate']:6.1%}"
        f"   worst false alarms {worst} {figures[worst]['false_alarm_rate']:.1%}, "
        f"worst pass {worst_pass} {figures[worst_pass]['pass_rate']:.1%}"
    )
    return {
        "cells": dict(figures),
        "average": total,
        "worst_false_alarm_cell": worst,
        "worst_pass_cell": worst_pass,
    }


def _cell(entries: list[tuple[bool, bool | None]]) -> dict[str, Any]:
    images = len(entries)
    passed = sum(p for p, _l in entries)
    legible = sum(1 for p, ok in entries if ok is not False)
    false_alarms = sum(1 for p, ok in entries if not p and ok is not False)
    return cell_counts(images, passed, legible, false_alarms)


def cell_counts(images: int, passed: int, legible: int, false_alarms: int) -> dict[str, Any]:
    """Return a cell's figures from its counts."""
    return {
        "images": images,
        "passed": passed,
        "pass_rate": passed / images if images else 0.0,
        "legible": legible,
        "false_alarms": false_alarms,
        "false_alarm_rate": false_alarms / legible if legible else 0.0,
    }


def _recall_table(mode: str, cases: list[tuple[Task, bool]]) -> dict[str, Any]:
    """Print the recall per defect kind, its worst face and capture cell; return the figures."""
    print(f"\ndefect recall, {mode} mode ({len(cases)} images)")
    figures: dict[str, Any] = {}
    for kind in DEFECT_KINDS:
        mine = [(t, caught) for t, caught in cases if t.kind == kind]
        if not mine:
            continue
        by: dict[str, dict[str, list[bool]]] = {
            "face": defaultdict(list),
            "capture": defaultdict(list),
        }
        for t, caught in mine:
            by["face"][t.font].append(caught)
            by["capture"][t.capture].append(caught)
        # In the order the cells were met: of cells equally bad, the first is named worst.
        counts = {
            axis: {k: [sum(v), len(v)] for k, v in groups.items()} for axis, groups in by.items()
        }
        caught = sum(c for _t, c in mine)
        figures[kind] = recall_entry(kind, caught, len(mine), counts["face"], counts["capture"])
    return figures


def recall_entry(
    kind: str,
    caught: int,
    images: int,
    by_face: Mapping[str, list[int]],
    by_capture: Mapping[str, list[int]],
) -> dict[str, Any]:
    """Print a defect kind's recall and its worst face and capture cell; return its figures.

    `by_face` and `by_capture` map each cell to [caught, images].
    """
    entry: dict[str, Any] = {"images": images, "caught": caught, "recall": caught / images}
    worst_text = []
    for axis, groups in (("face", by_face), ("capture", by_capture)):
        key = min(groups, key=lambda k: (groups[k][0] / groups[k][1], -groups[k][1]))
        cell_caught, cell_images = groups[key]
        entry[f"worst_{axis}"] = {"cell": key, "caught": cell_caught, "images": cell_images}
        entry[f"by_{axis}"] = dict(sorted(groups.items()))
        worst_text.append(f"{key} {cell_caught}/{cell_images}")
    print(
        f"  {kind:<18} {caught:4d}/{images:<4d} {caught / images:7.1%}   "
        f"worst face {worst_text[0]}, worst capture cell {worst_text[1]}"
    )
    return entry


def _report(
    tasks: list[Task],
    results: Mapping[str, Mapping[str, dict]],
    legible: Mapping[str, bool],
    modes: Sequence[str],
    renders: Path,
) -> dict[str, Any]:
    """Print every table and listing; return the figures for the JSON."""
    figures: dict[str, Any] = {}
    for mode in modes:
        name = "region" if mode == "region" else "whole-image"
        mine = [t for t in tasks if mode in results.get(t.image, {})]
        clean = [t for t in mine if t.kind == CLEAN]
        entry = functools.partial(_entry, results, legible, mode)
        renders_only = [t for t in clean if t.capture == CLEAN]
        captured = [t for t in clean if t.capture != CLEAN]
        tables: dict[str, Any] = {}
        for axis, key in (("face", lambda t: t.font), ("scene", lambda t: t.scene)):
            tables[f"clean_by_{axis}"] = _cell_table(
                f"{name} mode, clean renders by {axis}", _group(renders_only, key, entry)
            )
        tables["clean_by_language"] = _cell_table(
            f"{name} mode, clean renders by language",
            _group(renders_only, lambda t: t.item.language, entry),
        )
        tables["captures_by_cell"] = _cell_table(
            f"{name} mode, captures by preset × severity",
            _group(captured, lambda t: t.capture, entry),
        )
        tables["captures_by_face"] = _cell_table(
            f"{name} mode, captures by face", _group(captured, lambda t: t.font, entry)
        )
        cases = [(t, not results[t.image][mode]["passed"]) for t in mine if t.kind != CLEAN]
        tables["recall"] = _recall_table(name, cases)
        alarms = [
            t
            for t in clean
            if not results[t.image][mode]["passed"] and legible.get(t.image) is not False
        ]
        print(f"\n{name} mode: false alarms ({len(alarms)}; rejected, and the reader reads them)")
        for t in alarms:
            print(
                f"  {renders / t.image} [{t.scene} {t.font} {t.capture}] "
                f"{'; '.join(results[t.image][mode]['reasons'][:4])}"
            )
        illegible = [
            t
            for t in clean
            if not results[t.image][mode]["passed"] and legible.get(t.image) is False
        ]
        print(f"{name} mode: rejected images the reader does not read either: {len(illegible)}")
        missed = [t for t, caught in cases if not caught]
        print(f"{name} mode: defects passed ({len(missed)}):")
        for t in missed:
            print(f"  {renders / t.image} [{t.kind} {t.capture}] {t.edit}")
        tables["false_alarms"] = [
            {**_row(t, renders), "reasons": results[t.image][mode]["reasons"]} for t in alarms
        ]
        tables["defects_passed"] = [_row(t, renders) for t in missed]
        seconds = [results[t.image][mode]["seconds"] for t in mine]
        tables["verify_seconds_per_image"] = sum(seconds) / max(1, len(seconds))
        figures[mode] = tables
    return figures


def _entry(
    results: Mapping[str, Mapping[str, dict]], legible: Mapping[str, bool], mode: str, task: Task
) -> tuple[bool, bool | None]:
    """Return (passed in `mode`, read by the reader: None when it was not asked)."""
    return results[task.image][mode]["passed"], legible.get(task.image)


def _row(task: Task, renders: Path) -> dict[str, Any]:
    return {
        "image": str(renders / task.image),
        "item_id": task.item.id,
        "kind": task.kind,
        "scene": task.scene,
        "face": task.font,
        "capture": task.capture,
        "edit": task.edit,
    }


def _group(
    tasks: Iterable[Task], key: Callable[[Task], str], value: Callable[[Task], Any]
) -> dict[str, list]:
    groups: dict[str, list] = defaultdict(list)
    for t in tasks:
        groups[key(t)].append(value(t))
    return groups


def main() -> None:
    """Render (or reuse) the suite, verify it in both modes, read rejections, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--set",
        choices=tuple(SETS),
        required=True,
    )
    parser.add_argument("--out", type=Path, default=None, help="render folder (kept for re-runs)")
    parser.add_argument("--limit", type=int, default=None, help="the set's first N items only")
    parser.add_argument("--capture-items", type=int, default=100, help="items captured")
    parser.add_argument(
        "--captures-per-item", type=int, default=2, help="preset × severity cells per item (≤ 10)"
    )
    parser.add_argument(
        "--per-kind", type=int, default=50, help="defect images per kind on clean renders"
    )
    parser.add_argument(
        "--capture-per-kind", type=int, default=10, help="defect images per kind on captures"
    )
    parser.add_argument(
        "--kinds", default="", help="comma list of clean and defect kinds to verify (all)"
    )
    parser.add_argument("--modes", default="region,whole", help="region, whole or both")
    parser.add_argument(
        "--read",
        choices=("rejected", "all", "cached"),
        default="rejected",
        help="images the reader reads (cached: only its earlier verdicts; the rest count legible)",
    )
    parser.add_argument(
        "--reverify", action="store_true", help="verify again even if this verifier's cache has it"
    )
    parser.add_argument(
        "--cached-only", action="store_true", help="report the cached verdicts, verify nothing"
    )
    parser.add_argument(
        "--fingerprint", default=None, help="use the verdict cache of this verifier fingerprint"
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", type=Path, default=None, help="where the figures go")
    args = parser.parse_args()
    kinds = set(args.kinds.split(",")) if args.kinds else {CLEAN, *DEFECT_KINDS}
    unknown = kinds - {CLEAN, *DEFECT_KINDS}
    modes = [m for m in MODES if m in args.modes.split(",")]
    if unknown or not modes:
        parser.error(f"unknown kinds {sorted(unknown)} or no mode in {args.modes!r}")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        out = args.out or Path(scratch)
        renders = out / "renders"
        items, refused = _items(args.set, args.limit)
        print(f"{args.set} set: {len(items)} items ({len(refused)} would not load: {refused})")
        planned, pixels = _plan(
            items, args.capture_items, args.captures_per_item, job_seed(args.set)
        )
        planned, pixels = _capped(planned, pixels, args.per_kind, args.capture_per_kind, kinds)
        rows = _render(planned, renders, args.workers)
        tasks, failed = _tasks(planned, pixels, rows, renders, args.workers)
        if failed:
            print(f"not verified: {dict(sorted(failed.items()))}")
        tasks = [t for t in tasks if t.kind in kinds]
        made = time.perf_counter()
        # Region mode first: a run cut short still has one mode whole.
        jobs = [(str(renders), t, mode) for mode in modes for t in tasks]
        results, done = _verify_all(
            jobs, renders, args.workers, args.reverify, args.fingerprint, args.cached_only
        )
        verify_seconds = time.perf_counter() - made
        print(
            f"verified {len(tasks)} images × {len(modes)} modes in {verify_seconds:.0f} s: "
            f"{done} verifications ({done / max(verify_seconds, 1e-9):.2f}/s, "
            f"{args.workers} workers), {len(jobs) - done} reused from this verifier's cache"
        )
        if args.read == "cached":
            readings = renders / READINGS
            legible = json.loads(readings.read_text()) if readings.is_file() else {}
        else:
            legible = _legibility(tasks, renders, args.workers, args.read == "all", results)
        figures = _report(tasks, results, legible, modes, renders)
        seconds = time.perf_counter() - started
        print(f"\ntotal {seconds:.0f} s")
        counts = Counter((t.kind, t.capture == CLEAN) for t in tasks)
        record = {
            "set": args.set,
            "arguments": {k: str(v) for k, v in vars(args).items()},
            "items": len(items),
            "images": {
                f"{k} {'clean' if c else 'captured'}": n for (k, c), n in sorted(counts.items())
            },
            "not_verified": dict(failed),
            "seconds": {"total": round(seconds, 1), "verify": round(verify_seconds, 1)},
            "figures": figures,
            "verdicts": [{**_row(t, renders), "results": results[t.image]} for t in tasks],
        }
        path = args.json or out / f"verify-heldout-{args.set}.json"
        path.write_text(json.dumps(record, indent=1))
        print(f"figures written to {path}")


def _capped(
    planned: list[Planned],
    pixels: list[tuple[str, int]],
    per_kind: int,
    capture_per_kind: int,
    kinds: set[str],
) -> tuple[list[Planned], list[tuple[str, int]]]:
    """Keep the first `per_kind` defects of each kind on clean renders, `capture_per_kind` on captures.

    Only `kinds` are kept, and the clean renders their pixel defects are made
    from: nothing else is rendered.
    """
    cap = {True: per_kind, False: capture_per_kind}
    seen: Counter[tuple[str, bool]] = Counter()
    kept: list[Planned] = []
    remap: dict[int, int] = {}
    sources = {index for kind, index in pixels if kind in kinds}
    for index, p in enumerate(planned):
        if p.kind not in kinds and index not in sources:
            continue
        if p.kind != CLEAN:
            key = (p.kind, p.capture == CLEAN)
            seen[key] += 1
            if seen[key] > cap[key[1]]:
                continue
        remap[index] = len(kept)
        kept.append(p)
    kept_pixels = []
    for kind, index in pixels:
        if kind not in kinds:
            continue
        key = (kind, planned[index].capture == CLEAN)
        seen[key] += 1
        if seen[key] <= cap[key[1]]:
            kept_pixels.append((kind, remap[index]))
    return kept, kept_pixels


if __name__ == "__main__":
    main()
