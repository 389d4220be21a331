"""Capture legibility per preset × severity: text size, page share and independent OCR reads.

Run from the project root (the OCR engine is the optional `legibility` extra:
`pip install -e ".[legibility]"`):

    python benchmarks/capture_legibility.py [--deliver-size PX] [--items N] [--workers W] \
        [--ocr-every K]

The fixture (21 MMMU-Pro items) and the embedded sample (12 items, English and
Japanese) are rendered with scene, font style and aspect drawn per item, then
captured with every preset at every severity and delivered at `--deliver-size`
(default: the render's long side). For every cell it prints:

- the delivered size (median width × height);
- the x-height of the text at the delivered size, median and 5th percentile
  over images (an image's x-height is the median over its question and option
  regions: the font's x-height × the CSS size its glyphs are drawn at × the
  device scale × the local scale of the region's mapped quad);
- the page's share of the frame (the area of the clean page's mapped corners
  over the frame's area): median, min and max;
- "held": the images whose framing light or medium drew larger to keep the
  page's text at the renderer's floor (`degradations.capturing.text_hold`);
- the share of images an independent OCR engine reads fully: RapidOCR's
  PP-OCRv4 (ONNX, no angle classifier), not our verifier's tesseract. An image
  is read fully when the characters OCR found inside the regions' mapped
  quads hold at least 95% of its question and option text, in order, and at
  least 80% of every single region's (extra characters, as formulas, cost
  nothing; letters are compared case-folded, punctuation and spaces ignored). PP-OCRv4's dictionary has
  almost no kana, so Japanese regions are judged on the characters it can
  know (kanji, Latin letters, digits, punctuation), which the clean renders
  show it reads; the clean render's share is printed as the baseline.
  The reader also misses some clean renders (dense or small text it splits
  or merges), which a capture cannot make more readable: "of clean-read" is
  the share read fully among the images whose clean render it reads fully,
  printed beside the absolute share (the rule is checked on the absolute one).
  OCR costs about 3 s of CPU per image (528 images in all): `--ocr-every K`
  reads every K-th render only (the "read" column counts the images read).

The rules of the capture presets (README, "Capture simulation") are checked
at the end: light and medium median x-height ≥ 8 px and ≥ 95% of images at ≥ 6
px; phone_photo_screen's page share within 55-85% in every image not held; strong
images read fully ≥ 50%.
"""

from __future__ import annotations

import os

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import unicodedata  # noqa: E402
from concurrent.futures import ProcessPoolExecutor  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402
from statistics import median  # noqa: E402

import numpy as np  # noqa: E402
from rapidfuzz.distance import Levenshtein  # noqa: E402

import itemshot  # noqa: E402
from itemshot.degradations import PRESETS, SEVERITIES, capture  # noqa: E402
from itemshot.renderer.presentation import REFERENCE_LONG_SIDE  # noqa: E402
from itemshot.renderer.records import Layout, Region  # noqa: E402
from itemshot.verify.checks.fonts import DEFAULT_X_HEIGHT, font_facts  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "data" / "mmmu-pro" / "tool" / "data.jsonl"
READ_ALL = 0.95  # share of an image's text characters OCR must find, in order
READ_EACH = 0.8  # and of every single region's
CLEAN = ("clean", "-")


@dataclass(frozen=True)
class Render:
    """One clean render: its PNG bytes, layout and language."""

    name: str
    png: bytes
    layout: Layout
    language: str


@dataclass(frozen=True)
class Measured:
    """What one image measured (OCR reads are filled in later)."""

    cell: tuple[str, str]
    render: int  # index of the clean render it was captured from
    size: tuple[int, int]
    x_height: float
    page_share: float
    held: bool = False  # light or medium framed larger than drawn to keep the text at the floor


def render_inputs(work: Path, items: int | None) -> list[Render]:
    """Render the fixture and the sample with scene, font style and aspect drawn per item."""
    renders = []
    for source, name in ((FIXTURE, "fixture"), (itemshot.sample_dataset(), "sample")):
        loaded = itemshot.load(source)
        entries = list(loaded.entries)[:items] if items else list(loaded.entries)
        run = itemshot.render(
            entries, work / name, scene="random", font_style="random", aspect="random",
            seed=14, verify=False, progress=False,
        )  # fmt: skip
        for row in run.rows:
            if row.get("status") != "ok":
                print(f"{name}: item {row.get('item_id')} did not render: {row.get('error')}")
                continue
            sidecar = json.loads((run.out / row["layout"]).read_text())
            renders.append(
                Render(
                    f"{name}/{row['item_id']}",
                    (run.out / row["image"]).read_bytes(),
                    Layout.from_dict(sidecar["layout"]),
                    row.get("language", "en"),
                )
            )
    return renders


