"""Contact sheets of the capture presets: one per preset, the clean render beside each severity.

Run from the project root:

    python benchmarks/capture_contact_sheets.py [--out docs/captures] [--deliver-size PX]

Four items (fixture and sample, English and Japanese) are rendered in
different scenes, font styles and aspects; each row shows one of them clean
and captured light, medium and strong (seeded, so the sheets are
reproducible), labelled with the delivered size and format. The README shows
the sheets so a person can judge realism and legibility at a glance.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

import itemshot
from itemshot.degradations import PRESETS, SEVERITIES, capture
from itemshot.degradations.encoding import decode
from itemshot.degradations.fonts import ui_font
from itemshot.renderer.records import Layout

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "data" / "mmmu-pro" / "tool" / "data.jsonl"
# (dataset, item index, scene, font style, aspect): varied looks, one Japanese item
ROWS = (
    ("fixture", 0, "exam_sheet", "regular", "3:4"),
    ("fixture", 13, "workbook", "handwritten", "3:4"),
    ("sample", 11, "whiteboard", "serif", "16:9"),
    ("fixture", 4, "blackboard", "bold", "1:1"),
)
CELL = 300
LABEL = 22


def render_rows(work: Path) -> list[tuple[bytes, Layout]]:
    """Render each row's item in its look; return the PNG bytes and layouts."""
    sources = {
        "fixture": itemshot.load(FIXTURE),
        "sample": itemshot.load(itemshot.sample_dataset()),
    }
    rows = []
    for index, (name, item, scene, font_style, aspect) in enumerate(ROWS):
        entries = [list(sources[name].entries)[item]]
        run = itemshot.render(entries, work / str(index), scene=scene, font_style=font_style,
                              aspect=aspect, seed=1, verify=False, progress=False)  # fmt: skip
        row = run.rows[0]
        layout = json.loads((run.out / row["layout"]).read_text())["layout"]
        rows.append(((run.out / row["image"]).read_bytes(), Layout.from_dict(layout)))
    return rows


def sheet(preset: str, rows: list[tuple[bytes, Layout]], deliver: int | None) -> Image.Image:
    """Return the contact sheet of one preset: clean, light, medium, strong per row."""
    columns = ("clean", *SEVERITIES)
    canvas = Image.new("RGB", (len(columns) * CELL, len(rows) * (CELL + LABEL)), "white")
    draw = ImageDraw.Draw(canvas)
    font = ui_font(14)
    for r, (png, layout) in enumerate(rows):
        for c, column in enumerate(columns):
            if column == "clean":
                array, label = decode(png), f"clean {layout.width}x{layout.height}"
            else:
                shot = capture(
                    png, layout.regions, preset, column, seed=100 + r, deliver_size=deliver,
                    text_x_height=layout.measures.get("x_height_px"),
                )  # fmt: skip
                array = shot.array()
                label = f"{column} {shot.width}x{shot.height} {shot.format}"
            tile = Image.fromarray(np.ascontiguousarray(array))
            tile.thumbnail((CELL - 6, CELL - 6), Image.Resampling.LANCZOS)
            x = c * CELL + (CELL - tile.width) // 2
            y = r * (CELL + LABEL) + LABEL + (CELL - tile.height) // 2
            canvas.paste(tile, (x, y))
            draw.text((c * CELL + 6, r * (CELL + LABEL) + 4), label, fill="black", font=font)
    return canvas


def main() -> int:
    """Render the rows and write one sheet per preset."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "captures")
    parser.add_argument("--deliver-size", type=int, default=None)
    args = parser.parse_args()
    rows = render_rows(Path(tempfile.mkdtemp(prefix="capture-sheets-")))
    args.out.mkdir(parents=True, exist_ok=True)
    for preset in PRESETS:
        path = args.out / f"{preset}.png"
        sheet(preset, rows, args.deliver_size).save(path, optimize=True)
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
