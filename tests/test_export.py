"""Exports of a real (Chromium-rendered) 2×2 + controls sweep, loaded by each harness's own code.

The truth every export is held to is the design's request for each row
(`messages.build_request`: the text and the images, in order), the same
request `itemshot predict` sends. lmms-eval runs for real (CLI and task
loader, from a venv `scripts/lmms_eval_env.sh` builds); HF exports load with
`datasets`; VLMEvalKit cannot be installed from a package index, so its TSV
is checked against VLMEvalKit's documented MCQ columns, read the way its
loader reads it (`pandas.read_csv(sep="\\t")`), and put through the exported
dataset module's prompt path.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import io
import json
import os
import shutil
import subprocess
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from PIL import Image

from itemshot.cli import main
from itemshot.factorial.answers.prompts import builtin_prompts
from itemshot.factorial.design.sweep import FORMATS as SWEEP_FORMATS
from itemshot.factorial.design.sweep import row_from_record
from itemshot.factorial.predict.messages import build_request
from itemshot.renderer.output import read_jsonl
from tests.conftest import MIX_DATA as MIX
from tests.conftest import OUTPUTS
from tests.conftest import TOOL_DATA as TOOL

datasets = pytest.importorskip("datasets")

LIMIT = 3
FORMATS = SWEEP_FORMATS  # the 2×2 formats and every control
# The cells whose whole question and options must be inside the image.
VISION_ONLY = ("vision", "vision_placeholder", "vision_text_only")
LMMS_PYTHON = os.environ.get("ITEMSHOT_LMMS_EVAL_PYTHON")
REPLY = (
    "The plotted values rise steadily and the second choice is the only one that matches\n"
    "the trend shown once the axes are read carefully.\n\nAnswer: B"
)

pytestmark = pytest.mark.slow


def _sweep(base: Path, name: str, extra: str, limit: int) -> Path:
    design = base / f"{name}.yaml"
    design.write_text(
        f"name: {name}\ndataset: {{path: {json.dumps(str(TOOL))}}}\n{extra}", encoding="utf-8"
    )
    out = base / name
    args = ["sweep", str(design), "--out", str(out), "--limit", str(limit), "--no-progress"]
    assert main(args) == 0
    return out


@pytest.fixture(scope="module")
def sweep_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2×2 + controls sweep of items with real figures (MMMU-Pro tool sample)."""
    factors = f"factors:\n  format: [{', '.join(FORMATS)}]\n  n_options: [4, 10]\n"
    return _sweep(tmp_path_factory.mktemp("sweep"), "controls", factors, LIMIT)