def text_regions(layout: Layout) -> list[Region]:
    """The question and option regions that carry text."""
    return [r for r in layout.regions if r.kind in ("question", "option") and r.text.strip()]


def _quad_area(quad: np.ndarray) -> float:
    x, y = quad[:, 0], quad[:, 1]
    return 0.5 * abs(float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))))


def x_height(layout: Layout, clean: Layout | None, regions: list[Region]) -> float:
    """Median x-height (px) over the text regions, in the image the regions are mapped to."""
    device = max(layout.width, layout.height) / REFERENCE_LONG_SIDE if clean is None else (
        max(clean.width, clean.height) / REFERENCE_LONG_SIDE
    )  # fmt: skip
    heights = []
    for region in regions:
        if region.font_px <= 0:
            continue
        x0, y0, x1, y1 = region.box
        local = np.sqrt(_quad_area(np.asarray(region.quad)) / max(1e-6, (x1 - x0) * (y1 - y0)))
        family = max(region.fonts.items(), key=lambda kv: kv[1])[0] if region.fonts else None
        facts = font_facts(family) if family else None
        ratio = facts.x_height if facts else DEFAULT_X_HEIGHT
        # The face's own x-height ratio applies to the size its glyphs are drawn at
        # (`font_px` is the reference face's size of the same x-height), as the verifier's.
        heights.append(region.drawn_px * device * local * ratio)
    return float(median(heights)) if heights else float("nan")


def was_held(params: dict) -> bool:
    """Return whether a capture's framing was changed to hold its text (see `text_hold`)."""
    for step in params["steps"]:
        held = step["params"].get("held")
        if isinstance(held, dict):
            return True
        if isinstance(held, float) and held < 1.0:
            return True
    return False


def page_share(page: tuple[tuple[float, float], ...], width: int, height: int) -> float:
    """Area of the page's corners (clipped to the frame) over the frame's area."""
    quad = np.clip(np.asarray(page, np.float64), [0, 0], [width, height])
    return _quad_area(quad) / (width * height)


# --- OCR (worker processes) ---------------------------------------------------

_ENGINE = None


def _engine():
    global _ENGINE
    if _ENGINE is None:
        from rapidocr_onnxruntime import RapidOCR

        _ENGINE = RapidOCR(intra_op_num_threads=1, inter_op_num_threads=1, use_cls=False)
    return _ENGINE


def _normal(text: str, known: set[str] | None) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    kept = [c for c in text if c.isalnum() and (known is None or c in known)]
    return "".join(kept)


def _inside(point: np.ndarray, quad: np.ndarray) -> bool:
    import cv2

    return cv2.pointPolygonTest(quad.astype(np.float32), tuple(map(float, point)), False) >= 0


def _page_reading(engine, image: np.ndarray, regions: list) -> list[str]:
    """Detect and recognise the whole image; give each region the text found inside its quad."""
    result, _ = engine(image, use_cls=False)
    boxes = [(np.asarray(box, np.float64), text) for box, text, _score in (result or [])]
    readings = []
    for _expected, quad in regions:
        grown = np.asarray(quad, np.float64)
        centre = grown.mean(axis=0)
        grown = centre + (grown - centre) * 1.04
        found = [
            (b[:, 1].mean(), b[:, 0].mean(), t) for b, t in boxes if _inside(b.mean(axis=0), grown)
        ]
        readings.append("".join(t for _y, _x, t in sorted(found)))
    return readings


def read_regions(job: tuple[bytes, list, str]) -> list[tuple[int, int]]:
    """Return, per region, (characters missed, characters) of OCR's reading inside its quad."""
    import cv2

    data, regions, language = job
    engine = _engine()
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    readings = _page_reading(engine, image, regions)
    known = set(engine.text_rec.postprocess_op.character) if language == "ja" else None
    scores = []
    for (expected, _quad), reading in zip(regions, readings, strict=True):
        target = _normal(expected, known)
        if not target:
            continue
        missing = Levenshtein.distance(target, _normal(reading, known), weights=(0, 1, 1))
        scores.append((missing, len(target)))
    return scores


