"""End to end: render with Chromium, verify the output set, audit external screenshots."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import OFFICIAL_SCREENSHOTS, SAMPLE_DATA, TOOL_DATA, run_cli
from PIL import Image

from itemshot.pipeline import RunSettings, run_jobs
from itemshot.renderer.adapters import load_dataset
from itemshot.renderer.jobs import JobRequest, plan
from itemshot.renderer.presentation import PresentationSpec
from itemshot.renderer.records import Layout
from itemshot.verify import verify_output_set

pytestmark = pytest.mark.slow
SCENES = ("exam_sheet", "tv_quiz")


@pytest.fixture(scope="module")
def sample_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Render the embedded sample dataset (English and Japanese items) in two scenes."""
    dataset = load_dataset(SAMPLE_DATA)
    requests = [JobRequest(i, PresentationSpec(scene=s)) for i in dataset.items for s in SCENES]
    out = tmp_path_factory.mktemp("verify-sample")
    assert run_jobs(plan(requests, 0), out, RunSettings(workers=2)).failed == 0
    return out


def _rows(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "manifest.jsonl").read_text().splitlines()]


def test_output_set_verdicts_go_into_the_manifest_and_report(sample_out: Path) -> None:
    """Every clean sample image passes; Japanese items are read with `jpn`."""
    items = load_dataset(SAMPLE_DATA).items
    summary = verify_output_set(sample_out, items=items, workers=2)
    rows = _rows(sample_out)
    failed = [(r["image"], r["verify"]["codes"]) for r in rows if r["verdict"] != "pass"]
    assert failed == []
    assert summary.total == len(rows) == summary.passed
    japanese = [r for r in rows if r["language"] == "ja"]
    assert japanese and all(r["verify"]["lang"] == "jpn" for r in japanese)
    assert all(r["verify"]["scores"]["question"] >= 0.9 for r in rows)
    page = (sample_out / "audit.html").read_text()
    assert f'src="{rows[0]["image"]}"' in page
    report = json.loads((sample_out / "audit.json").read_text())
    assert report["summary"]["passed"] == len(rows)
    assert not list(sample_out.glob(".tmp-*"))


def test_verify_command_flags_a_damaged_image(sample_out: Path, tmp_path: Path) -> None:
    """Painting over the question makes `itemshot verify` fail that image and exit 3."""
    out = tmp_path / "set"
    shutil.copytree(sample_out, out)
    row = next(r for r in _rows(out) if r["language"] == "en")
    layout = Layout.from_dict(json.loads((out / row["layout"]).read_text())["layout"])
    x0, y0, x1, y1 = (int(v) for v in layout.region("question").box)
    pixels = np.asarray(Image.open(out / row["image"]).convert("RGB")).copy()
    pixels[y0:y1, x0 + (x1 - x0) // 3 : x1] = 255
    Image.fromarray(pixels).save(out / row["image"])
    status = run_cli("verify", out, "--items", SAMPLE_DATA, "--workers", "2", "--no-progress")
    assert status == 3
    damaged = next(r for r in _rows(out) if r["image"] == row["image"])
    assert damaged["verdict"] == "fail"
    assert "text_mismatch" in damaged["verify"]["codes"]
    assert sum(r["verdict"] == "fail" for r in _rows(out)) == 1


def test_audit_command_on_official_screenshots(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Third-party pages are paired by `page_{n}`; the dropped `<image 1>` text is reported."""
    pages = tmp_path / "pages"
    pages.mkdir()
    source = OFFICIAL_SCREENSHOTS
    for n in (2, 5):
        shutil.copy(source / f"page_{n}.png", pages / f"page_{n}.png")
    status = run_cli(
        "audit", pages, "--items", TOOL_DATA, "--out", tmp_path / "report", "--no-progress"
    )
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.startswith("{")]
    assert [x["item_id"] for x in lines] == ["2", "5"]
    assert status == 3
    assert all("figure_reference_dropped:question" in x["reasons"] for x in lines)
    report = json.loads((tmp_path / "report" / "audit.json").read_text())
    stem = next(r for r in report["verdicts"][0]["regions"] if r["name"] == "question")
    assert stem["score"] >= 0.9
    assert (tmp_path / "report" / "audit.html").is_file()
