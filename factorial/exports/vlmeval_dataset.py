"""VLMEvalKit dataset of an itemshot export: the design's prompts and images, strict scoring.

`itemshot export --to vlmevalkit` copies this file into the export (as
`itemshot_vlmeval.py`, with the export's name and a copy of the strict
parser), beside `<name>.tsv`. Run it with VLMEvalKit's checkout:

    python itemshot_vlmeval.py /path/to/VLMEvalKit --model <model> [run.py options]

It registers `ItemshotMCQDataset` with VLMEvalKit and hands over to its
`run.py` with `--data <name> --data-config …`. Why a dataset class of its own:

* VLMEvalKit's generic MCQ prompt (and the MCQ prompts of many model
  wrappers, which take over whenever the dataset type is MCQ) print the
  options as text under the image: the vision cells would no longer be
  vision-only. This class sets `force_use_dataset_prompt`, so its
  `build_prompt` is used with every model: the design's prompt text and
  exactly the design's images (the rendered image, then the figures; a
  standard row's figures interleaved at their first `<image N>` tag, as
  VLMEvalKit's MMMU class does).
* Images are decoded to `$LMUData/images/<name>/<sha256>.png`: names follow
  the content, so no cached image of an earlier export is ever served.
* `evaluate` reads every reply with itemshot's strict parser (no guessing,
  unparseable counts as wrong), the same reading as `itemshot analyze`, and
  reports accuracy and unparsed share per cell.

The functions above the class need only pandas (no VLMEvalKit), so the prompt
path can be checked without it.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from itemshot.factorial.answers.parsers_strict import parse_strict  # an export carries the code

DATASET = "itemshot"  # the export's name, written in by the exporter
HERE = Path(__file__).resolve().parent
LETTER_COLUMNS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_IMAGE_TAG = re.compile(r"<image\s*(\d+)>")


def cell_values(value: Any) -> list[str]:
    """Return a TSV cell as a list: a JSON list, one value, or nothing when empty."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value == "":
        return []
    if isinstance(value, list | tuple):
        return [str(v) for v in value]
    text = str(value)
    return [str(v) for v in json.loads(text)] if text.startswith("[") else [text]


def row_options(line: Mapping[str, Any]) -> list[str]:
    """Return the options a row shows (its filled letter columns, in order)."""
    options: list[str] = []
    for letter in LETTER_COLUMNS:
        values = cell_values(line.get(letter))
        if not values:
            break
        options.append(values[0])
    return options


def row_messages(line: Mapping[str, Any], image_paths: Sequence[str]) -> list[dict[str, str]]:
    """Return VLMEvalKit's message list for a row: the design's images and prompt text.

    `image_paths` are the row's images in the design's order. A standard row
    places each figure at the first `<image N>` tag naming it (the tag is
    replaced, as VLMEvalKit's MMMU datasets do); other rows send the images,
    then the text.
    """
    text = str(line["prompt"])
    numbers = [int(n) for n in cell_values(line.get("figure_numbers"))]
    if line.get("format") != "standard" or not image_paths:
        return [
            *({"type": "image", "value": p} for p in image_paths),
            {"type": "text", "value": text},
        ]
    by_number = dict(zip(numbers, image_paths, strict=True))
    messages: list[dict[str, str]] = []
    position = 0
    for match in _IMAGE_TAG.finditer(text):
        path = by_number.pop(int(match.group(1)), None)
        if path is None:
            continue  # a later mention of a figure already placed, or a missing figure
        if text[position : match.start()]:
            messages.append({"type": "text", "value": text[position : match.start()]})
        messages.append({"type": "image", "value": path})
        position = match.end()
    if text[position:]:
        messages.append({"type": "text", "value": text[position:]})
    return messages


def score_reply(line: Mapping[str, Any]) -> dict[str, Any]:
    """Return the strict parser's reading of a prediction row: letter, hit, unparsed."""
    prediction = line.get("prediction")
    reply = prediction if isinstance(prediction, str) else ""
    letter = parse_strict(reply, row_options(line)).letter
    return {
        "parsed": letter or "",
        "hit": int(letter == line["answer"]),
        "unparsed": int(not letter),
    }


def accuracy_table(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Return accuracy and unparsed share per cell (`split`), then over all rows."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        groups.setdefault(str(row["split"]), []).append(row)
    table = []
    for cell, members in [*sorted(groups.items()), ("Overall", list(rows))]:
        n = len(members)
        table.append(
            {
                "split": cell,
                "n": n,
                "accuracy": sum(m["hit"] for m in members) / n if n else 0.0,
                "unparsed": sum(m["unparsed"] for m in members) / n if n else 0.0,
            }
        )
    return table


def dataset_class() -> type:
    """Return `ItemshotMCQDataset`, built on VLMEvalKit's `ImageMCQDataset` (import it first)."""
    import pandas as pd
    from vlmeval.dataset.image_mcq import ImageMCQDataset
    from vlmeval.smp import dump, get_intermediate_file_path, load

    class ItemshotMCQDataset(ImageMCQDataset):
        """An itemshot export: design prompts and images for every model, strict scoring."""

        TYPE = "MCQ"
        force_use_dataset_prompt = True  # model wrappers' MCQ prompts would list the options

        def __init__(self, dataset: str = DATASET, skip_noimg: bool = False) -> None:
            # Blind rows have no image and are kept.
            super().__init__(dataset=dataset, skip_noimg=skip_noimg)

        @classmethod
        def supported_datasets(cls) -> list[str]:
            return [DATASET]

        def load_data(self, dataset: str) -> Any:
            data = pd.read_csv(HERE / f"{dataset}.tsv", sep="\t")
            # Blind rows have no image: VLMEvalKit's loader takes "" but not NaN.
            data["image_path"] = data["image_path"].fillna("")
            return data

        def build_prompt(self, line: Any) -> list[dict[str, str]]:
            if isinstance(line, int):
                line = self.data.iloc[line]
            paths = self.dump_image(line) if cell_values(line.get("image_path")) else []
            return row_messages(line, [paths] if isinstance(paths, str) else list(paths))

        def evaluate(self, eval_file: str, **judge_kwargs: Any) -> Any:
            data = load(eval_file)
            records = data.to_dict("records")
            scored = [{**row, **score_reply(row)} for row in records]
            dump(pd.DataFrame(scored), get_intermediate_file_path(eval_file, "_itemshot_result"))
            table = pd.DataFrame(accuracy_table(scored))
            dump(table, get_intermediate_file_path(eval_file, "_acc", "csv"))
            return table

    return ItemshotMCQDataset


def main(argv: Sequence[str]) -> None:
    """Register the dataset with VLMEvalKit (checkout at argv[0]) and run its run.py."""
    import runpy

    if not argv or not (Path(argv[0]) / "run.py").is_file():
        raise SystemExit("usage: python itemshot_vlmeval.py VLMEVALKIT_CHECKOUT [run.py options]")
    root = Path(argv[0]).resolve()
    sys.path.insert(0, str(root))
    import vlmeval.dataset

    vlmeval.dataset.ItemshotMCQDataset = dataset_class()
    config = {DATASET: {"class": "ItemshotMCQDataset", "dataset": DATASET}}
    sys.argv = [str(root / "run.py"), "--data", DATASET, "--data-config", json.dumps(config)]
    sys.argv += list(argv[1:])
    runpy.run_path(str(root / "run.py"), run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
