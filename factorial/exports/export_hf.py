"""`--to hf`: a Hugging Face dataset folder (`data/test-<hash>.parquet` + card `README.md`).

Columns are typed: `n_options` is an integer, each condition factor (scene,
font style, …) is a column of its own (integer when every level is one), and
`missing_figures` lists the figures the source dataset lacks. The schema
metadata carries the `datasets` feature description (the `huggingface` key),
so `image` (the rendered image, null for text formats) and `figures` (the
figures the design sends beside the text or the image) decode as PIL images.
Embedded images and the parquet file are named by their content hash, so no
cache serves an earlier export's. `datasets.load_dataset(DEST)` reads the
folder through the card's `configs`.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from itemshot.factorial.exports.export_common import ExportRow, Written, image_name
from itemshot.renderer.output import atomic_write_text

SPLIT = "test"
DATA_DIR = "data"
CARD_NAME = "README.md"

_STRING = {"dtype": "string", "_type": "Value"}
_INT = {"dtype": "int64", "_type": "Value"}
_IMAGE = {"_type": "Image"}
_IMAGE_TYPE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])

# (column, arrow type, datasets feature), in column order; factor columns follow `option_level`.
_HEAD = (
    ("id", pa.string(), _STRING),
    ("item_id", pa.string(), _STRING),
    ("cell", pa.string(), _STRING),
    ("format", pa.string(), _STRING),
    ("n_options", pa.int64(), _INT),
    ("option_level", pa.string(), _STRING),
)
_TAIL = (
    ("question", pa.string(), _STRING),
    ("options", pa.list_(pa.string()), {"feature": _STRING, "_type": "Sequence"}),
    ("answer", pa.string(), _STRING),
    ("subject", pa.string(), _STRING),
    ("language", pa.string(), _STRING),
    ("prompt", pa.string(), _STRING),
    ("image", _IMAGE_TYPE, _IMAGE),
    ("figures", pa.list_(_IMAGE_TYPE), {"feature": _IMAGE, "_type": "Sequence"}),
    ("figure_numbers", pa.list_(pa.int64()), {"feature": _INT, "_type": "Sequence"}),
    ("missing_figures", pa.list_(pa.int64()), {"feature": _INT, "_type": "Sequence"}),
)
CORE_COLUMNS = tuple(name for name, _, _ in (*_HEAD, *_TAIL))


def factor_columns(rows: Sequence[ExportRow]) -> dict[str, bool]:
    """Return the condition factors of `rows` (first-seen order) and whether each is an integer."""
    levels: dict[str, list[Any]] = {}
    for row in rows:
        for name, level in row.factors.items():
            levels.setdefault(name, []).append(level)
    return {
        name: all(isinstance(v, int) and not isinstance(v, bool) for v in values if v is not None)
        for name, values in levels.items()
    }


def _column_name(factor: str) -> str:
    return f"condition_{factor}" if factor in CORE_COLUMNS else factor


def condition_columns(factors: dict[str, bool]) -> list[str]:
    """Return the column names of the condition factors (besides format and n_options)."""
    return [_column_name(name) for name in factors]


def schema(factors: dict[str, bool]) -> pa.Schema:
    """Return the parquet schema (with `datasets` features) for rows with these factors."""
    middle = tuple(
        (_column_name(name), pa.int64() if is_int else pa.string(), _INT if is_int else _STRING)
        for name, is_int in factors.items()
    )
    columns = (*_HEAD, *middle, *_TAIL)
    features = {name: feature for name, _, feature in columns}
    return pa.schema(
        [(name, kind) for name, kind, _ in columns],
        metadata={"huggingface": json.dumps({"info": {"features": features}})},
    )


def _image(path: Path) -> dict[str, Any]:
    return {"bytes": path.read_bytes(), "path": image_name(path)}


def record(row: ExportRow, factors: dict[str, bool]) -> dict[str, Any]:
    """Return one row as a parquet record (images embedded as bytes)."""
    values = row.factors
    return {
        "id": row.key,
        "item_id": row.item_id,
        "cell": row.cell,
        "format": row.format,
        "n_options": row.n_options,
        "option_level": row.option_level,
        **{
            _column_name(name): (
                None if values.get(name) is None else values[name] if is_int else str(values[name])
            )
            for name, is_int in factors.items()
        },
        "question": row.question,
        "options": list(row.options),
        "answer": row.answer,
        "subject": row.subject,
        "language": row.language,
        "prompt": row.prompt,
        "image": _image(row.image) if row.image else None,
        "figures": [_image(path) for path in row.sent_figures],
        "figure_numbers": list(row.figure_numbers),
        "missing_figures": list(row.missing_figures),
    }


def write_parquet(
    rows: Sequence[ExportRow], folder: Path, stem: str, factors: dict[str, bool] | None = None
) -> Path:
    """Write rows to `folder/<stem>-<content hash>.parquet` (through a temp file); return it.

    The name follows the content: `datasets` caches a local file by its path,
    so a file rewritten in place would be served from the cache of the
    earlier export. Earlier `<stem>-*.parquet` files in `folder` are removed.
    """
    factors = factor_columns(rows) if factors is None else factors
    folder.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist([record(row, factors) for row in rows], schema=schema(factors))
    temp = folder / f".tmp-{stem}.parquet"
    pq.write_table(table, temp)
    digest = hashlib.sha256(temp.read_bytes()).hexdigest()[:16]
    target = folder / f"{stem}-{digest}.parquet"
    temp.replace(target)
    for earlier in folder.glob(f"{stem}-*.parquet"):
        if earlier != target:
            earlier.unlink()
    return target


def dataset_card(
    rows: Sequence[ExportRow],
    name: str,
    factors: dict[str, bool],
    data_file: str,
    certification: Mapping[str, Any] | None = None,
) -> str:
    """Return the dataset card: a YAML header `datasets` reads, then what the set holds.

    The header names the data file itself, not a pattern: `datasets` caches a
    local folder under a hash of its configs, so a new file name is what makes
    it read a re-export rather than its cache of the earlier one.
    """
    header = {
        "pretty_name": name,
        "tags": ["itemshot", "multiple-choice", "vision-only"],
        "task_categories": ["visual-question-answering"],
        "configs": [
            {
                "config_name": "default",
                "data_files": [{"split": SPLIT, "path": data_file}],
            }
        ],
    }
    cells = Counter(row.cell for row in rows)
    missing = sum(1 for row in rows if row.missing_figures)
    factor_list = ", ".join(f"`{column}`" for column in condition_columns(factors)) or "none"
    lines = [
        "---",
        yaml.safe_dump(header, sort_keys=False, allow_unicode=True).rstrip(),
        "---",
        "",
        f"# {name}",
        "",
        f"An itemshot experimental set: {len(rows)} rows, {len(cells)} cells, "
        f"{len({row.item_id for row in rows})} items.",
        "",
        "```python",
        "import datasets",
        'ds = datasets.load_dataset("path/to/this/folder", split="test")',
        'four = ds.filter(lambda r: r["n_options"] == 4)',
        "```",
        "",
        "Each row is one item under one condition. `prompt` is the text the design sends;",
        "`image` is the rendered image (null for the text formats), `figures` the figures",
        "sent beside the text or the image, in order (`figure_numbers` gives their",
        "`<image N>` numbers). `missing_figures` lists figures the source dataset lacks:",
        "a standard row that names one has no image for it.",
        f"Condition factors besides `format` and `n_options`: {factor_list}.",
        "",
        "| cell | rows |",
        "|---|---:|",
        *[f"| {cell} | {count} |" for cell, count in sorted(cells.items())],
        "",
        f"Rows with missing figures: {missing}.",
        "",
        *certification_section(certification),
    ]
    return "\n".join(lines)


def certification_section(certification: Mapping[str, Any] | None) -> list[str]:
    """Return the card's lines on the certified review (none when the set has no audit sample).

    Only a complete certification is stated as one; an incomplete one says so.
    """
    if certification is None:
        return []
    statement = str(certification.get("statement") or "")
    if certification.get("certified"):
        return ["## Human review", "", f"Certified: {statement}", ""]
    return ["## Human review", "", f"Not certified: {statement}", ""]


def export_hf(
    rows: Sequence[ExportRow],
    dest: Path,
    name: str,
    certification: Mapping[str, Any] | None = None,
) -> Written:
    """Write DEST/data/test-<hash>.parquet and DEST/README.md; return what was written."""
    factors = factor_columns(rows)
    parquet = write_parquet(rows, dest / DATA_DIR, SPLIT, factors)
    card = dest / CARD_NAME
    relative = parquet.relative_to(dest).as_posix()
    atomic_write_text(card, dataset_card(rows, name, factors, relative, certification))
    return Written((parquet, card), len(rows))


def export(
    rows: Sequence[ExportRow],
    dest: Path,
    name: str,
    *,
    certification: Mapping[str, Any] | None = None,
) -> Written:
    """Write the export of `rows` into `dest` (the registry's entry point)."""
    return export_hf(rows, dest, name, certification)
