"""Contact sheets: one labelled grid PNG of an output set, for review at a glance."""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from itemshot.contact_html import contact_html
from itemshot.degradations.fonts import ui_font

THUMB = 300
LABEL_H = 44


def label_for(row: dict[str, Any]) -> str:
    """Return a two-line label naming an image's item and look."""
    p = row.get("presentation") or {}
    first = f"{row.get('item_id', '?')}"
    second = " ".join(
        str(p.get(k, "")) for k in ("scene", "font_style", "font_size", "aspect", "color")
    )
    capture = p.get("capture")
    if capture and capture != "none":
        second += f" {capture}/{p.get('severity', '')}"
    return f"{first}\n{second}"


def contact_sheet(
    out: Path, rows: Sequence[dict[str, Any]], target: Path, columns: int | None = None
) -> Path:
    """Write a grid of every rendered image in `rows` (paths relative to `out`) to `target`."""
    images = [r for r in rows if r.get("status") == "ok" and r.get("image")]
    if not images:
        raise ValueError("no rendered images to put on a contact sheet")
    columns = columns or min(8, max(1, math.ceil(math.sqrt(len(images) * 1.3))))
    rows_count = math.ceil(len(images) / columns)
    sheet = Image.new("RGB", (columns * THUMB, rows_count * (THUMB + LABEL_H)), "white")
    draw = ImageDraw.Draw(sheet)
    for index, row in enumerate(images):
        x = (index % columns) * THUMB
        y = (index // columns) * (THUMB + LABEL_H)
        with Image.open(out / row["image"]) as image:
            thumb = image.convert("RGB")
            thumb.thumbnail((THUMB - 8, THUMB - 8))
        sheet.paste(thumb, (x + (THUMB - thumb.width) // 2, y + (THUMB - thumb.height) // 2))
        draw.multiline_text((x + 6, y + THUMB + 2), label_for(row), fill="black", font=ui_font(12))
    buffer = io.BytesIO()
    sheet.save(buffer, format="PNG", optimize=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(buffer.getvalue())
    contact_html(out, rows, target.with_suffix(".html"))  # the same set, labelled, beside the PNG
    return target
