"""`--to lmms-eval`: a task folder for `lmms-eval --include_path DEST`.

One task per condition cell (`itemshot_<name>_<cell>`), each reading its own
parquet file, plus a group task `itemshot_<name>` over all of them. The
generated `utils.py` sends each row's prompt and images, and scores replies
with a copy of the project's strict parser (written into the file, so the
folder needs nothing but lmms-eval), which also takes a lone lowercase letter
such as `(c)`.
"""

from __future__ import annotations

import inspect
import re
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import yaml

from itemshot.factorial import parsers, parsers_strict
from itemshot.factorial.export_common import ExportRow
from itemshot.factorial.export_hf import write_parquet
from itemshot.renderer.output import atomic_write

_NAME = re.compile(r"[^a-z0-9_]+")

_UTILS_HEAD = '''"""lmms-eval task utilities written by `itemshot export --to lmms-eval`.

doc_to_visual: the rendered image (vision formats) and the figures sent beside
the text; doc_to_text: the row's prompt; process_results: strict answer
parsing (no random fallback) against the row's answer letter.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any, NamedTuple

'''

# lmms-eval imports utils.py without registering it in sys.modules, which a
# dataclass needs; the parser's result record is a NamedTuple here instead.
_PARSE_RESULT = '''
class ParseResult(NamedTuple):
    """The letter a parser extracted, whether it was a random guess, and why."""

    letter: str | None
    fallback: bool
    reason: str
'''

_UTILS_TAIL = '''

_LONE_LETTER = re.compile(r"^[\\s*_]*[(\\[]?\\s*([a-zA-Z])\\s*[)\\]]?[.:]?[\\s*_]*$")


def parse_answer(response: Any, options: Sequence[str]) -> str | None:
    """Return the answer letter of a reply: strict parser, then a lone letter like `(c)`."""
    result = parse_strict(response, options)
    if result.letter is not None:
        return result.letter
    if isinstance(response, str):
        match = _LONE_LETTER.match(unicodedata.normalize("NFKC", response))
        if match and match.group(1).upper() in option_letters(len(options)):
            return match.group(1).upper()
    return None


def doc_to_visual(doc: dict[str, Any]) -> list[Any]:
    """Return the images sent with a row: the rendered image, then its figures."""
    images = [doc["image"]] if doc.get("image") is not None else []
    images += list(doc.get("figures") or [])
    return [image.convert("RGB") for image in images]


def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: dict[str, Any] | None = None) -> str:
    """Return the row's prompt, with optional pre/post prompts from the task YAML."""
    kwargs = lmms_eval_specific_kwargs or {}
    return f"{kwargs.get('pre_prompt', '')}{doc['prompt']}{kwargs.get('post_prompt', '')}"


def process_results(doc: dict[str, Any], results: Sequence[str]) -> dict[str, float]:
    """Score one reply: accuracy 1/0 and whether it was unparseable."""
    letter = parse_answer(results[0] if results else "", doc["options"])
    return {"accuracy": float(letter == doc["answer"]), "unparsed": float(letter is None)}
'''


def utils_source() -> str:
    """Return the generated utils.py: the strict parser's code plus the task functions."""
    strict = inspect.getsource(parsers_strict)
    body = strict[strict.index("from __future__ import annotations") :]
    kept = [
        line
        for line in body.splitlines()
        if not line.startswith(
            ("from __future__", "from factorial", "import re", "import unicodedata")
        )
        and not line.startswith(("from collections.abc", "from typing"))
    ]
    parts = [
        _UTILS_HEAD,
        f"LETTERS = {parsers.LETTERS!r}\n\n",
        _PARSE_RESULT,
        "\n\n" + inspect.getsource(parsers.option_letters),
        "\n".join(kept).strip("\n") + "\n",
        _UTILS_TAIL,
    ]
    return "\n".join(part.rstrip("\n") + "\n" for part in parts)


def task_config(task: str, data_file: Path) -> dict[str, object]:
    """Return the YAML config of one cell's task."""
    return {
        "task": task,
        "dataset_path": "parquet",
        "dataset_kwargs": {"data_files": {"test": str(data_file.resolve())}},
        "test_split": "test",
        "output_type": "generate_until",
        "doc_to_visual": "!function utils.doc_to_visual",
        "doc_to_text": "!function utils.doc_to_text",
        "doc_to_target": "answer",
        "process_results": "!function utils.process_results",
        "generation_kwargs": {"max_new_tokens": 1024, "temperature": 0.0, "do_sample": False},
        "metric_list": [
            {"metric": "accuracy", "aggregation": "mean", "higher_is_better": True},
            {"metric": "unparsed", "aggregation": "mean", "higher_is_better": False},
        ],
        "metadata": {"version": 0.0},
    }


def _dump(config: dict[str, object]) -> str:
    text = yaml.safe_dump(config, sort_keys=False, allow_unicode=True)
    # `!function` is a YAML tag lmms-eval resolves; safe_dump would quote it.
    return re.sub(r"'(!function [\w.]+)'", r"\1", text)


def export_lmms(rows: Sequence[ExportRow], dest: Path, name: str) -> list[Path]:
    """Write the task folder (parquet per cell, YAML per task, group YAML, utils.py)."""
    base = "itemshot_" + _NAME.sub("_", name.lower()).strip("_")
    cells: dict[str, list[ExportRow]] = defaultdict(list)
    for row in rows:
        cells[row.cell].append(row)
    written: list[Path] = []
    tasks: list[str] = []
    for cell, members in sorted(cells.items()):
        task = f"{base}_{_NAME.sub('_', cell)}"
        data = write_parquet(members, dest / "data" / f"{task}.parquet")
        config = dest / f"{task}.yaml"
        atomic_write(config, _dump(task_config(task, data)).encode("utf-8"))
        written += [data, config]
        tasks.append(task)
    group = dest / f"{base}.yaml"
    atomic_write(group, _dump({"group": base, "task": tasks}).encode("utf-8"))
    utils = dest / "utils.py"
    atomic_write(utils, utils_source().encode("utf-8"))
    return [*written, group, utils]


def export(rows: Sequence[ExportRow], dest: Path, name: str) -> list[Path]:
    """Write the export of `rows` into `dest` (the registry's entry point)."""
    return export_lmms(rows, dest, name)
