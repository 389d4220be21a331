"""`--to hf`: a parquet file with Hugging Face `Image` columns, loadable with `datasets`.

The schema metadata carries the `datasets` feature description (the
`huggingface` key), so `datasets.load_dataset("parquet", data_files=…)`
decodes `image` (the rendered image, null for text formats) and `figures`
(the figures sent beside the text) as PIL images.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from itemshot.factorial.export_common import ExportRow

PARQUET_NAME = "test.parquet"

_STRING = {"dtype": "string", "_type": "Value"}
_IMAGE = {"_type": "Image"}
_TEXT_COLUMNS = (
    "id",
    "item_id",
    "cell",
    "format",
    "n_options",
    "condition",
    "question",
    "answer",
    "subject",
    "language",
    "prompt",
)
FEATURES: dict[str, Any] = {
    **{name: _STRING for name in _TEXT_COLUMNS},
    "options": {"feature": _STRING, "_type": "Sequence"},
    "image": _IMAGE,
    "figures": {"feature": _IMAGE, "_type": "Sequence"},
}

_IMAGE_TYPE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
SCHEMA = pa.schema(
    [
        *[(name, pa.string()) for name in _TEXT_COLUMNS],
        ("options", pa.list_(pa.string())),
        ("image", _IMAGE_TYPE),
        ("figures", pa.list_(_IMAGE_TYPE)),
    ],
    metadata={"huggingface": json.dumps({"info": {"features": FEATURES}})},
)


def _image(path: Path) -> dict[str, Any]:
    return {"bytes": path.read_bytes(), "path": path.name}


def record(row: ExportRow) -> dict[str, Any]:
    """Return one row as a parquet record (images embedded as bytes)."""
    return {
        "id": row.key,
        "item_id": row.item_id,
        "cell": row.cell,
        "format": row.format,
        "n_options": row.n_options,
        "condition": json.dumps(dict(row.condition), sort_keys=True),
        "question": row.question,
        "answer": row.answer,
        "subject": row.subject,
        "language": row.language,
        "prompt": row.prompt,
        "options": list(row.options),
        "image": _image(row.image) if row.image else None,
        "figures": [_image(path) for path in row.figures],
    }


def write_parquet(rows: Sequence[ExportRow], target: Path) -> Path:
    """Write rows to one parquet file at `target` (through a temp file) and return it."""
    target.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist([record(row) for row in rows], schema=SCHEMA)
    temp = target.with_name(f".tmp-{target.name}")
    pq.write_table(table, temp)
    temp.replace(target)
    return target


def export_hf(rows: Sequence[ExportRow], dest: Path) -> list[Path]:
    """Write DEST/test.parquet; return the files written."""
    return [write_parquet(rows, dest / PARQUET_NAME)]


def export(rows: Sequence[ExportRow], dest: Path, name: str) -> list[Path]:
    """Write the export of `rows` into `dest` (the registry's entry point)."""
    return export_hf(rows, dest)
