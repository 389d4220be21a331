"""`itemshot render --capture`: the clean render is kept and the capture replays from its record."""

from __future__ import annotations

import json
from pathlib import Path

from itemshot.degradations import PRESETS, replay
from itemshot.renderer.output import read_jsonl
from itemshot.renderer.presentation import CAPTURES
from itemshot.renderer.records import Layout
from tests.conftest import SAMPLE_DATA, run_cli


def test_capture_names_match_the_degradations_presets() -> None:
    assert set(CAPTURES) == {"none", *PRESETS}


def test_captured_images_replay_from_their_sidecar(tmp_path: Path) -> None:
    status = run_cli(
        "render", SAMPLE_DATA, "--out", tmp_path, "--limit", "2", "--capture",
        ",".join(PRESETS), "--severity", "strong", "--no-progress", "--no-verify",
    )  # fmt: skip
    assert status == 0
    rows = read_jsonl(tmp_path / "manifest.jsonl")
    assert len(rows) == 2 * len(PRESETS)
    for row in rows:
        record = json.loads((tmp_path / row["layout"]).read_text())
        clean = (tmp_path / row["clean_image"]).read_bytes()
        params = record["capture"]
        assert params["preset"] == row["presentation"]["capture"]
        clean_regions = [r.with_quad(((r.box[0], r.box[1]), (r.box[2], r.box[1]),
                                      (r.box[2], r.box[3]), (r.box[0], r.box[3])))
                         for r in Layout.from_dict(record["layout"]).regions]  # fmt: skip
        again = replay(clean, clean_regions, params)
        assert again.image == (tmp_path / row["image"]).read_bytes()
        moved = [list(map(list, r.quad)) for r in again.regions]
        assert moved == [r["quad"] for r in record["layout"]["regions"]]
        assert (record["layout"]["width"], record["layout"]["height"]) == (
            again.width,
            again.height,
        )
