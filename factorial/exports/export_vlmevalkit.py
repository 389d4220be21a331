"""`--to vlmevalkit`: an MCQ TSV plus the dataset module that puts it in front of a model.

`DEST/<name>.tsv` follows VLMEvalKit's MCQ columns (`index`, `image`,
`question`, `A`…, `answer`, `category`, `l2-category`, `split`):

* `image`: the images the design sends, base64, in order (the rendered image,
  then the figures); one string, or a JSON list when there are several;
  empty for blind rows. `image_path`: their content-addressed file names
  (`<sha256>.png`, a JSON list alike), under which VLMEvalKit caches them.
* `question`: the text the design sends (for vision rows the instruction
  only; the question and options are inside the image).
* `A`…: the options shown (as many letter columns as the largest row needs),
  `answer` the letter, `category` the subject, `l2-category` the format,
  `split` the cell, so VLMEvalKit's tables come per cell.
* then the provenance columns: `id` (job key), `item_id`, `cell`, `format`,
  `n_options`, `option_level`, one column per condition factor, `language`,
  `prompt`, `figure_numbers`, `missing_figures`.

`DEST/itemshot_vlmeval.py` (see `vlmeval_dataset`) is the prompt path: VLMEvalKit's
generic MCQ class would print the options as text under a vision image.
"""

from __future__ import annotations

import base64
import csv
import inspect
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from itemshot.factorial.exports import vlmeval_dataset
from itemshot.factorial.exports.export_common import ExportRow, Written, image_name
from itemshot.factorial.exports.export_hf import condition_columns, factor_columns
from itemshot.factorial.exports.standalone import parser_source
from itemshot.renderer.output import atomic_write_text

MODULE_NAME = "itemshot_vlmeval.py"
LETTERS = vlmeval_dataset.LETTER_COLUMNS
MIN_LETTER_COLUMNS = 4
HEAD_COLUMNS = ("index", "image", "image_path", "question")
TAIL_COLUMNS = ("answer", "category", "l2-category", "split")
PROVENANCE = ("id", "item_id", "cell", "format", "n_options", "option_level")
CLOSING = ("language", "prompt", "figure_numbers", "missing_figures")
_PARSER_IMPORT = "from itemshot.factorial.answers.parsers_strict import parse_strict"
_DATASET_LINE = 'DATASET = "itemshot"'


def _listed(values: Sequence[str]) -> str:
    if not values:
        return ""
    return values[0] if len(values) == 1 else json.dumps(list(values))


def module_source(name: str) -> str:
    """Return the dataset module for an export named `name`, the strict parser inlined."""
    source = inspect.getsource(vlmeval_dataset)
    if _PARSER_IMPORT not in source or _DATASET_LINE not in source:
        raise RuntimeError("vlmeval_dataset no longer has the lines the exporter fills in")
    source = source.replace(f"{_PARSER_IMPORT}  # an export carries the code", "")
    source = source.replace(_DATASET_LINE, f"DATASET = {name!r}", 1)
    head, tail = source.split("from __future__ import annotations\n", 1)
    return f"{head}from __future__ import annotations\n\n{parser_source()}\n{tail}"


def table(rows: Sequence[ExportRow]) -> tuple[list[str], list[list[Any]]]:
    """Return the TSV's header and rows."""
    factors = factor_columns(rows)
    letters = LETTERS[: max([MIN_LETTER_COLUMNS, *(len(r.options) for r in rows)])]
    header = [
        *HEAD_COLUMNS,
        *letters,
        *TAIL_COLUMNS,
        *PROVENANCE,
        *condition_columns(factors),
        *CLOSING,
    ]
    body: list[list[Any]] = []
    for index, row in enumerate(rows):
        images = row.images
        encoded = [base64.b64encode(path.read_bytes()).decode("ascii") for path in images]
        options = [*row.options, *[""] * (len(letters) - len(row.options))]
        levels = row.factors
        body.append(
            [
                index,
                _listed(encoded),
                _listed([image_name(path) for path in images]),
                row.prompt,
                *options,
                row.answer,
                row.subject,
                row.format,
                row.cell,
                row.key,
                row.item_id,
                row.cell,
                row.format,
                row.n_options,
                row.option_level,
                *("" if levels.get(f) is None else levels[f] for f in factors),
                row.language,
                row.prompt,
                json.dumps(list(row.figure_numbers)),
                json.dumps(list(row.missing_figures)),
            ]
        )
    return header, body


def export_vlmevalkit(rows: Sequence[ExportRow], dest: Path, name: str) -> Written:
    """Write DEST/<name>.tsv and DEST/itemshot_vlmeval.py; return what was written."""
    header, body = table(rows)
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter="\t", lineterminator="\n")
    writer.writerow(header)
    writer.writerows(body)
    tsv = dest / f"{name}.tsv"
    atomic_write_text(tsv, buffer.getvalue())
    module = dest / MODULE_NAME
    atomic_write_text(module, module_source(name))
    return Written((tsv, module), len(body))


def export(rows: Sequence[ExportRow], dest: Path, name: str) -> Written:
    """Write the export of `rows` into `dest` (the registry's entry point)."""
    return export_vlmevalkit(rows, dest, name)
