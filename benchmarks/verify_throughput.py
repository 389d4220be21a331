"""Verification throughput: region OCR verifier vs naive full-page `image_to_string`.

Renders the MMMU-Pro tool fixture in four scenes (real Chromium), makes one-defect
copies of the renders (the defect suite's makers), then verifies the same
images two ways in the same run:

- region: `verify_image` with the layout record (one tesseract call per image on
  stacked, trimmed text crops; figures by template matching), on a process pool
  with `OMP_THREAD_LIMIT=1`;
- naive: `pytesseract.image_to_string` of the whole page (tesseract's default
  threading), judged by aligning each field's source text in the page text
  (accuracy ≥ 0.90 and every number found); it cannot see figures.

Prints images/s, the speed ratio, and each method's defect detection and clean
pass rates.

    .venv/bin/python benchmarks/verify_throughput.py [--per-kind 6] [--workers 2]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pytesseract

from itemshot.pipeline import RunSettings, run_jobs
from itemshot.renderer.adapters import load_dataset
from itemshot.renderer.jobs import JobRequest, plan
from itemshot.renderer.presentation import PresentationSpec
from itemshot.verify.checks import expected as source
from itemshot.verify.checks.tokens import missing_numbers
from itemshot.verify.modes.regions import verify_image
from itemshot.verify.modes.whole_image import _align
from itemshot.verify.pool import run_all
from itemshot.verify.reading.ocr import language_for
from itemshot.verify.reading.text import ocr_accuracy
from tests import defects

FIXTURE = (
    Path(__file__).resolve().parents[1] / "tests" / "data" / "mmmu-pro" / "tool" / "data.jsonl"
)
SCENES = ("exam_sheet", "whiteboard", "webpage", "tv_quiz")


def _cases(out: Path, per_kind: int) -> list[defects.Case]:
    dataset = load_dataset(FIXTURE)
    requests = [JobRequest(i, PresentationSpec(scene=s)) for i in dataset.items for s in SCENES]
    run_jobs(plan(requests, 0), out, RunSettings(workers=2))
    clean = defects.clean_cases(out, {i.id: i for i in dataset.items})
    made = defects.defective_cases(clean, per_kind, random.Random(3))
    originals = {c.name for c in made}
    return [c for c in clean if c.name in originals] + made


def _region(case: defects.Case) -> tuple[bool, float]:
    """Return whether the image passed, and the seconds its verification took."""
    started = time.perf_counter()
    passed = verify_image(case.image, case.item, case.layout, render=case.render).passed
    return passed, time.perf_counter() - started


def _naive(case: defects.Case) -> bool:
    lang = language_for(case.item.language, [case.item.question, *case.item.options])
    page = pytesseract.image_to_string(case.image, lang=lang)
    fields = [source.stem(case.item), *source.options(case.item)]
    for field in fields:
        if not field.text.strip():
            continue
        window = _align(field.text, page)
        if ocr_accuracy(field.text, window) < 0.9 or missing_numbers(field.text, window):
            return False
    return True


def _rates(cases: list[defects.Case], passed: list[bool]) -> tuple[float, float]:
    clean = [p for c, p in zip(cases, passed, strict=True) if c.kind == "clean"]
    bad = [p for c, p in zip(cases, passed, strict=True) if c.kind != "clean"]
    return sum(clean) / len(clean), sum(not p for p in bad) / len(bad)


def main() -> None:
    """Run both verifiers on the same images and print images/s and detection."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-kind", type=int, default=6, help="defective images per defect kind")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        cases = _cases(Path(folder), args.per_kind)
    kinds = Counter(c.kind for c in cases)
    print(f"images: {len(cases)} ({', '.join(f'{k} {n}' for k, n in kinds.items())})")

    started = time.perf_counter()
    timed = run_all(_region, cases, args.workers)
    region_rate = len(cases) / (time.perf_counter() - started)
    region = [passed for passed, _seconds in timed]

    started = time.perf_counter()
    naive = [_naive(c) for c in cases]
    naive_rate = len(cases) / (time.perf_counter() - started)

    for name, rate, passed in (
        ("region", region_rate, region),
        ("naive full page", naive_rate, naive),
    ):
        clean, detected = _rates(cases, passed)
        print(
            f"{name:<16} {rate:6.2f} images/s   defects flagged {detected:6.1%}   clean passed {clean:6.1%}"
        )
        by_kind = Counter(
            c.kind for c, p in zip(cases, passed, strict=True) if c.kind != "clean" and not p
        )
        print(
            "                 flagged by kind: "
            + ", ".join(f"{k} {by_kind[k]}/{kinds[k]}" for k in defects.KINDS)
        )
    print(f"speed-up: {region_rate / naive_rate:.2f}x")
    # Per image on one worker (the capacity model's v): a clean image passes on its first
    # reading; a defective one is read again by every settler before it fails.
    for label, chosen in (("clean", True), ("defective", False)):
        seconds = [
            t for c, (_p, t) in zip(cases, timed, strict=True) if (c.kind == "clean") == chosen
        ]
        print(f"region seconds per {label} image on one worker: {sum(seconds) / len(seconds):.3f}")


if __name__ == "__main__":
    main()
