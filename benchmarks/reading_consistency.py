"""Reading-probe scoring against the verifier on real renders: do both give one number?

Renders the sample dataset (English and Japanese, with formulas and figures)
in several scenes, font styles and captures with real Chromium, verifies every
image (real tesseract), then hands the verifier's own region readings to the
transcript scorer as if a model had written them: the stem's reading, then each
option's reading with its label as read ("(A) Oslo"). For every field it
compares the transcript scorer's score with the verifier's region score, and
counts the fields where they differ — where the scorer's label split assigned
text to another field than the verifier's regions did — and how many of those
sit in images where OCR misread an option label (`(0)` for D, `(€)` for C),
which a model's transcript seldom does.

Prints, per scene × font style × capture × language, the fields compared,
how many of them the verifier read as empty, the share with equal scores,
the mean whole-item accuracy, and the worst cell beside the average.

    .venv/bin/python benchmarks/reading_consistency.py [--scenes exam_sheet,whiteboard,...]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import itemshot
from itemshot.factorial.analysis.transcripts import score_transcript
from itemshot.factorial.design.sweep import read_manifest
from itemshot.verify.checks.labels import split_label

DEFAULT_SCENES = "exam_sheet,whiteboard,blackboard,webpage"


def _transcript(regions: list[dict]) -> str:
    """Return the verifier's readings as one transcript: stem, then each option line."""
    stem = [r["observed"] for r in regions if r["kind"] == "question"]
    options = [r["observed"] for r in regions if r["kind"] == "option"]
    return "\n".join(stem + options)


def main() -> int:
    """Render, verify, rescore the verifier's readings and print the agreement table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenes", default=DEFAULT_SCENES)
    parser.add_argument("--font-styles", default="regular,handwritten")
    parser.add_argument("--captures", default="none,phone_photo_paper")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    items = itemshot.load(itemshot.sample_dataset())
    cells: dict[tuple[str, ...], list[tuple[int, int, float, int]]] = defaultdict(list)
    differing: list[str] = []
    explained = 0  # differing fields of items where OCR misread an option label
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "set"
        started = time.perf_counter()
        run = itemshot.render(
            items, out, scene=args.scenes.split(","), font_style=args.font_styles.split(","),
            capture=args.captures.split(","), severity="medium", seed=1,
            workers=args.workers, progress=False,
        )  # fmt: skip
        seconds = time.perf_counter() - started
        rows = {row.image.name: row for row in read_manifest(out).rows if row.image}
        audit = json.loads((out / "audit.json").read_text(encoding="utf-8"))
        for verdict in audit["verdicts"]:
            row = rows.get(Path(verdict["image"]).name)
            if row is None or verdict["mode"] != "regions":
                continue
            regions = [r for r in verdict["regions"] if r["kind"] in ("question", "option")]
            reading = score_transcript(row, _transcript(regions), "verifier")
            mine = {"question": reading.question, **{f.name: f.accuracy for f in reading.options}}
            equal = 0
            misread_label = any(
                split_label(r["observed"])[0] != r["name"].split(":")[1]
                for r in regions
                if r["kind"] == "option" and r["observed"].strip()
            )
            for region in regions:
                same = abs((mine.get(region["name"]) or 0.0) - (region["score"] or 0.0)) < 1e-3
                equal += same
                if not same:
                    explained += misread_label
                    differing.append(
                        f"{row.item_id} {row.presentation.get('scene')} {region['name']}: "
                        f"verifier {region['score']} vs transcript {mine.get(region['name'])} "
                        f"(read {region['observed']!r})"
                    )
            key = (
                str(row.presentation.get("scene")),
                str(row.presentation.get("font_style")),
                str(row.presentation.get("capture") or "none"),
                row.language,
            )
            unread = sum(1 for r in regions if not r["observed"].strip())
            cells[key].append((equal, len(regions), reading.accuracy or 0.0, unread))
    print(f"rendered and verified {len(run.rows)} images in {seconds:.0f} s (machine shared)")
    header = ("scene", "font", "capture", "lang", "images", "fields", "verifier read nothing",
              "equal %", "item acc %")  # fmt: skip
    print(" | ".join(header))
    shares = []
    for key in sorted(cells):
        group = cells[key]
        equal = sum(g[0] for g in group)
        fields = sum(g[1] for g in group)
        share = 100 * equal / fields if fields else float("nan")
        shares.append((share, key))
        accuracy = 100 * sum(g[2] for g in group) / len(group)
        unread = sum(g[3] for g in group)
        print(" | ".join([*key, str(len(group)), str(fields), str(unread), f"{share:.1f}",
                          f"{accuracy:.1f}"]))  # fmt: skip
    total_equal = sum(g[0] for group in cells.values() for g in group)
    total = sum(g[1] for group in cells.values() for g in group)
    worst = min(shares) if shares else (float("nan"), ())
    print(f"average: {100 * total_equal / max(1, total):.1f}% of {total} fields score the same")
    print(f"worst cell: {worst[0]:.1f}% ({' · '.join(worst[1])})")
    print(
        f"{len(differing)} fields differ; {explained} of them in images where OCR misread an "
        "option label (the verifier knows each region; a transcript is split at its labels)"
    )
    for line in differing[:12]:
        print("  differs:", line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
