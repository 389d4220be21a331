"""`--to vlmevalkit`: an MCQ TSV in VLMEvalKit's documented layout.

Columns: `index` (unique integer), `image` (base64 PNG; a list of base64
strings when a text row sends several figures), `question`, `A`…`J` (empty
past the row's options), `answer` (letter), `category` (subject),
`l2-category` (the format·options cell) and `split` (the full condition
label), then the provenance columns `item_id`, `format`, `n_options`,
`condition`. VLMEvalKit's image MCQ needs an image, so rows that send none
(blind rows; standard rows whose figures the dataset lacks) are left out and
listed in `skipped.jsonl`.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import re
from collections.abc import Sequence
from pathlib import Path

from itemshot.factorial.export_common import ExportRow
from itemshot.renderer.output import atomic_write, write_jsonl

OPTION_COLUMNS = tuple("ABCDEFGHIJ")
COLUMNS = (
    "index",
    "image",
    "question",
    *OPTION_COLUMNS,
    "answer",
    "category",
    "l2-category",
    "split",
    "item_id",
    "format",
    "n_options",
    "condition",
)
_IMAGE_TAG = re.compile(r"<image\s*\d+>")


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode("ascii")


def _question(row: ExportRow) -> str:
    """Return the question column: the text for text rows, the instruction for vision rows."""
    if row.format == "standard":
        return _IMAGE_TAG.sub("<image>", row.question)
    return row.prompt.splitlines()[-1] if row.format == "vision_question_only" else row.prompt


def export_vlmevalkit(rows: Sequence[ExportRow], dest: Path, name: str) -> list[Path]:
    """Write DEST/<name>.tsv (and DEST/skipped.jsonl); return the files written."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter="\t", lineterminator="\n")
    writer.writerow(COLUMNS)
    skipped: list[dict[str, str]] = []
    index = 0
    for row in rows:
        images = [row.image] if row.image else list(row.figures)
        if len(row.options) > len(OPTION_COLUMNS):
            skipped.append(
                {"item_id": row.item_id, "key": row.key, "reason": "more than 10 options"}
            )
            continue
        if not images:
            skipped.append({"item_id": row.item_id, "key": row.key, "reason": "no image to send"})
            continue
        encoded = [_b64(path) for path in images]
        image = encoded[0] if len(encoded) == 1 else json.dumps(encoded)
        options = [*row.options, *[""] * (len(OPTION_COLUMNS) - len(row.options))]
        writer.writerow(
            [
                index,
                image,
                _question(row),
                *options,
                row.answer,
                row.subject,
                f"{row.format}·{row.n_options}",
                row.cell,
                row.item_id,
                row.format,
                row.n_options,
                json.dumps(dict(row.condition), sort_keys=True),
            ]
        )
        index += 1
    tsv = dest / f"{name}.tsv"
    atomic_write(tsv, buffer.getvalue().encode("utf-8"))
    write_jsonl(dest / "skipped.jsonl", skipped)
    return [tsv, dest / "skipped.jsonl"]


def export(rows: Sequence[ExportRow], dest: Path, name: str) -> list[Path]:
    """Write the export of `rows` into `dest` (the registry's entry point)."""
    return export_vlmevalkit(rows, dest, name)
