"""`itemshot sweep` end to end with real Chromium on a few items of the MMMU-Pro mix."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from itemshot.cli import main
from itemshot.factorial.design.sweep import read_manifest
from itemshot.renderer.output import read_jsonl
from itemshot.renderer.sample import sample_jsonl
from tests.conftest import MIX_DATA as MIX
from tests.conftest import ROOT

LIMIT = 6

pytestmark = pytest.mark.slow


def _design(tmp_path: Path, n_options: str) -> Path:
    path = tmp_path / f"design-{n_options.replace(', ', '-')}.yaml"
    path.write_text(
        f"name: mini_2x2\n"
        f"dataset: {{path: {json.dumps(str(MIX))}, missing_images: placeholder}}\n"
        f"factors:\n  format: [standard, vision]\n  n_options: [{n_options}]\n"
        f"presentation: {{scene: exam_sheet, font_style: regular}}\n",
        encoding="utf-8",
    )
    return path


def _sweep(design: Path, out: Path) -> dict[str, Any]:
    status = main(["sweep", str(design), "--out", str(out), "--limit", str(LIMIT), "--no-progress"])
    assert status == 0
    return json.loads((out / "sweep.json").read_text(encoding="utf-8"))


def test_sweep_2x2_renders_once_and_only_new_jobs(tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = _sweep(_design(tmp_path, "4, 10"), out)
    assert first["render"]["rendered"] == LIMIT * 2
    assert first["render"]["skipped"] == 0
    assert first["rows"] == LIMIT * 4 and first["failed_rows"] == 0

    rows = read_jsonl(out / "manifest.jsonl")
    cells = Counter((row["item_id"], row["format"], row["n_options"]) for row in rows)
    assert len(cells) == LIMIT * 4 and set(cells.values()) == {1}
    for row in rows:
        assert row["status"] == "ok"
        assert row["condition"]["format"] == row["format"]
        assert row["condition"]["n_options"] == row["n_options"]
        if row["format"] == "vision":
            assert (out / row["image"]).is_file()
            assert row["presentation"]["scene"] == "exam_sheet"
        else:
            assert row["image"] is None and row["prompt"].startswith(row["question"][:20])
            assert row["missing_figures"]  # the mix file has no figure files
        letters = "ABCDEFGHIJ"[: len(row["options"])]
        assert row["answer"] in letters
    four = [r for r in rows if r["n_options"] == 4]
    assert all(r["option_policy"] == "original_4" for r in four)

    # The analysis reads the same manifest: four cells per item.
    manifest = read_manifest(out)
    assert not manifest.skipped
    assert Counter((r.format, r.option_level) for r in manifest.rows) == {
        ("standard", 4): LIMIT,
        ("standard", 10): LIMIT,
        ("vision", 4): LIMIT,
        ("vision", 10): LIMIT,
    }

    again = _sweep(_design(tmp_path, "4, 10"), out)
    assert again["render"]["rendered"] == 0
    assert again["render"]["skipped"] == LIMIT * 2
    assert read_jsonl(out / "manifest.jsonl") == rows

    changed = _sweep(_design(tmp_path, "4, all"), out)
    assert changed["render"]["rendered"] == LIMIT
    assert changed["render"]["skipped"] == LIMIT
    levels = Counter(row["n_options"] for row in read_jsonl(out / "manifest.jsonl"))
    assert levels == {4: LIMIT * 2, "all": LIMIT * 2}


def test_sweep_rejects_a_bad_design_with_the_key(tmp_path: Path, capsys: Any) -> None:
    design = tmp_path / "bad.yaml"
    design.write_text(f"dataset: {{path: {json.dumps(str(MIX))}}}\nfactors: {{format: [photo]}}\n")
    assert main(["sweep", str(design), "--out", str(tmp_path / "out")]) == 2
    assert "factors.format" in capsys.readouterr().err


def test_shipped_design_reads_the_sample_or_the_dataset_given(tmp_path: Path) -> None:
    design = ROOT / "designs" / "mmmu_pro_2x2.yaml"
    runs = {"sample": (), "mix": ("--dataset", str(MIX))}
    for name, extra in runs.items():
        out = tmp_path / name
        args = ["sweep", str(design), *extra, "--out", str(out), "--limit", "2", "--no-progress"]
        assert main(args) == 0
        source = sample_jsonl() if name == "sample" else MIX
        first = [json.loads(line)["id"] for line in source.read_text(encoding="utf-8").splitlines()]
        rows = read_jsonl(out / "manifest.jsonl")
        assert {row["item_id"] for row in rows} == set(first[:2]), name
        assert all(row["status"] == "ok" for row in rows)
        summary = json.loads((out / "sweep.json").read_text(encoding="utf-8"))
        assert Path(summary["dataset"]).resolve() == source.resolve()