def read_fully(scores: list[tuple[int, int]]) -> bool:
    """Whether an image's regions were read fully (see READ_ALL and READ_EACH)."""
    if not scores:
        return False
    missed, total = sum(m for m, _ in scores), sum(t for _, t in scores)
    return 1 - missed / total >= READ_ALL and all(1 - m / t >= READ_EACH for m, t in scores)


def _job(data: bytes, regions: list[Region], language: str) -> tuple[bytes, list, str]:
    return data, [(r.text, [list(p) for p in r.quad]) for r in regions], language


def measure(
    renders: list[Render], deliver: int | None, ocr_every: int = 1
) -> tuple[list[Measured], list[tuple | None]]:
    """Capture every render with every preset × severity; return measures and OCR jobs.

    Only every `ocr_every`-th render gets OCR jobs (the others get None).
    """
    measured, jobs = [], []
    for index, render in enumerate(renders):
        regions = text_regions(render.layout)
        if not regions:
            continue
        measured.append(
            Measured(
                CLEAN,
                index,
                (render.layout.width, render.layout.height),
                x_height(render.layout, None, regions),
                1.0,
            )
        )
        read = index % max(1, ocr_every) == 0
        jobs.append(_job(render.png, regions, render.language) if read else None)
        names = {r.name for r in regions}
        for preset in PRESETS:
            for severity in SEVERITIES:
                shot = capture(render.png, render.layout.regions, preset, severity,
                               seed=1000 + index, deliver_size=deliver,
                               text_x_height=render.layout.measures.get("x_height_px"))  # fmt: skip
                moved = [r for r in shot.regions if r.name in names]
                layout = Layout(shot.width, shot.height, tuple(moved))
                measured.append(
                    Measured(
                        (preset, severity),
                        index,
                        (shot.width, shot.height),
                        x_height(layout, render.layout, moved),
                        page_share(shot.page, shot.width, shot.height),
                        was_held(shot.params),
                    )
                )
                jobs.append(_job(shot.image, moved, render.language) if read else None)
    return measured, jobs


def _percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q)) if values else float("nan")


def report(
    measured: list[Measured], reads: list[list[tuple[int, int]]] | None
) -> dict[tuple, dict]:
    """Print the table per cell; return the figures per cell."""
    cells: dict[tuple, dict] = {}
    reads = reads if reads is not None else [None] * len(measured)
    fully = [None if scores is None else read_fully(scores) for scores in reads]
    # An image whose clean render the reader already misses says nothing about the capture.
    clean_read = {m.render: fully[i] for i, m in enumerate(measured) if m.cell == CLEAN}
    for index, m in enumerate(measured):
        cell = cells.setdefault(
            m.cell,
            {"x": [], "share": [], "free": [], "held": 0, "w": [], "h": [], "read": [],
             "relative": []},
        )  # fmt: skip
        cell["x"].append(m.x_height)
        cell["share"].append(m.page_share)
        cell["held"] += m.held
        if not m.held:
            cell["free"].append(m.page_share)
        cell["w"].append(m.size[0])
        cell["h"].append(m.size[1])
        if fully[index] is not None:
            cell["read"].append(fully[index])
            if clean_read.get(m.render):
                cell["relative"].append(fully[index])
    header = (f"{'preset':20s} {'severity':8s} {'n':>3s} {'read':>4s} {'delivered':>10s} {'x-h med':>8s} "
              f"{'x-h p5':>7s} {'<6px':>5s} {'page share med [min-max]':>25s} {'read fully':>10s} "
              f"{'of clean-read':>13s} {'held':>4s}")  # fmt: skip
    print(header)
    figures = {}
    for key in [CLEAN] + [(p, s) for p in PRESETS for s in SEVERITIES]:
        cell = cells.get(key)
        if not cell:
            continue
        xs = [x for x in cell["x"] if x == x]
        row = {
            "n": len(cell["x"]),
            "size": (int(median(cell["w"])), int(median(cell["h"]))),
            "x_median": float(median(xs)),
            "x_p5": _percentile(xs, 5),
            "under_6": float(np.mean(np.asarray(xs) < 6.0)),
            "share_median": float(median(cell["share"])),
            "share_min": float(min(cell["share"])),
            "share_max": float(max(cell["share"])),
            # The share the preset draws, without the pages held larger for their text.
            "free_min": float(min(cell["free"], default=float("nan"))),
            "free_max": float(max(cell["free"], default=float("nan"))),
            "held": cell["held"],
            "read": float(np.mean(cell["read"])) if cell["read"] else float("nan"),
            "relative": float(np.mean(cell["relative"])) if cell["relative"] else float("nan"),
        }
        figures[key] = row
        size = f"{row['size'][0]}x{row['size'][1]}"
        share = f"{row['share_median']:.2f} [{row['share_min']:.2f}-{row['share_max']:.2f}]"
        read, relative = (f"{100 * row[k]:.0f}%" if row[k] == row[k] else "-"
                          for k in ("read", "relative"))  # fmt: skip
        print(f"{key[0]:20s} {key[1]:8s} {row['n']:3d} {len(cell['read']):4d} {size:>10s} {row['x_median']:8.1f} "
              f"{row['x_p5']:7.1f} {100 * row['under_6']:4.0f}% {share:>25s} {read:>10s} "
              f"{relative:>13s} {row['held']:4d}")  # fmt: skip
    return figures


