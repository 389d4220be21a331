"""Exports of a real (Chromium-rendered) sweep: HF parquet, lmms-eval task folder, VLMEvalKit TSV."""

from __future__ import annotations

import base64
import csv
import importlib.util
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from PIL import Image

from itemshot.cli import main
from itemshot.renderer.output import read_jsonl

datasets = pytest.importorskip("datasets")

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT.parent / "shared" / "fixtures" / "mmmu-pro-tool" / "data.jsonl"
LIMIT = 3
FORMATS = ("blind", "standard", "vision", "vision_text_only")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def sweep_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run a small sweep with figures (MMMU-Pro tool sample) and return its output folder."""
    base = tmp_path_factory.mktemp("sweep")
    design = base / "controls.yaml"
    design.write_text(
        f"name: mini_controls\n"
        f"dataset: {{path: {json.dumps(str(TOOL))}}}\n"
        f"factors:\n  format: [{', '.join(FORMATS)}]\n  n_options: [4, 10]\n",
        encoding="utf-8",
    )
    out = base / "out"
    args = ["sweep", str(design), "--out", str(out), "--limit", str(LIMIT), "--no-progress"]
    assert main(args) == 0
    return out


def _export(source: Path, target: str, dest: Path) -> None:
    assert main(["export", str(source), "--to", target, "--out", str(dest), "--name", "mini"]) == 0


def test_sweep_writes_figures_content_addressed(sweep_out: Path) -> None:
    rows = read_jsonl(sweep_out / "manifest.jsonl")
    assert len(rows) == LIMIT * len(FORMATS) * 2
    standard = [r for r in rows if r["format"] == "standard"]
    assert all(r["figures"] for r in standard)
    for row in standard:
        for path in row["figures"]:
            data = (sweep_out / path).read_bytes()
            assert Path(path).stem == __import__("hashlib").sha256(data).hexdigest()
    assert all(r["figures"] == [] for r in rows if r["format"] in ("blind", "vision"))
    assert all(r["figures"] for r in rows if r["format"] == "vision_text_only")


def test_hf_export_loads_with_datasets_and_decodes_images(sweep_out: Path, tmp_path: Path) -> None:
    _export(sweep_out, "hf", tmp_path)
    loaded = datasets.load_dataset(
        "parquet", data_files=str(tmp_path / "test.parquet"), split="train"
    )
    assert len(loaded) == LIMIT * len(FORMATS) * 2
    assert isinstance(loaded.features["image"], datasets.Image)
    for row in loaded:
        if row["format"] in ("vision", "vision_text_only"):
            assert isinstance(row["image"], Image.Image) and row["image"].size[0] > 100
        else:
            assert row["image"] is None
        if row["format"] in ("standard", "vision_text_only"):
            assert row["figures"] and all(isinstance(f, Image.Image) for f in row["figures"])
        assert row["answer"] in "ABCDEFGHIJ"[: len(row["options"])]
        assert json.loads(row["condition"])["format"] == row["format"]


def _load_utils(folder: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("itemshot_lmms_utils", folder / "utils.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _TaskLoader(yaml.SafeLoader):
    """A YAML loader that reads lmms-eval's `!function` tags as their text."""


_TaskLoader.add_constructor("!function", lambda loader, node: f"!function {node.value}")


