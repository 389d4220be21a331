"""Datasets as people download them from the Hub: parquet shards in config folders, Hub ids.

The folders and the Hugging Face cache are built here from the MMMU-Pro tool
fixture in the Hub's own layout (MMMU-Pro: one folder per config, MMMU: one
per subject with dev/validation splits, or a card's `configs:` header).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from itemshot.cli import main
from itemshot.factorial.design.controller import load_items
from itemshot.factorial.design.design import load_design
from itemshot.renderer.adapters import DatasetError, load_dataset
from itemshot.renderer.adapters.hub import select
from itemshot.renderer.output import read_jsonl
from tests.conftest import ROOT, TOOL_DATA

TEN = "standard (10 options)"
_IMAGE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])


def _hub_rows(prefix: str, start: int, count: int) -> list[dict]:
    """Return MMMU-style rows (`image_N` as {bytes, path}) made from the tool fixture."""
    rows = []
    lines = TOOL_DATA.read_text(encoding="utf-8").splitlines()[start : start + count]
    for number, line in enumerate(lines, start=start + 1):
        record = json.loads(line)
        row = {
            "id": f"{prefix}_{number}",
            "question": record["question"],
            "options": str(record["options"]),
            "answer": record["answer"],
            "subject": "Tool",
        }
        for n in range(1, 8):
            path = record.get(f"image_{n}")
            row[f"image_{n}"] = (
                {"bytes": (TOOL_DATA.parent / path).read_bytes(), "path": Path(path).name}
                if path
                else None
            )
        rows.append(row)
    return rows


def _shard(path: Path, rows: list[dict]) -> None:
    schema = pa.schema(
        [(k, pa.string()) for k in ("id", "question", "options", "answer", "subject")]
        + [(f"image_{n}", _IMAGE) for n in range(1, 8)]
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)


def _mmmu_pro_folder(root: Path) -> Path:
    """MMMU-Pro's layout: a folder per config, `test` shards in each."""
    _shard(root / TEN / "test-00000-of-00002.parquet", _hub_rows("ten", 0, 2))
    _shard(root / TEN / "test-00001-of-00002.parquet", _hub_rows("ten", 2, 2))
    _shard(root / "standard (4 options)" / "test-00000-of-00001.parquet", _hub_rows("four", 4, 2))
    return root


def test_config_and_split_choose_the_shards(tmp_path: Path) -> None:
    root = _mmmu_pro_folder(tmp_path / "MMMU_Pro")
    dataset = load_dataset(root, config=TEN, split="test")
    assert [item.id for item in dataset.items] == ["ten_1", "ten_2", "ten_3", "ten_4"]
    assert all(item.figures for item in dataset.items) and dataset.format == "mmmu_hf"
    assert len(load_dataset(root, config="all", split="test").items) == 6
    with pytest.raises(DatasetError, match=r"several configs.*standard \(10 options\)"):
        load_dataset(root)
    with pytest.raises(DatasetError, match="no split 'validation'; available: 'test'"):
        load_dataset(root, config=TEN, split="validation")


def test_mmmu_subject_folders_and_card_configs(tmp_path: Path) -> None:
    mmmu = tmp_path / "MMMU"
    for subject in ("Accounting", "Art"):
        for split, start in (("dev", 0), ("validation", 2)):
            _shard(mmmu / subject / f"{split}-00000-of-00001.parquet", _hub_rows(subject, start, 2))
    chosen = select(mmmu, "Art", "validation")
    assert [p.relative_to(mmmu).as_posix() for p in chosen.files] == [
        "Art/validation-00000-of-00001.parquet"
    ]
    assert len(load_dataset(mmmu, config="all", split="dev").items) == 4

    carded = tmp_path / "carded"
    _shard(carded / "data" / "eval-part0.parquet", _hub_rows("c", 0, 3))
    (carded / "README.md").write_text(
        "---\nconfigs:\n- config_name: main\n  data_files:\n  - split: test\n"
        "    path: data/eval-*.parquet\n---\n# A card\n",
        encoding="utf-8",
    )
    assert len(load_dataset(carded, split="test").items) == 3


def test_render_a_hub_folder_from_the_command_line(tmp_path: Path) -> None:
    root = _mmmu_pro_folder(tmp_path / "MMMU_Pro")
    out = tmp_path / "out"
    args = ["render", str(root), "--config", TEN, "--split", "test", "--out", str(out)]
    assert main([*args, "--limit", "2", "--no-verify", "--no-progress"]) == 0
    rows = read_jsonl(out / "manifest.jsonl")
    assert [row["item_id"] for row in rows] == ["ten_1", "ten_2"]
    assert all(row["status"] == "ok" and (out / row["image"]).is_file() for row in rows)
    assert main(["render", str(root), "--out", str(out / "x"), "--no-progress"]) == 2


def _hub_cache(home: Path, repo: str) -> None:
    """Lay out a dataset in the Hugging Face cache as a download with `datasets` leaves it."""
    commit = "0" * 40
    folder = home / "hub" / f"datasets--{repo.replace('/', '--')}"
    (folder / "refs").mkdir(parents=True)
    (folder / "refs" / "main").write_text(commit)
    _mmmu_pro_folder(folder / "snapshots" / commit)


def test_render_a_cached_hub_id_offline(tmp_path: Path) -> None:
    home = tmp_path / "hf-home"
    _hub_cache(home, "MMMU/MMMU_Pro")
    env = {**os.environ, "HF_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    env.pop("HF_HUB_CACHE", None)
    out = tmp_path / "out"
    itemshot = ROOT / ".venv" / "bin" / "itemshot"
    command = [str(itemshot), "render", "MMMU/MMMU_Pro", "--config", TEN, "--split", "test"]
    command += ["--out", str(out), "--limit", "1", "--no-verify", "--no-progress"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert [row["item_id"] for row in read_jsonl(out / "manifest.jsonl")] == ["ten_1"]
    missing = subprocess.run(
        [str(itemshot), "render", "nobody/nothing", "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert missing.returncode == 2 and "not in the local cache" in missing.stderr


def test_design_file_names_config_and_split(tmp_path: Path) -> None:
    root = _mmmu_pro_folder(tmp_path / "MMMU_Pro")
    design = tmp_path / "design.yaml"
    design.write_text(
        f"name: hub\ndataset: {{path: MMMU_Pro, config: {json.dumps(TEN)}, split: test}}\n"
        "factors:\n  format: [standard]\n",
        encoding="utf-8",
    )
    loaded = load_design(design)
    assert loaded.dataset.path == root and loaded.dataset.config == TEN
    assert [item.id for item in load_items(loaded).items] == ["ten_1", "ten_2", "ten_3", "ten_4"]
    four = load_items(loaded, config="standard (4 options)")
    assert [item.id for item in four.items] == ["four_5", "four_6"]
