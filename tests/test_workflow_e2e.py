"""The researcher's whole workflow, through the CLI, on real MMMU-Pro items.

sweep (a 2×2 plus a font-style ablation, verified) → the same sweep again →
export to the three harnesses → predict against a loopback OpenAI-compatible
stand-in that answers one whole cell wrong and refuses, fails or stalls a few
requests → analyze → the report. Each stage runs as a user runs it: a new
`itemshot` process, its exit status and its files.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from itemshot.factorial.design.cells import cell_slug
from tests.conftest import TOOL_DATA, TOOL_IMAGES
from tests.fault_injection import cli_command
from tests.test_predict import StandIn

pytestmark = pytest.mark.slow

# Four real items of the screenshot tool's input (line numbers): two with 10
# options, one with 9 and one with 4, so the "10 options" cell shows 4, 9 and 10.
LINES = (4, 5, 8, 12)
WRONG_CELL = {"format": "vision", "n_options": 10, "font_style": "mono"}
REFUSED = ("2", "standard", 4)  # item, format, n_options: HTTP 401 (auth, not retried)
BROKEN = ("3", "standard", 10)  # HTTP 500 on every attempt (server_error)
STALLED = ("1", "standard", 10)  # no answer within --timeout on every attempt (timeout)

DESIGN = """\
name: e2e
dataset: {path: data/data.jsonl}
design: full
factors:
  format: [standard, vision]
  n_options: [4, 10]
  font_style: [regular, mono]
