"""The mix fixture has no figure files: fail clearly by default, or draw labelled placeholders."""

from __future__ import annotations

import json
from pathlib import Path

from itemshot.renderer.output import read_jsonl
from tests.conftest import run_cli


def test_missing_figures_fail_each_item_with_a_clear_reason(mix_data: Path, tmp_path: Path) -> None:
    status = run_cli(
        "render", mix_data, "--out", tmp_path, "--limit", "200", "--no-progress", "--no-verify"
    )
    rows = read_jsonl(tmp_path / "manifest.jsonl")
    assert status == 3 and len(rows) == 200
    missing = [r for r in rows if r["error"] and r["error"]["field"].startswith("image_")]
    # Every mix row names image_1, whose file the fixture does not ship.
    assert len(missing) >= 195
    for row in missing:
        assert (
            "not found" in row["error"]["message"] or "references <image" in row["error"]["message"]
        )
    others = [r for r in rows if r not in missing]
    assert all(r["error"]["field"] in ("options", "options_4") for r in others)
    assert not list(tmp_path.rglob("*.png"))


def test_placeholder_policy_draws_labelled_boxes(mix_data: Path, tmp_path: Path) -> None:
    status = run_cli(
        "render", mix_data, "--out", tmp_path, "--limit", "200",
        "--missing-images", "placeholder", "--no-progress", "--no-verify",
    )  # fmt: skip
    rows = read_jsonl(tmp_path / "manifest.jsonl")
    ok = [r for r in rows if r["status"] == "ok"]
    failed = [r for r in rows if r["status"] != "ok"]
    # Only data defects of the fixture itself may fail (e.g. two identical options).
    assert all(r["error"]["field"] in ("options", "options_4") for r in failed), failed[:3]
    assert status == (3 if failed else 0)
    assert len(ok) >= 190
    for row in ok:
        assert row["placeholders"], row["item_id"]
        layout = json.loads((tmp_path / row["layout"]).read_text())["layout"]
        boxes = [r for r in layout["regions"] if r["kind"] == "figure"]
        assert boxes and all(b["placeholder"] for b in boxes)
        assert all("image not available" in b["text"] for b in boxes)
