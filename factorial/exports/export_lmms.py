"""`--to lmms-eval`: a task folder for `lmms-eval --tasks itemshot_<name> --include_path DEST`.

One task per condition cell (`itemshot_<name>_<cell>`, the cell's name in
`[a-z0-9_]`: `design.cells.cell_slug`), each reading its own
parquet file under `data/` (named by its content hash, so no datasets cache
serves an earlier export's) by a path relative to the task YAML (lmms-eval
resolves it against the YAML's folder, so the folder can be copied or moved),
plus a group `itemshot_<name>` over all of them with a size-weighted
aggregate. The parquet files have the HF export's typed columns, so every
logged sample's `doc` carries the row's id, item id, cell and condition.

The generated `utils.py` sends each row's prompt and exactly the images the
design names (the rendered image, then the figures), and scores replies with
the project's strict parser, copied into the file so the folder needs nothing
but lmms-eval. `until` is an empty list: no stop string beyond the model's own
end of turn, so a final `Answer:` line after a paragraph of reasoning is kept
(lmms-eval's default stop is a blank line).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import yaml

from itemshot.factorial.design.cells import cell_slug, check_slugs
from itemshot.factorial.exports.export_common import ExportRow, Written
from itemshot.factorial.exports.export_hf import condition_columns, factor_columns, write_parquet
from itemshot.factorial.exports.standalone import parser_source
from itemshot.renderer.output import atomic_write_text

_NAME = re.compile(r"[^a-z0-9_]+")
MAX_NEW_TOKENS = 4096

_UTILS_HEAD = '''"""lmms-eval task utilities written by `itemshot export --to lmms-eval`.

doc_to_visual: the images the design sends (the rendered image, then the
figures); doc_to_text: the row's prompt; process_results: itemshot's strict
answer parser (no random fallback; unparseable counts as wrong and is
reported as `unparsed`) against the row's answer letter.
"""

from __future__ import annotations

'''

_UTILS_TAIL = '''

def doc_to_visual(doc: dict[str, Any]) -> list[Any]:
    """Return the images sent with a row: the rendered image, then its figures."""
    images = [doc["image"]] if doc.get("image") is not None else []
    images += list(doc.get("figures") or [])
    return [image.convert("RGB") for image in images]


def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: dict[str, Any] | None = None) -> str:
    """Return the row's prompt, with optional pre/post prompts from the task YAML."""
    kwargs = lmms_eval_specific_kwargs or {}
    return f"{kwargs.get('pre_prompt', '')}{doc['prompt']}{kwargs.get('post_prompt', '')}"


def process_results(doc: dict[str, Any], results: Sequence[str]) -> dict[str, Any]:
    """Score one reply: accuracy 1/0, whether it was unparseable, and which row it was.

    lmms-eval aggregates only the metrics its YAML lists; the other keys land
    in every logged sample, so a sample names its row, item, cell and condition.
    """
    letter = parse_strict(results[0] if results else "", doc["options"]).letter
    return {
        "accuracy": float(letter == doc["answer"]),
        "unparsed": float(letter is None),
        "parsed": letter,
        "id": doc["id"],
        "item_id": doc["item_id"],
        "cell": doc["cell"],
        "condition": {name: doc[name] for name in CONDITION_COLUMNS if name in doc},
    }
'''


def utils_source(condition_columns: Sequence[str] = ("format", "n_options")) -> str:
    """Return the generated utils.py: the strict parser's code plus the task functions."""
    columns = f"\n\nCONDITION_COLUMNS = {tuple(condition_columns)!r}\n"
    return _UTILS_HEAD + parser_source() + columns + _UTILS_TAIL


def task_name(name: str) -> str:
    """Return the group task name for an export name (`itemshot_<name>`, lowercase)."""
    return "itemshot_" + _NAME.sub("_", name.lower()).strip("_")


def task_config(task: str, data_file: str) -> dict[str, object]:
    """Return the YAML config of one cell's task (`data_file` relative to the YAML)."""
    return {
        "task": task,
        "dataset_path": "parquet",
        "dataset_kwargs": {"data_files": {"test": data_file}},
        "test_split": "test",
        "output_type": "generate_until",
        "doc_to_visual": "!function utils.doc_to_visual",
        "doc_to_text": "!function utils.doc_to_text",
        "doc_to_target": "answer",
        "process_results": "!function utils.process_results",
        "generation_kwargs": {
            "until": [],
            "max_new_tokens": MAX_NEW_TOKENS,
            "temperature": 0.0,
            "do_sample": False,
        },
        "metric_list": [
            {"metric": "accuracy", "aggregation": "mean", "higher_is_better": True},
            {"metric": "unparsed", "aggregation": "mean", "higher_is_better": False},
        ],
        "metadata": {"version": 1.0},
    }


def group_config(group: str, tasks: Sequence[str]) -> dict[str, object]:
    """Return the group's YAML: its tasks and the size-weighted aggregate of both metrics."""
    return {
        "group": group,
        "task": list(tasks),
        "aggregate_metric_list": [
            {"metric": "accuracy", "aggregation": "mean", "weight_by_size": True},
            {"metric": "unparsed", "aggregation": "mean", "weight_by_size": True},
        ],
        "metadata": {"version": 1.0},
    }


def _dump(config: dict[str, object]) -> str:
    text = yaml.safe_dump(config, sort_keys=False, allow_unicode=True)
    # `!function` is a YAML tag lmms-eval resolves; safe_dump would quote it.
    return re.sub(r"'(!function [\w.]+)'", r"\1", text)


def export_lmms(rows: Sequence[ExportRow], dest: Path, name: str) -> Written:
    """Write the task folder (parquet per cell, YAML per task, group YAML, utils.py)."""
    base = task_name(name)
    factors = factor_columns(rows)  # one schema for every cell's file
    cells: dict[str, list[ExportRow]] = defaultdict(list)
    for row in rows:
        cells[row.cell].append(row)
    written: list[Path] = []
    tasks: list[str] = []
    check_slugs(cells)
    for cell, members in sorted(cells.items()):
        task = f"{base}_{cell_slug(cell)}"
        data = write_parquet(members, dest / "data", task, factors)
        config = dest / f"{task}.yaml"
        relative = data.relative_to(dest).as_posix()
        atomic_write_text(config, _dump(task_config(task, relative)))
        written += [data, config]
        tasks.append(task)
    group = dest / f"{base}.yaml"
    atomic_write_text(group, _dump(group_config(base, tasks)))
    utils = dest / "utils.py"
    atomic_write_text(utils, utils_source(("format", "n_options", *condition_columns(factors))))
    paths = (*written, group, utils)
    _forget_earlier_export(dest, base, paths)
    return Written(paths, len(rows))


def _forget_earlier_export(dest: Path, base: str, paths: Sequence[Path]) -> None:
    """Delete the files an earlier export under this name wrote and this one did not.

    Otherwise a cell the new sweep lacks would stay registered under
    `--include_path` with its old data.
    """
    record = dest / f".{base}-files.txt"
    now = {path.relative_to(dest).as_posix() for path in paths}
    if record.is_file():
        for relative in record.read_text(encoding="utf-8").splitlines():
            if relative and relative not in now and ".." not in Path(relative).parts:
                (dest / relative).unlink(missing_ok=True)
    atomic_write_text(record, "".join(f"{relative}\n" for relative in sorted(now)))


def export(rows: Sequence[ExportRow], dest: Path, name: str) -> Written:
    """Write the export of `rows` into `dest` (the registry's entry point)."""
    return export_lmms(rows, dest, name)