presentation: {scene: webpage, resolution: 768}
seed: 0
"""


def _itemshot(cwd: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    """Run `itemshot ARGS` as a new process in `cwd` and return how it ended."""
    environment = {**os.environ, "NO_ALBUMENTATIONS_UPDATE": "1", "COLUMNS": "200"}
    return subprocess.run(
        cli_command(*args),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env=environment,
        check=False,
    )


def _workspace(root: Path) -> Path:
    """Write the dataset (four real rows, verbatim, with their figures) and the design."""
    data = root / "data"
    (data / "images").mkdir(parents=True)
    lines = TOOL_DATA.read_text(encoding="utf-8").splitlines()
    kept = [lines[number - 1] for number in LINES]
    for line in kept:
        for key, value in json.loads(line).items():
            if key.startswith("image_"):
                shutil.copyfile(TOOL_IMAGES / Path(value).name, data / value)
    (data / "data.jsonl").write_text("\n".join(kept) + "\n", encoding="utf-8")
    (root / "design.yaml").write_text(DESIGN, encoding="utf-8")
    return root


def _manifest(out: Path) -> list[dict[str, Any]]:
    text = (out / "manifest.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _cell_of(row: dict[str, Any]) -> tuple[str, str, int]:
    return (row["item_id"], row["format"], row["n_options"])


class Model:
    """The stand-in's model: knows each request's manifest row by its image or its text."""

    def __init__(self, out: Path) -> None:
        self.by_image: dict[str, dict[str, Any]] = {}
        self.by_text: dict[str, dict[str, Any]] = {}
        for row in _manifest(out):
            if row["image"]:
                self.by_image[_sha256(out / row["image"])] = row
            else:  # two rows asking the same (4 options at both levels) send one request
                self.by_text[row["prompt"]] = row

    def row(self, body: dict[str, Any]) -> dict[str, Any]:
        """Return the manifest row a request asks about."""
        content = body["messages"][0]["content"]
        for part in content:
            if part["type"] == "image_url":
                data = part["image_url"]["url"].split(",", 1)[1]
                found = self.by_image.get(hashlib.sha256(base64.b64decode(data)).hexdigest())
                if found is not None:
                    return found
        return self.by_text[content[0]["text"]]

    def answer(self, body: dict[str, Any]) -> str:
        """Answer right, except every item of WRONG_CELL, answered with another letter."""
        row = self.row(body)
        letter = row["answer"]
        if all(row["condition"].get(k, row.get(k)) == v for k, v in WRONG_CELL.items()):
            letter = "A" if letter != "A" else "B"
        return f"The answer is ({letter}).\nAnswer: {letter}"

    def behave(self, body: dict[str, Any]) -> str:
        """Refuse one request (401), fail one on every attempt (500), let one time out."""
        cell = _cell_of(self.row(body))
        return {REFUSED: "401", BROKEN: "500", STALLED: "timeout"}.get(cell, "ok")


def test_sweep_export_predict_analyze_on_real_items(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    out = root / "set"

    # 1. The sweep, verified: every vision image gets a verdict in the manifest.
    first = _itemshot(root, "sweep", "design.yaml", "--out", out, "--verify", "--no-progress")
    assert first.returncode == 0, first.stderr + first.stdout
    rows = _manifest(out)
    vision = [row for row in rows if row["format"] == "vision"]
    assert len(rows) == 4 * 2 + 4 * 2 * 2 and len(vision) == 16  # standard ×2, vision ×4
    assert all(row["verify"]["passed"] for row in vision), [r["verify"] for r in vision]
    verdicts = {row["job_key"]: row["verify"] for row in vision}

    # 2. The same sweep again: nothing rendered, every verdict kept.
    again = _itemshot(root, "sweep", "design.yaml", "--out", out, "--no-progress")
    assert again.returncode == 0, again.stderr + again.stdout
    summary = json.loads((out / "sweep.json").read_text(encoding="utf-8"))
    assert (summary["render"]["rendered"], summary["render"]["skipped"]) == (0, 16)
    assert {row["job_key"]: row.get("verify") for row in _manifest(out) if row["image"]} == verdicts

    # 3. Exports to the three harnesses, each holding every row.
    for harness in ("hf", "lmms-eval", "vlmevalkit"):
        export = _itemshot(root, "export", out, "--to", harness, "--out", f"export-{harness}")
        assert export.returncode == 0, export.stderr
        assert "exported 24 rows" in export.stdout + export.stderr
    [parquet] = (root / "export-hf" / "data").glob("test-*.parquet")
    assert len(pd.read_parquet(parquet)) == 24
    tasks = sorted(p.stem for p in (root / "export-lmms-eval").glob("itemshot_*_*.yaml"))
    assert len(tasks) == 6  # one task per cell: standard ×2, vision ×2 × font style ×2
    assert len(pd.read_csv(root / "export-vlmevalkit" / "set.tsv", sep="\t")) == 24

    # 4. predict: one cell answered wrong throughout, one request refused, one failing.
    model = Model(out)
    with StandIn([], answer=model.answer, behave=model.behave) as server:
        predict = _itemshot(
            root, "predict", out, "--endpoint", server.endpoint, "--model", "stand-in",
            "--concurrency", "4", "--max-attempts", "2", "--retry-delay", "0.01",
            "--timeout", "4",
        )  # fmt: skip
    assert predict.returncode == 3, predict.stderr  # some rows failed
    lines = " ".join(predict.stderr.split())  # the console wraps long lines
    for kind in ("auth", "server_error", "timeout"):  # one line per kind, with its count
        assert lines.count(f"failed {kind}: 1 row") == 1, predict.stderr
    assert "HTTP 401" in lines and "HTTP 500" in lines
    assert "3 of 24 rows failed" in lines
    predictions = [
        json.loads(line)
        for line in (out / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert len(predictions) == 24
    failed = {p["error"]["kind"] for p in predictions if p["error"]}
    assert failed == {"auth", "server_error", "timeout"}

    # 5. analyze: the 0 % cell and the failed rows make a report, not a traceback.
    analyze = _itemshot(
        root, "analyze", out / "predictions.jsonl", "--sets", out, "--parser", "strict",
        "--report", "report", "--bootstrap", "200",
    )  # fmt: skip
    assert analyze.returncode == 0, analyze.stderr
    report = root / "report"
    markdown = (report / "report.md").read_text(encoding="utf-8")
    results = json.loads((report / "results.json").read_text(encoding="utf-8"))
    [run] = results["runs"]
    cells = {cell["label"]: cell for cell in run["cells"]}
    assert set(cells) == {
        "standard·4",
        "standard·10",
        "vision·4·font_style=mono",
        "vision·4·font_style=regular",
        "vision·10·font_style=mono",
        "vision·10·font_style=regular",
    }
    wrong = cells["vision·10·font_style=mono"]["accuracy"]
    assert (wrong["correct"], wrong["n"], wrong["low"]) == (0, 4, 0.0)  # the 0 % cell
    right = cells["vision·10·font_style=regular"]["accuracy"]
    assert (right["correct"], right["n"], right["high"]) == (4, 4, 1.0)
    # Item 4 has 4 options, so its mono image is one image at both levels: one answer.
    assert cells["vision·4·font_style=mono"]["accuracy"]["correct"] == 3
    errors = {label: cell["request_errors"] for label, cell in cells.items()}
    assert errors == {**dict.fromkeys(cells, 0), "standard·4": 1, "standard·10": 2}
    # The "10 options" cells show 10, 10, 9 and 4 options (two items have fewer).
    assert cells["vision·10·font_style=mono"]["shown"] == {"min": 4, "median": 9.5, "max": 10}
    assert cells["standard·4"]["shown"] == {"min": 4, "median": 4.0, "max": 4}

    # The 2×2 says which font style it measured, and what "10 options" showed.
    assert run["two_by_two"]["levels"] == {"font_style": "regular"}
    title = next(line for line in markdown.splitlines() if line.startswith("## 2×2 accuracy"))
    assert "4 paired items, at font_style=regular only" in title, title
    grid = markdown.split(title, 1)[1].splitlines()
    assert "| format | 4 options | 10 options (shown 4/9.5/10) |" in grid
    vision = next(line for line in grid if line.startswith("| vision |"))
    assert vision.split(" | ")[2].startswith("100.0")  # regular, not pooled with mono's 0 %
    assert "| unparsed |" in markdown and "invalid" not in markdown

    # One name per cell: the analysis, the HF export, VLMEvalKit's split and lmms-eval's tasks.
    assert set(pd.read_parquet(parquet)["cell"]) == set(cells)
    tsv = pd.read_csv(root / "export-vlmevalkit" / "set.tsv", sep="\t")
    assert set(tsv["split"]) == set(cells)
    assert tasks == sorted(f"itemshot_set_{cell_slug(cell)}" for cell in cells)

    for plot in ("interaction.png", "effects.png"):
        assert (report / plot).read_bytes().startswith(b"\x89PNG"), plot
    assert (report / "report.html").is_file()
