"""`itemshot analyze` on the cells real runs produce: 0 %, 100 %, unanswered, unparsed, one item.

Five MMMU-Pro mix items are put in a 2×2 with a blind cell and a one-item
scene ablation; the loopback stand-in answers every standard·4 row right,
every standard·10 row wrong, every vision·4 row with no letter, fails every
blind request and is asked about vision·10 for one item only. The report
must be written, with every cell in it.
"""

from __future__ import annotations

import ast
import base64
import json
from pathlib import Path
from typing import Any

from test_analyze import draw_image
from test_predict import StandIn, write_manifest

from tests.conftest import MIX_DATA, run_cli

N_ITEMS = 5
LETTERS = "ABCDEFGHIJ"


def _items() -> list[dict[str, Any]]:
    lines = MIX_DATA.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[:N_ITEMS]]


def _options(value: Any) -> list[str]:
    """Return an option list, given as a list or as a stringified Python list."""
    return list(value) if isinstance(value, list) else list(ast.literal_eval(value))


def _rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for index, item in enumerate(_items()):
        base = {"item_id": item["id"], "status": "ok", "question": item["question"],
                "subject": item["subfield"], "language": "en", "seed": 1, "error": None}  # fmt: skip
        four = _options(item["options"])
        ten = _options(item["shuffled_options"])
        cells: list[tuple[str, int, list[str], str, str | None]] = [
            ("standard", 4, four, item["answer"], None),
            ("standard", 10, ten, item["shuffled_options_answer"], None),
            ("blind", 10, ten, item["shuffled_options_answer"], None),
            ("vision", 4, four, item["answer"], "exam_sheet"),
        ]
        if index == 0:  # vision·10 and its scene ablation hold one item
            cells += [
                ("vision", 10, ten, item["shuffled_options_answer"], "exam_sheet"),
                ("vision", 10, ten, item["shuffled_options_answer"], "whiteboard"),
            ]
        for fmt, level, options, answer, scene in cells:
            key = f"{item['id']}|{fmt}|{level}|{scene}"
            condition: dict[str, Any] = {"format": fmt, "n_options": level}
            row = {**base, "job_key": key, "format": fmt, "options": options, "answer": answer,
                   "n_options": level, "condition": condition}  # fmt: skip
            if fmt == "standard":  # the figure the blind cell goes without
                row["figures"] = [draw_image(out, f"{index}-figure.png", f"figure {index}")]
            if scene:
                condition["scene"] = scene
                row["image"] = draw_image(out, f"{index}-{level}-{scene}.png", key)
            rows.append(row)
    return rows


def _request_row(body: dict[str, Any], rows: list[dict[str, Any]], out: Path) -> dict[str, Any]:
    """Return the manifest row a request asks about: by its image, else by text and figures."""
    content = body["messages"][0]["content"]
    images = [part["image_url"]["url"].split(",", 1)[1] for part in content[1:]]
    text = content[0]["text"]
    for row in rows:
        if row.get("image"):
            if images and base64.b64decode(images[0]) == (out / row["image"]).read_bytes():
                return row
        elif text.startswith(row["question"]) and len(images) == len(row.get("figures", ())):
            shown = [letter for letter in LETTERS if f"\n{letter}. " in text]
            if len(shown) == len(row["options"]):
                return row
    raise AssertionError(f"no row for request {text[:80]!r}")


def test_analyze_reports_every_kind_of_extreme_cell(tmp_path: Path) -> None:
    out = tmp_path / "set"
    rows = _rows(out)
    write_manifest(out, rows)

    def behave(body: dict[str, Any]) -> str:
        return "500" if _request_row(body, rows, out)["format"] == "blind" else "ok"

    def answer(body: dict[str, Any]) -> str:
        row = _request_row(body, rows, out)
        if row["format"] == "vision" and row["n_options"] == 4:
            return "I cannot read the options."
        wrong = row["format"] == "standard" and row["n_options"] == 10
        letter = ("A" if row["answer"] != "A" else "B") if wrong else row["answer"]
        return f"Answer: {letter}"

    with StandIn([], answer=answer, behave=behave) as server:
        status = run_cli(
            "predict", out, "--endpoint", server.endpoint, "--model", "m",
            "--max-attempts", "1", "--concurrency", "2",
        )  # fmt: skip
    assert status == 3  # the blind rows failed

    report = tmp_path / "report"
    status = run_cli(
        "analyze", out / "predictions.jsonl", "--sets", out, "--report", report,
        "--bootstrap", "200",
    )  # fmt: skip
    assert status == 0
    results = json.loads((report / "results.json").read_text(encoding="utf-8"))
    [run] = results["runs"]
    cells = {cell["label"]: cell for cell in run["cells"]}
    accuracy = {label: (c["accuracy"]["correct"], c["accuracy"]["n"]) for label, c in cells.items()}
    assert accuracy["standard·4"] == (N_ITEMS, N_ITEMS)  # 100 %
    assert accuracy["standard·10"] == (0, N_ITEMS)  # 0 %
    assert accuracy["blind·10"] == (0, N_ITEMS)  # no answer at all
    assert cells["blind·10"]["request_errors"] == N_ITEMS
    assert accuracy["vision·4·scene=exam_sheet"] == (0, N_ITEMS)  # nothing parsed
    assert cells["vision·4·scene=exam_sheet"]["unparsed"] == N_ITEMS
    assert accuracy["vision·10·scene=exam_sheet"] == (1, 1)  # one item
    assert accuracy["vision·10·scene=whiteboard"] == (1, 1)
    [ablation] = run["ablations"]  # whiteboard against exam_sheet, on one item
    assert (ablation["n_items"], ablation["estimate"]) == (1, 0.0)
    for cell in cells.values():
        interval = cell["accuracy"]
        assert 0.0 <= interval["low"] <= interval["rate"] <= interval["high"] <= 1.0
    assert run["decomposition"]["n_items"] == 1  # only one item has all four cells
    markdown = (report / "report.md").read_text(encoding="utf-8")
    for label in cells:
        assert f"| {label} |" in markdown, label
    for plot in ("interaction.png", "subjects.png"):
        assert (report / plot).read_bytes().startswith(b"\x89PNG"), plot
