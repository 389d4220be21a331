"""Per-item error messages stay readable: bounded, one line, the same on every run.

A real `itemshot render` (real Chromium and KaTeX) gets a question holding a
broken formula of almost 10,000 characters, an option holding one of almost
2,000, and a "figure" that is a text file. Each fails alone, with a message
that names where and why in at most 200 characters, and no object repr (an
address that differs from run to run).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from itemshot.renderer.messages import MESSAGE_LIMIT
from itemshot.renderer.output import read_jsonl
from tests.fault_injection import cli_command

LOOK = ("--scene", "plain", "--font-size", "22", "--no-progress", "--no-verify")


def _dataset(folder: Path) -> Path:
    """Write the hostile rows (and the text file posing as a figure); return the JSONL."""
    (folder / "figures").mkdir(parents=True)
    (folder / "figures" / "notes.png").write_text("not an image at all\n", encoding="utf-8")
    question = "Compute $\\frac{" + "x+" * 4900 + "$ please."  # the closing brace is missing
    option = "$\\frac{" + "y+" * 900 + "$"
    rows = [
        {"id": "good", "question": "Which letter is second?", "options": ["a", "b", "c", "d"],
         "answer": "B"},
        {"id": "long-formula", "question": question, "options": ["a", "b", "c", "d"],
         "answer": "B"},
        {"id": "long-option", "question": "Which is broken?", "options": ["a", option, "c", "d"],
         "answer": "A"},
        {"id": "text-figure", "question": "What does <image 1> show?",
         "options": ["a", "b", "c", "d"], "answer": "B", "image_1": "figures/notes.png"},
    ]  # fmt: skip
    path = folder / "items.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _render(dataset: Path, out: Path) -> dict[str, dict]:
    done = subprocess.run(
        cli_command("render", dataset, "--out", out, *LOOK),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 3, done.stderr  # some items failed, the rest are written
    assert "Traceback" not in done.stderr
    return {row["item_id"]: row for row in read_jsonl(out / "manifest.jsonl")}


def test_long_formulas_and_unreadable_figures_give_short_stable_messages(tmp_path: Path) -> None:
    """The field and the reason are named; the formula is cut with an ellipsis; no repr."""
    dataset = _dataset(tmp_path / "data")
    rows = _render(dataset, tmp_path / "out")
    assert rows["good"]["status"] == "ok"
    expected = {
        "long-formula": ("latex_error", "question", "LaTeX error in question: \\frac{x+x+"),
        "long-option": ("latex_error", "option:B", "LaTeX error in option B: \\frac{y+y+"),
        "text-figure": ("invalid_item", "image_1", "'figures/notes.png' is not a readable image"),
    }
    for item_id, (reason, field, start) in expected.items():
        error = rows[item_id]["error"]
        message = error["message"]
        assert (error["reason"], error["field"]) == (reason, field), error
        assert len(message) <= MESSAGE_LIMIT, (item_id, len(message))
        assert message.startswith(start), message
        assert " at 0x" not in message and "<_io" not in message, message
    for item_id in ("long-formula", "long-option"):
        message = rows[item_id]["error"]["message"]
        assert "…" in message and "KaTeX parse error" in message, message
    summary = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    assert all(len(entry["message"]) <= MESSAGE_LIMIT for entry in summary["failed_items"])
    # A second run into a fresh folder records the very same messages.
    again = _render(dataset, tmp_path / "again")
    for item_id in expected:
        assert again[item_id]["error"] == rows[item_id]["error"]