def check_rules(figures: dict[tuple, dict]) -> list[str]:
    """Return the rules of the presets that the figures break (empty: all hold)."""
    broken = []
    for (preset, severity), row in figures.items():
        if (preset, severity) == CLEAN:
            continue
        if severity in ("light", "medium"):
            if row["x_median"] < 8.0:
                broken.append(f"{preset}/{severity}: median x-height {row['x_median']:.1f} < 8 px")
            if row["under_6"] > 0.05:
                broken.append(f"{preset}/{severity}: {100 * row['under_6']:.0f}% of images < 6 px")
        if preset == "phone_photo_screen" and not (
            row["free_min"] >= 0.55 and row["free_max"] <= 0.85
        ):
            broken.append(f"{preset}/{severity}: page share (not held) outside 55-85%")
        if severity == "strong" and row["read"] == row["read"] and row["read"] < 0.5:
            broken.append(f"{preset}/{severity}: read fully {100 * row['read']:.0f}% < 50%")
    return broken


def summary(figures: dict[tuple, dict]) -> None:
    """Print the average over the capture cells beside the worst cell, per figure."""
    cells = {k: v for k, v in figures.items() if k != CLEAN}
    for name, worst, label in (("x_median", min, "x-height median"), ("x_p5", min, "x-height p5"),
                               ("read", min, "read fully"),
                               ("relative", min, "of clean-read")):  # fmt: skip
        values = {k: v[name] for k, v in cells.items() if v[name] == v[name]}
        if not values:
            continue
        bad = worst(values, key=values.get)
        print(f"{label:16s} average {np.mean(list(values.values())):6.2f}   "
              f"worst {values[bad]:6.2f} ({bad[0]}/{bad[1]})")  # fmt: skip


def main() -> int:
    """Render, capture, measure and print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--deliver-size", type=int, default=None, help="long side (default: render's)"
    )
    parser.add_argument("--items", type=int, default=None, help="first N items of each dataset")
    parser.add_argument("--workers", type=int, default=2, help="OCR processes")
    parser.add_argument("--no-ocr", action="store_true", help="skip the OCR reads")
    parser.add_argument(
        "--ocr-every", type=int, default=1,
        help="read every K-th render only (OCR costs ~3 s of CPU per image)",
    )  # fmt: skip
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="capture-legibility-"))
    renders = render_inputs(work, args.items)
    print(f"{len(renders)} clean renders (fixture and sample); delivered long side: "
          f"{args.deliver_size or 'the render’s'}; OCR reads every {args.ocr_every} render")  # fmt: skip
    measured, jobs = measure(renders, args.deliver_size, args.ocr_every)
    reads = None
    if not args.no_ocr:
        todo = [job for job in jobs if job is not None]
        with ProcessPoolExecutor(max_workers=max(1, args.workers)) as pool:
            done = iter(list(pool.map(read_regions, todo, chunksize=2)))
        reads = [None if job is None else next(done) for job in jobs]
    figures = report(measured, reads)
    summary(figures)
    broken = check_rules(figures)
    print("rules: all hold" if not broken else "rules broken:\n  " + "\n  ".join(broken))
    return 0


if __name__ == "__main__":
    sys.exit(main())