def test_lmms_eval_export_tasks_and_answer_parsing(sweep_out: Path, tmp_path: Path) -> None:
    _export(sweep_out, "lmms-eval", tmp_path)
    group = yaml.load((tmp_path / "itemshot_mini.yaml").read_text(), Loader=_TaskLoader)
    assert group["group"] == "itemshot_mini" and len(group["task"]) == len(FORMATS) * 2
    utils = _load_utils(tmp_path)
    for task in group["task"]:
        config = yaml.load((tmp_path / f"{task}.yaml").read_text(), Loader=_TaskLoader)
        assert config["task"] == task and config["output_type"] == "generate_until"
        for key in ("doc_to_visual", "doc_to_text", "process_results"):
            assert config[key] == f"!function utils.{key}"
            assert callable(getattr(utils, key))
        assert {m["metric"] for m in config["metric_list"]} == {"accuracy", "unparsed"}
        data = config["dataset_kwargs"]["data_files"]["test"]
        docs = datasets.load_dataset(config["dataset_path"], data_files=data, split="train")
        doc = docs[0]
        visuals = utils.doc_to_visual(doc)
        expected = (doc["image"] is not None) + len(doc["figures"])
        assert len(visuals) == expected and all(v.mode == "RGB" for v in visuals)
        assert utils.doc_to_text(doc, {"pre_prompt": "", "post_prompt": ""}) == doc["prompt"]

    doc = {"options": ["w", "x", "y", "z"], "answer": "C"}
    assert utils.process_results(doc, ["Answer: C"]) == {"accuracy": 1.0, "unparsed": 0.0}
    assert utils.process_results(doc, ["(c)"]) == {"accuracy": 1.0, "unparsed": 0.0}
    assert utils.process_results(doc, ["The answer is (C)."])["accuracy"] == 1.0
    assert utils.process_results(doc, ["Answer: B"]) == {"accuracy": 0.0, "unparsed": 0.0}
    assert utils.process_results(doc, ["I am not sure"]) == {"accuracy": 0.0, "unparsed": 1.0}
    assert utils.process_results(doc, ["(e)"])["unparsed"] == 1.0  # outside A-D


LMMS_PYTHON = os.environ.get("ITEMSHOT_LMMS_EVAL_PYTHON")

_LMMS_CHECK = """
import sys
from lmms_eval.tasks import TaskManager, get_task_dict
manager = TaskManager(include_path=sys.argv[1])
assert "itemshot_mini" in manager.all_tasks, "group not registered"
tasks = get_task_dict(["itemshot_mini"], manager)
count = 0
for name, task in tasks.items():
    for sub in (task.values() if isinstance(task, dict) else [task]):
        docs = list(sub.test_docs())
        doc = docs[0]
        sub.doc_to_visual(doc); sub.doc_to_text(doc)
        assert sub.process_results(doc, [f"Answer: {doc['answer']}"])["accuracy"] == 1.0
        count += 1
print(count)
"""


@pytest.mark.skipif(
    not LMMS_PYTHON, reason="set ITEMSHOT_LMMS_EVAL_PYTHON to a python with lmms-eval"
)
def test_lmms_eval_task_loader_accepts_the_folder(sweep_out: Path, tmp_path: Path) -> None:
    _export(sweep_out, "lmms-eval", tmp_path)
    done = subprocess.run(
        [str(LMMS_PYTHON), "-c", _LMMS_CHECK, str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == str(len(FORMATS) * 2)


# VLMEvalKit's documented MCQ TSV fields (docs/en/Development.md, Table 1).
VLMEVALKIT_FIELDS = ("index", "image", "question", "A", "B", "C", "D", "answer", "category")


def test_vlmevalkit_tsv_has_the_mcq_columns(sweep_out: Path, tmp_path: Path) -> None:
    _export(sweep_out, "vlmevalkit", tmp_path)
    csv.field_size_limit(sys.maxsize)
    with (tmp_path / "mini.tsv").open(encoding="utf-8", newline="") as handle:
        table = list(csv.DictReader(handle, delimiter="\t"))
    header = list(table[0])
    assert all(name in header for name in VLMEVALKIT_FIELDS)
    assert header[header.index("A") : header.index("A") + 10] == list("ABCDEFGHIJ")
    skipped = read_jsonl(tmp_path / "skipped.jsonl")
    assert {s["reason"] for s in skipped} == {"no image to send"}
    assert len(skipped) == LIMIT * 2  # the blind rows
    assert len(table) == LIMIT * (len(FORMATS) - 1) * 2
    assert [int(r["index"]) for r in table] == list(range(len(table)))
    for row in table:
        encoded: Any = row["image"]
        images = json.loads(encoded) if encoded.startswith("[") else [encoded]
        for data in images:
            Image.open(io.BytesIO(base64.b64decode(data))).verify()
        shown = [letter for letter in "ABCDEFGHIJ" if row[letter]]
        assert shown == list("ABCDEFGHIJ"[: len(shown)])
        assert row["answer"] in shown
        assert row["l2-category"].startswith(row["format"])
