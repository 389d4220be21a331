"""`itemshot verify OUT --items DATASET`: each image against its source as the image shows it.

Real sweeps of MMMU-Pro items, real Chromium and tesseract: a 4-option
`seeded_distractors` image is checked against its own 4 options in its own
order (not the item's 10), and items that cannot be loaded are an error
naming them, never a check against the text stored beside the image.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import itemshot
from itemshot.outputs import read_manifest
from tests.conftest import MIX_DATA, TOOL_DATA, run_cli

pytestmark = pytest.mark.slow


def _verdicts(out: Path) -> dict[str, tuple[str, tuple[str, ...]]]:
    return {
        row["image"]: (row["verdict"], tuple(row["verify"]["codes"]))
        for row in read_manifest(out)
        if row.get("verdict")
    }


def _sweep(tmp_path: Path, data: Path, limit: int, extra: str = "") -> Path:
    design = tmp_path / "design.yaml"
    design.write_text(
        "name: shown_options\n"
        f"dataset: {{path: {json.dumps(str(data))}{extra}}}\n"
        "factors:\n  format: [vision]\n  n_options: [4, 10]\n"
        "presentation: {scene: webpage, font_style: regular}\n"
        "seed: 7\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    status = run_cli(
        "sweep", design, "--out", out, "--limit", limit, "--no-progress", "--workers", "1"
    )
    assert status == itemshot.EXIT_OK
    return out


def test_verify_items_checks_the_options_each_image_shows(tmp_path: Path) -> None:
    out = _sweep(tmp_path, TOOL_DATA, 3)
    rows = [row for row in read_manifest(out) if row.get("image")]
    assert {row["option_policy"] for row in rows if row["n_options"] == 4} == {"seeded_distractors"}
    status = run_cli("verify", out, "--no-progress", "--workers", "1")
    alone = _verdicts(out)
    assert len(alone) == 6
    passed = sum(1 for verdict, _ in alone.values() if verdict == "pass")
    assert passed >= 5, alone  # clean renders in a regular face
    with_items = run_cli("verify", out, "--items", TOOL_DATA, "--no-progress", "--workers", "1")
    assert with_items == status
    assert _verdicts(out) == alone
    assert not any("option_missing" in codes for _, codes in _verdicts(out).values())
    # The API gives the same verdicts from the items, with one row per image.
    result = itemshot.verify(out, itemshot.load(TOOL_DATA), progress=False, workers=1)
    assert (result.total, result.passed) == (6, passed)
    assert {row["image"]: row["verdict"] for row in result.rows} == {
        image: verdict for image, (verdict, _) in alone.items()
    }
    assert repr(result).startswith(f"VerifyResult(6 images: {passed} passed")


def test_verify_items_that_cannot_be_loaded_is_an_error_naming_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The mix file has no figure files: its items render under the placeholder policy only.
    out = _sweep(tmp_path, MIX_DATA, 2, ", missing_images: placeholder")
    before = (out / "manifest.jsonl").read_bytes()
    capsys.readouterr()
    status = run_cli("verify", out, "--items", MIX_DATA, "--no-progress")
    assert status == itemshot.EXIT_USAGE
    err = " ".join(capsys.readouterr().err.split())
    first_ids = [json.loads(line)["id"] for line in MIX_DATA.read_text().splitlines()[:2]]
    for item_id in first_ids:
        assert item_id in err
    assert "could not be loaded" in err and "image_1" in err and "nothing was verified" in err
    assert (out / "manifest.jsonl").read_bytes() == before  # no verdict written or removed
    with pytest.raises(itemshot.SourcesUnavailable) as raised:
        itemshot.verify(out, itemshot.load(MIX_DATA), progress=False)
    assert set(raised.value.missing) == set(first_ids) and raised.value.images == 4
