"""The output set's record: typed rows, the merging writer, verdicts bound to image bytes.

End to end with real Chromium and tesseract on a few items of the embedded
sample: sweep with `--verify`, sweep again (verdicts kept), change one image's
bytes (its verdict gone, the others kept); `verify: true` in a design; output
files with the user's umask.
"""

from __future__ import annotations

import io
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

import itemshot
from itemshot.outputs import (
    MANIFEST,
    ManifestRow,
    file_sha256,
    load_manifest,
    read_manifest,
    write_manifest,
)
from tests.conftest import run_cli

LIMIT = 3


def _design(folder: Path, *, verify: bool = False) -> Path:
    path = folder / ("design-verify.yaml" if verify else "design.yaml")
    path.write_text(
        "name: mini\n"
        "dataset: {path: 'itemshot:sample', missing_images: placeholder}\n"
        "factors:\n  format: [standard, vision]\n  n_options: [4]\n"
        "presentation: {scene: exam_sheet, font_style: regular}\n"
        + ("verify: true\n" if verify else ""),
        encoding="utf-8",
    )
    return path


def _sweep(design: Path, out: Path, *extra: str) -> int:
    return run_cli(
        "sweep", design, "--out", out, "--limit", LIMIT, "--workers", 1, "--no-progress", *extra
    )


def _images(out: Path) -> dict[str, ManifestRow]:
    return {row.job_key or "": row for row in read_manifest(out) if row.image}


@pytest.fixture
def umask() -> Iterator[None]:
    """Restore this process's umask after a test that sets it."""
    before = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(before)


@pytest.mark.slow
def test_rerun_keeps_verdicts_and_a_changed_image_loses_its_own(tmp_path: Path) -> None:
    out = tmp_path / "out"
    design = _design(tmp_path)
    assert _sweep(design, out, "--verify") == 0

    verified = _images(out)
    assert len(verified) == LIMIT
    for row in verified.values():
        assert row.schema == 1 and row.format == "vision" and row.verdict == "pass"
        # The verdict names the bytes it judged: those of the image on disk.
        assert row.image_sha256 == file_sha256(out / str(row.image)) == row.verdict_sha256
    # A field no writer of itemshot knows is carried through every later write.
    rows = [row.to_json() for row in read_manifest(out)]
    rows[0]["note"] = "checked by hand"
    (out / MANIFEST).write_text(
        "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in rows),
        encoding="utf-8",
    )

    # A second sweep of the same design renders nothing and keeps every verdict.
    before = (out / MANIFEST).read_bytes()
    assert _sweep(design, out) == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["rendered"] == 0 and summary["skipped"] == LIMIT
    assert (out / MANIFEST).read_bytes() == before
    assert read_manifest(out)[0]["note"] == "checked by hand"

    # Change the bytes of one image: only that image loses its verdict.
    changed_key, changed = next(iter(verified.items()))
    path = out / str(changed.image)
    with Image.open(path) as opened:
        pixels = opened.convert("RGB")
    pixels.putpixel((0, 0), (255, 0, 0) if pixels.getpixel((0, 0)) != (255, 0, 0) else (0, 0, 0))
    buffer = io.BytesIO()
    pixels.save(buffer, "PNG")
    path.write_bytes(buffer.getvalue())
    assert _sweep(design, out) == 0
    after = _images(out)
    assert set(after) == set(verified)
    assert "verdict" not in after[changed_key] and "verify" not in after[changed_key]
    assert after[changed_key].image_sha256 == file_sha256(path) != changed.image_sha256
    for key, row in after.items():
        if key != changed_key:
            assert row.verdict == "pass" and row.verify == verified[key].verify
    assert read_manifest(out)[0]["note"] == "checked by hand"

    # Verifying again gives the changed image a verdict on its new bytes.
    audit = itemshot.verify(out, progress=False, workers=1)
    assert audit.total == LIMIT
    assert _images(out)[changed_key].verdict_sha256 == file_sha256(path)


@pytest.mark.slow
def test_design_verify_true_verifies_after_the_sweep(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run = itemshot.sweep(_design(tmp_path, verify=True), out, limit=2, workers=1, progress=False)
    assert run.audit is not None and run.audit.total == 2
    assert run.status == (4 if run.audit.failed else 0)
    rows = read_manifest(out)
    assert sum(1 for row in rows if row.verdict) == 2
    # Text rows have no image and get no verdict; the factor columns are there.
    assert all(row.verdict is None for row in rows if row.format == "standard")
    assert all(row["n_options"] == 4 for row in rows)
    # `verify=False` overrides the design: nothing verified, the earlier verdicts kept.
    again = itemshot.sweep(
        _design(tmp_path, verify=True), out, limit=2, workers=1, progress=False, verify=False
    )
    assert again.audit is None
    assert sum(1 for row in read_manifest(out) if row.verdict) == 2


@pytest.mark.slow
@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o027, 0o640)])
def test_output_files_follow_the_umask(tmp_path: Path, umask: None, mask: int, mode: int) -> None:
    os.umask(mask)
    out = tmp_path / "out"
    items = itemshot.load(itemshot.sample_dataset(), limit=1)
    result = itemshot.render(items, out, workers=1, progress=False)
    assert result.status == 0
    written = [
        out / MANIFEST,
        out / "summary.json",
        out / "audit.json",
        out / "audit.html",
        *(out / "images").iterdir(),
        *(out / "figures").iterdir(),
    ]
    modes = {path.name: stat.S_IMODE(path.stat().st_mode) for path in written}
    assert set(modes.values()) == {mode}, modes


def test_rows_round_trip_byte_for_byte_and_merge_by_owner(tmp_path: Path) -> None:
    line = {
        "schema": 1,
        "item_id": "q1",
        "job_key": "k1",
        "status": "ok",
        "image": "images/q1.png",
        "image_sha256": "aa",
        "error": None,
        "layout": None,
        "font_style": "regular",  # a factor column: no attribute holds it
        "verdict": "pass",
        "verify": {"passed": True, "image_sha256": "aa"},
    }
    row = ManifestRow.from_json(line)
    assert row.to_json() == line and row == line
    assert row["error"] is None and "error" in row and "clean_image" not in row
    assert row.extra == {"font_style": "regular"}

    # A render of the same bytes keeps the verdict; of other bytes it does not.
    out = tmp_path / "set"
    out.mkdir()
    write_manifest(out, [row])
    render = {k: v for k, v in line.items() if k not in ("verdict", "verify", "font_style")}
    write_manifest(out, [render])
    kept = read_manifest(out)[0]
    assert kept.verdict == "pass" and kept["font_style"] == "regular"
    write_manifest(out, [{**render, "image_sha256": "bb"}])
    changed = read_manifest(out)[0]
    assert changed.verdict is None and changed.verify is None and changed["font_style"] == "regular"

    # A line that is not a row is reported with its number, not raised.
    with (out / MANIFEST).open("a", encoding="utf-8") as handle:
        handle.write('["not", "a row"]\n{"item_id": "q2", "status": "ok"\n')
    manifest = load_manifest(out)
    assert [r.item_id for r in manifest.rows] == ["q1"] and manifest.lines == (1,)
    assert [p.line for p in manifest.problems] == [2, 3]
    assert "not a JSON object" in str(manifest.problems[0])