@pytest.fixture(scope="module")
def other_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A different sweep (other scene, other option levels' images) to export under the same name."""
    extra = (
        "factors:\n  format: [vision]\n  n_options: [4, 10]\npresentation: {scene: whiteboard}\n"
    )
    return _sweep(tmp_path_factory.mktemp("other"), "other", extra, LIMIT)


def _export(source: Path, target: str, dest: Path, name: str = "mini") -> int:
    return main(["export", str(source), "--to", target, "--out", str(dest), "--name", name])


def _design(out: Path) -> dict[str, dict[str, Any]]:
    """Return, per job key, what the design sends: text, image hashes, format, options."""
    expected = {}
    for record in read_jsonl(out / "manifest.jsonl"):
        row = row_from_record(record, out)
        request = build_request(row, builtin_prompts("direct", row.language))
        expected[row.job_key] = {
            "text": request.text,
            "images": [part.sha256 for part in request.images],
            "pixels": [_pixels(part.data) for part in request.images],
            "format": row.format,
            "options": list(row.options),
            "n_options": row.option_level,
            "answer": row.answer,
        }
    return expected


def _pixels(data: bytes) -> str:
    with Image.open(io.BytesIO(data)) as image:
        return hashlib.sha256(image.convert("RGB").tobytes()).hexdigest()


def _no_option_text(text: str, options: list[str]) -> bool:
    listed = any(f"{letter}. " in text for letter in "ABCDEFGHIJ")
    return not listed and not any(option.strip() and option in text for option in options)


# --- HF datasets -----------------------------------------------------------------------------


def test_hf_export_is_typed_faithful_and_has_a_card(sweep_out: Path, tmp_path: Path) -> None:
    assert _export(sweep_out, "hf", tmp_path) == 0
    expected = _design(sweep_out)
    loaded = datasets.load_dataset(str(tmp_path), split="test")  # through the card's configs
    assert len(loaded) == len(expected) == LIMIT * len(FORMATS) * 2
    assert loaded.features["n_options"].dtype == "int64"
    four = loaded.filter(lambda r: r["n_options"] == 4)
    assert len(four) == LIMIT * len(FORMATS) and set(four["option_level"]) == {"4"}
    raw = loaded.cast_column("image", datasets.Image(decode=False)).cast_column(
        "figures", datasets.Sequence(datasets.Image(decode=False))
    )
    for row in raw:
        design = expected[row["id"]]
        sent = ([row["image"]] if row["image"] else []) + list(row["figures"])
        assert [hashlib.sha256(i["bytes"]).hexdigest() for i in sent] == design["images"]
        assert all(i["path"].startswith(hashlib.sha256(i["bytes"]).hexdigest()) for i in sent)
        assert row["prompt"] == design["text"] and row["format"] == design["format"]
        if row["format"] in VISION_ONLY:
            assert _no_option_text(row["prompt"], design["options"])
        assert row["missing_figures"] == []
    from huggingface_hub import DatasetCard

    card = DatasetCard.load(tmp_path / "README.md")
    [data_files] = card.data.configs[0]["data_files"]
    assert data_files["split"] == "test" and (tmp_path / data_files["path"]).is_file()
    assert "| vision·10 | 3 |" in card.text  # the cell as the analysis names it


def test_hf_export_flags_missing_figures(tmp_path: Path) -> None:
    design = tmp_path / "mix.yaml"
    design.write_text(
        f"name: mix\ndataset: {{path: {json.dumps(str(MIX))}, missing_images: placeholder}}\n"
        "factors:\n  format: [blind, standard]\n  n_options: [4, 10]\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    assert main(["sweep", str(design), "--out", str(out), "--limit", "4", "--no-progress"]) == 0
    assert _export(out, "hf", tmp_path / "hf") == 0
    loaded = datasets.load_dataset(str(tmp_path / "hf"), split="test")
    manifest = {r["job_key"]: r for r in read_jsonl(out / "manifest.jsonl")}
    assert any(row["missing_figures"] for row in loaded)
    for row in loaded:
        assert row["missing_figures"] == manifest[row["id"]]["missing_figures"]
        if row["missing_figures"] and row["format"] == "standard":
            assert row["figures"] == [] and "<image 1>" in row["prompt"]


def test_hf_reexport_under_the_same_path_serves_the_new_images(
    sweep_out: Path, other_out: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "hf-cache"
    dest = tmp_path / "hf"
    loads = []
    for source in (sweep_out, other_out):
        assert _export(source, "hf", dest) == 0
        loaded = datasets.load_dataset(str(dest), split="test", cache_dir=str(cache))
        loaded = loaded.cast_column("image", datasets.Image(decode=False))
        loads.append({r["id"]: r["image"] for r in loaded})
    assert set(loads[1]) == set(_design(other_out))
    for key, image in loads[1].items():
        assert hashlib.sha256(image["bytes"]).hexdigest() == _design(other_out)[key]["images"][0]


# --- lmms-eval -------------------------------------------------------------------------------


def _lmms_python() -> str:
    if not LMMS_PYTHON:
        if os.environ.get("CI"):
            pytest.fail("ITEMSHOT_LMMS_EVAL_PYTHON is not set (scripts/test.sh sets it)")
        pytest.skip("set ITEMSHOT_LMMS_EVAL_PYTHON (scripts/lmms_eval_env.sh builds the venv)")
    return LMMS_PYTHON


def _lmms_env(cache: Path) -> dict[str, str]:
    return {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "HF_DATASETS_CACHE": str(cache),
        "HF_HOME": str(cache / "home"),
    }


class _TaskLoader(yaml.SafeLoader):
    """A YAML loader that reads lmms-eval's `!function` tags as their text."""


_TaskLoader.add_constructor("!function", lambda loader, node: f"!function {node.value}")

# Loads the group with lmms-eval's own task manager and prints, per doc, what it would send.
_LMMS_DOCS = """
import hashlib, json, sys
from lmms_eval.tasks import TaskManager, get_task_dict
manager = TaskManager(include_path=sys.argv[1])
tasks = get_task_dict([sys.argv[2]], manager)
def leaves(node):
    for value in node.values():
        yield from (leaves(value) if isinstance(value, dict) else [value])
out = {}
for task in leaves(tasks):
    for doc in task.test_docs():
        visuals = task.doc_to_visual(doc)
        out[doc["id"]] = {
            "task": task.config.task,
            "text": task.doc_to_text(doc),
            "pixels": [hashlib.sha256(v.convert("RGB").tobytes()).hexdigest() for v in visuals],
            "until": task.config.generation_kwargs["until"],
            "cell": doc["cell"],
        }
print(json.dumps(out))
"""


def _lmms_docs(folder: Path, group: str, cache: Path) -> dict[str, Any]:
    done = subprocess.run(
        [_lmms_python(), "-c", _LMMS_DOCS, str(folder), group],
        capture_output=True,
        text=True,
        check=False,
        env=_lmms_env(cache),
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_lmms_eval_loader_sends_what_the_design_says(
    sweep_out: Path, other_out: Path, tmp_path: Path
) -> None:
    dest = tmp_path / "lmms"
    cache = tmp_path / "cache"
    assert _export(sweep_out, "lmms-eval", dest) == 0
    group = yaml.load((dest / "itemshot_mini.yaml").read_text(), Loader=_TaskLoader)
    assert len(group["task"]) == len(FORMATS) * 2 and group["aggregate_metric_list"]
    expected = _design(sweep_out)
    docs = _lmms_docs(dest, "itemshot_mini", cache)
    assert set(docs) == set(expected)
    for key, doc in docs.items():
        design = expected[key]
        assert doc["text"] == design["text"] and doc["pixels"] == design["pixels"], key
        assert doc["until"] == []
        if design["format"] in VISION_ONLY:
            assert _no_option_text(doc["text"], design["options"])

    # Another sweep exported under the same name into the same folder, read with the
    # same datasets cache: lmms-eval must see the new images and only the new cells.
    assert _export(other_out, "lmms-eval", dest) == 0
    again = _lmms_docs(dest, "itemshot_mini", cache)
    other = _design(other_out)
    assert set(again) == set(other)
    assert all(again[key]["pixels"] == other[key]["pixels"] for key in other)
    assert not list(dest.glob("itemshot_mini_standard_*.yaml"))


def _run_lmms_cli(folder: Path, task: str, reply: str, cwd: Path, cache: Path) -> dict[str, Any]:
    """Run the lmms-eval CLI with the dummy model; return its results JSON.

    Its exit status is not enough: lmms-eval logs "Error during evaluation"
    and exits 0 when a task fails to load, so a run counts only when it wrote
    its results file.
    """
    cli = Path(_lmms_python()).with_name("lmms-eval")
    results = cwd / "results"
    done = subprocess.run(
        [
            str(cli),
            "--tasks",
            task,
            "--include_path",
            str(folder),
            "--model",
            "dummy",
            "--model_args",
            f"response={reply}",
            "--output_path",
            str(results),
            "--log_samples",
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
        env=_lmms_env(cache),
        timeout=1800,
    )
    log = done.stdout + done.stderr
    assert done.returncode == 0 and "Error during evaluation" not in log, log[-3000:]
    found = sorted(results.rglob("*_results.json"))
    assert found, f"lmms-eval wrote no results:\n{log[-3000:]}"
    return {
        "results": json.loads(found[-1].read_text()),
        "samples": sorted(results.rglob("*_samples_*.jsonl")),
    }


def test_lmms_eval_cli_scores_equal_itemshot_analyze(sweep_out: Path, tmp_path: Path) -> None:
    import itemshot

    exported = tmp_path / "exported"
    assert _export(sweep_out, "lmms-eval", exported) == 0
    moved = tmp_path / "elsewhere" / "task"
    shutil.copytree(exported, moved)  # a copied folder must still load
    shutil.rmtree(exported)
    run = _run_lmms_cli(moved, "itemshot_mini", REPLY, tmp_path, tmp_path / "cache")

    predictions = tmp_path / "predictions.jsonl"
    manifest = read_jsonl(sweep_out / "manifest.jsonl")
    predictions.write_text(
        "".join(
            json.dumps({"condition_id": r["job_key"], "response": REPLY}) + "\n" for r in manifest
        )
    )
    analysis = itemshot.analyze(predictions, sweep_out, bootstrap=10)
    ours = {(cell.format, cell.n_options): cell.accuracy.rate for cell in analysis.runs[0].cells}
    theirs = {}
    for task, metrics in run["results"]["results"].items():
        if task == "itemshot_mini":
            continue
        fmt, level = task.removeprefix("itemshot_mini_").rsplit("_", 1)
        theirs[(fmt, int(level))] = metrics["accuracy,none"]
        assert metrics["unparsed,none"] == 0.0
    assert theirs == pytest.approx(ours) and len(theirs) == len(FORMATS) * 2
    assert any(ours.values()) and not all(ours.values())  # right in some cells, not all
    overall = run["results"]["results"]["itemshot_mini"]["accuracy,none"]
    assert overall == pytest.approx(sum(r["answer"] == "B" for r in manifest) / len(manifest))
    # Every logged sample names its row, item, cell and condition.
    keys = {r["job_key"] for r in manifest}
    for path in run["samples"]:
        for sample in read_jsonl(path):
            assert sample["id"] in keys and sample["item_id"] and sample["cell"]
            assert sample["condition"]["format"] in FORMATS
            assert sample["filtered_resps"].endswith("Answer: B")  # the final line is kept


def test_lmms_eval_utils_read_answers_as_itemshot_does(sweep_out: Path, tmp_path: Path) -> None:
    from itemshot.factorial.answers.parsers import coerce_options
    from itemshot.factorial.answers.parsers_strict import parse_strict

    assert _export(sweep_out, "lmms-eval", tmp_path) == 0
    utils = _load_module(tmp_path / "utils.py")
    records = read_jsonl(OUTPUTS / "gpt-4o_vision_cot.jsonl")
    assert records
    for record in records:
        options = coerce_options(record["options"])  # published as a stringified Python list
        doc = {
            "options": options,
            "answer": record["answer"],
            "id": "x",
            "item_id": "x",
            "cell": "c",
        }
        scored = utils.process_results(doc, [record["response"]])
        assert scored["parsed"] == parse_strict(record["response"], options).letter


def _load_module(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"export_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- VLMEvalKit ------------------------------------------------------------------------------

# VLMEvalKit's documented MCQ TSV fields (docs/en/Development.md, Table 1).
VLMEVALKIT_FIELDS = ("index", "image", "question", "A", "B", "C", "D", "answer", "category")


def _vlmeval_table(folder: Path) -> Any:
    import pandas as pd

    return pd.read_csv(folder / "mini.tsv", sep="\t")  # as VLMEvalKit's `load` reads a TSV


def test_vlmevalkit_tsv_and_prompt_path_follow_the_design(
    sweep_out: Path, other_out: Path, tmp_path: Path
) -> None:
    assert _export(sweep_out, "vlmevalkit", tmp_path) == 0
    table = _vlmeval_table(tmp_path)
    assert all(name in table.columns for name in VLMEVALKIT_FIELDS)
    assert list(table["index"]) == list(range(len(table)))
    module = _load_module(tmp_path / "itemshot_vlmeval.py")
    assert module.DATASET == "mini"
    expected = _design(sweep_out)
    assert set(table["id"]) == set(expected)  # every row, blind ones included
    for line in (table.iloc[i] for i in range(len(table))):
        design = expected[line["id"]]
        blobs = [base64.b64decode(b) for b in module.cell_values(line["image"])]
        names = module.cell_values(line["image_path"])
        assert [hashlib.sha256(b).hexdigest() for b in blobs] == design["images"]
        assert [Path(n).stem for n in names] == design["images"]  # content-addressed cache names
        assert module.row_options(line) == design["options"]
        assert line["answer"] == design["answer"] and line["split"] == line["cell"]
        messages = module.row_messages(line, names)
        images = [m["value"] for m in messages if m["type"] == "image"]
        text = "".join(m["value"] for m in messages if m["type"] == "text")
        assert [Path(p).stem for p in images] == design["images"]
        if design["format"] == "standard" and images:
            # figures stand where their first `<image N>` tag stood
            numbers = module.cell_values(line["figure_numbers"])
            stripped = design["text"]
            for number in numbers:
                stripped = stripped.replace(f"<image {number}>", "", 1)
            assert text == stripped and messages[0]["type"] == "text"
        else:
            assert text == design["text"] and (not images or messages[-1]["type"] == "text")
        if design["format"] in VISION_ONLY:
            assert _no_option_text(text, design["options"])

    # A different sweep under the same name: other bytes get other cache names.
    assert _export(other_out, "vlmevalkit", tmp_path) == 0
    names = {
        n for value in _vlmeval_table(tmp_path)["image_path"] for n in module.cell_values(value)
    }
    assert {Path(n).stem for n in names} == {d["images"][0] for d in _design(other_out).values()}


def test_vlmevalkit_scoring_equals_itemshot_analyze(sweep_out: Path, tmp_path: Path) -> None:
    import itemshot

    assert _export(sweep_out, "vlmevalkit", tmp_path) == 0
    module = _load_module(tmp_path / "itemshot_vlmeval.py")
    table = _vlmeval_table(tmp_path)
    # VLMEvalKit's prediction file is the dataset's rows (less the images) plus `prediction`.
    records = table.drop(columns=["image"]).assign(prediction=REPLY).to_dict("records")
    scored = [{**row, **module.score_reply(row)} for row in records]
    per_cell = {row["split"]: row["accuracy"] for row in module.accuracy_table(scored)}

    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(
        "".join(json.dumps({"condition_id": r["id"], "response": REPLY}) + "\n" for r in records)
    )
    analysis = itemshot.analyze(predictions, sweep_out, bootstrap=10)
    for cell in analysis.runs[0].cells:  # one name per cell: VLMEvalKit's split is the label
        assert per_cell[cell.label] == pytest.approx(cell.accuracy.rate)


def test_export_summary_counts_what_the_files_hold(
    sweep_out: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for target in ("hf", "lmms-eval", "vlmevalkit"):
        assert _export(sweep_out, target, tmp_path / target) == 0
        assert f"exported {LIMIT * len(FORMATS) * 2} rows" in capsys.readouterr().err
    assert len(_vlmeval_table(tmp_path / "vlmevalkit")) == LIMIT * len(FORMATS) * 2
