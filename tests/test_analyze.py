"""`itemshot analyze` on a synthetic 2×2 sweep of the mix fixture, predicted by the stand-in."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageDraw
from test_predict import StandIn, image_hashes, main, write_manifest

from itemshot.factorial.answers.parsers import coerce_options
from itemshot.factorial.answers.prompts import resolve_prompts
from itemshot.factorial.design.sweep import row_from_record
from itemshot.factorial.predict.messages import build_request
from tests.conftest import MIX_DATA as MIX

RATES = {"S4": 0.8, "S10": 0.6, "V4": 0.7, "V10": 0.45, "whiteboard": 0.3, "blind": 0.25}
N_ITEMS = 60


def draw_image(out: Path, name: str, text: str) -> str:
    """Write a small PNG showing `text` into `out/images/` and return its relative path."""
    image = Image.new("RGB", (8 * len(text) + 20, 40), "white")
    ImageDraw.Draw(image).text((5, 20), text, fill="black")
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    (out / "images").mkdir(parents=True, exist_ok=True)
    (out / "images" / name).write_bytes(buffer.getvalue())
    return f"images/{name}"


def _correct(item: str, cell: str) -> bool:
    digest = hashlib.sha256(f"{item}|{cell}".encode()).digest()
    return int.from_bytes(digest[:4], "big") / 2**32 < RATES[cell]


def _sweep(out: Path) -> tuple[list[dict[str, Any]], dict[tuple[str, str], bool]]:
    items: dict[str, dict[str, Any]] = {}
    for line in MIX.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        items.setdefault(record["id"], record)
        if len(items) == N_ITEMS:
            break
    rows: list[dict[str, Any]] = []
    truth: dict[tuple[str, str], bool] = {}
    for item in items.values():
        four = coerce_options(item["options"])
        ten = coerce_options(item["shuffled_options"])
        base = {"item_id": item["id"], "status": "ok", "question": item["question"],
                "subject": item["subfield"], "language": "en", "seed": 1, "error": None}  # fmt: skip
        for cell, fmt, options, answer, layout in (
            ("S4", "standard", four, item["answer"], None),
            ("S10", "standard", ten, item["shuffled_options_answer"], None),
            ("blind", "blind", ten, item["shuffled_options_answer"], None),
            ("V4", "vision", four, item["answer"], "exam_sheet"),
            ("V10", "vision", ten, item["shuffled_options_answer"], "exam_sheet"),
            ("whiteboard", "vision", ten, item["shuffled_options_answer"], "whiteboard"),
        ):
            row = {**base, "job_key": f"{item['id']}|{cell}", "format": fmt, "options": options,
                   "answer": answer, "n_options": len(options),
                   "condition": {"format": fmt, "n_options": 4 if cell.endswith("4") else 10}}  # fmt: skip
            if fmt == "standard":
                row["figures"] = [
                    draw_image(out, f"{item['id']}_figure.png", f"figure {item['id']}")
                ]
            if layout:
                row["image"] = draw_image(out, f"{item['id']}_{cell}.png", f"{item['id']} {cell}")
                row["condition"]["layout"] = layout
                row["presentation"] = {"layout": layout}
            rows.append(row)
            truth[(item["id"], cell)] = _correct(item["id"], cell)
    return rows, truth


def test_analyze_reports_the_2x2_with_interaction_ci(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    rows, truth = _sweep(out)
    write_manifest(out, rows)
    replies: dict[tuple[str, tuple[str, ...]], str] = {}
    prompts = resolve_prompts("direct")
    for record in rows:
        row = row_from_record(record, out)
        request = build_request(row, prompts)
        cell = record["job_key"].split("|")[1]
        wrong = "A" if row.answer != "A" else "B"
        reply = f"Answer: {row.answer if truth[(row.item_id, cell)] else wrong}"
        if cell == "V10" and not truth[(row.item_id, cell)] and row.item_id.endswith("1"):
            reply = "I cannot read the image."
        replies[(request.text, tuple(i.sha256 for i in request.images))] = reply

    def answer(body: dict[str, Any]) -> str:
        text = body["messages"][0]["content"][0]["text"]
        return replies[(text, tuple(image_hashes(body)))]

    with StandIn(["429", "500"], answer) as server:
        args = ["predict", str(out), "--endpoint", server.endpoint, "--model", "m",
                "--retry-delay", "0.01", "--concurrency", "4"]  # fmt: skip
        assert main(args) == 0
    report = tmp_path / "report"
    status = main(
        ["analyze", str(out / "predictions.jsonl"), "--sets", str(out), "--report", str(report),
         "--bootstrap", "500"]
    )  # fmt: skip
    assert status == 0
    for name in ("report.md", "report.html", "results.json", "interaction.png", "effects.png",
                 "subjects.png"):  # fmt: skip
        assert (report / name).stat().st_size > 0, name

    def rate(cell: str) -> float:
        return sum(truth[(i, c)] for (i, c) in truth if c == cell) / N_ITEMS

    everything = json.loads((report / "results.json").read_text(encoding="utf-8"))
    assert [run["run"] for run in everything["runs"]] == ["m · direct"]
    results = everything["runs"][0]
    effects = {e["name"]: e for e in results["decomposition"]["effects"]}
    interaction = effects["interaction (V10−V4)−(S10−S4)"]
    expected = (rate("V10") - rate("V4")) - (rate("S10") - rate("S4"))
    assert interaction["estimate"] == pytest.approx(expected)
    assert interaction["low"] < interaction["estimate"] < interaction["high"]
    assert results["decomposition"]["n_items"] == N_ITEMS
    cells = {c["label"]: c for c in results["cells"]}
    assert cells["vision·10·layout=exam_sheet"]["unparsed"] == sum(
        1 for (i, c), ok in truth.items() if c == "V10" and not ok and i.endswith("1")
    )
    ablation = [e for e in results["ablations"] if "whiteboard" in e["name"]]
    assert len(ablation) == 1
    assert ablation[0]["estimate"] == pytest.approx(rate("whiteboard") - rate("V10"))
    gaps = {e["name"]: e for e in results["blind_gaps"]}
    assert gaps["standard·10 − blind·10"]["estimate"] == pytest.approx(rate("S10") - rate("blind"))

    markdown = (report / "report.md").read_text(encoding="utf-8")
    assert "| standard |" in markdown and "| vision |" in markdown
    line = next(x for x in markdown.splitlines() if x.startswith("| interaction"))
    assert f"{100 * expected:+.1f}" in line
    html = (report / "report.html").read_text(encoding="utf-8")
    assert "interaction (V10−V4)−(S10−S4)" in html and "interaction.png" in html
