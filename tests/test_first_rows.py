"""A bad first row costs one item, on `render`, `sweep` and the API, as a bad row anywhere does.

The rows are real MMMU-Pro rows (the screenshot tool's input and the mix
file); the first is spoiled in the four ways a dataset goes wrong most: its
figure file is absent, the line is not JSON, a field is missing, the answer
is not an option.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import itemshot
from itemshot.outputs import read_manifest
from tests.conftest import MIX_DATA, TOOL_DATA, TOOL_IMAGES, run_cli

pytestmark = pytest.mark.slow

GOOD_ROWS = 2  # real rows after the spoiled one


def _spoil(kind: str, row: dict) -> str:
    """Return the first line of a dataset spoiled in one way."""
    if kind == "bad_json":
        return json.dumps(row)[:-40]  # cut mid-value: not JSON
    spoiled = dict(row)
    if kind == "missing_figure":
        spoiled["image_1"] = "images/not_there.png"
    elif kind == "missing_field":
        del spoiled["question"]
    elif kind == "bad_answer":
        spoiled["answer"] = "Z"
    return json.dumps(spoiled)


# What the first row's error must name: (item id, field, words of the message).
EXPECTED = {
    "missing_figure": ("1", "image_1", "not found"),
    "bad_json": ("1", "row", "line 1 is not JSON"),
    "missing_field": ("1", "question", "no such column"),
    "bad_answer": ("1", "answer", "'Z' is outside the options"),
}


def _dataset(folder: Path, kind: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copytree(TOOL_IMAGES, folder / "images", dirs_exist_ok=True)
    lines = TOOL_DATA.read_text(encoding="utf-8").splitlines()[: 1 + GOOD_ROWS]
    lines[0] = _spoil(kind, json.loads(lines[0]))
    path = folder / "data.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _check_one_lost(rows: list, kind: str, render_rows: int) -> None:
    item_id, field, words = EXPECTED[kind]
    failed = [row for row in rows if row["status"] != "ok"]
    assert len(failed) == 1, [(r["item_id"], r.get("error")) for r in failed]
    error = failed[0]["error"]
    assert (failed[0]["item_id"], error["field"]) == (item_id, field)
    assert words in error["message"]
    ok = [row for row in rows if row["status"] == "ok"]
    assert len(ok) == render_rows and {row["item_id"] for row in ok} == {"2", "3"}


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_render_cli_loses_only_the_first_row(
    tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _dataset(tmp_path / "data", kind)
    out = tmp_path / "out"
    args = ("render", data, "--out", out, "--scene", "webpage", "--font-style", "regular")
    status = run_cli(*args, "--no-verify", "--no-progress", "--workers", "1")
    assert status == itemshot.EXIT_SOME_FAILED
    _check_one_lost(read_manifest(out), kind, GOOD_ROWS)
    item_id, field, _ = EXPECTED[kind]
    assert f"{item_id}, {field}:" in capsys.readouterr().err  # the summary names item and field


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_api_render_loses_only_the_first_row(tmp_path: Path, kind: str) -> None:
    items = itemshot.load(_dataset(tmp_path / "data", kind))
    assert len(items) == GOOD_ROWS and len(items.errors) == 1
    run = itemshot.render(
        items, tmp_path / "out", scene="webpage", verify=False, progress=False, workers=1
    )
    assert run.status == itemshot.RunStatus.SOME_FAILED and run.status.label == "some_failed"
    _check_one_lost(list(run.rows), kind, GOOD_ROWS)


def test_api_render_takes_mixed_entries_one_by_one(tmp_path: Path) -> None:
    """A request, an odd object and an item side by side: each stands for itself."""
    from itemshot.renderer.jobs import JobRequest
    from itemshot.renderer.presentation import PresentationSpec

    items = itemshot.load(_dataset(tmp_path / "data", "bad_answer"))
    entries = [
        {"id": "a-dict", "question": "?"},  # a raw row, not an item: costs itself only
        JobRequest(items[0], PresentationSpec(scene="webpage", font_style="regular")),
        items[1],
    ]
    run = itemshot.render(
        entries, tmp_path / "out", scene="webpage", verify=False, progress=False, workers=1
    )
    [failed] = run.failed
    assert (failed["item_id"], failed["error"]["field"]) == ("a-dict", "entry")
    assert "itemshot.load" in failed["error"]["message"]
    assert [row["item_id"] for row in run.rows if row["status"] == "ok"] == ["2", "3"]


def _design(folder: Path, data: Path, extra: str = "") -> Path:
    design = folder / "design.yaml"
    design.write_text(
        "name: first_rows\n"
        f"dataset: {{path: {json.dumps(str(data))}{extra}}}\n"
        "factors:\n  format: [standard, vision]\n  n_options: [4]\n"
        "presentation: {scene: webpage, font_style: regular}\n",
        encoding="utf-8",
    )
    return design


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_sweep_cli_loses_only_the_first_row(tmp_path: Path, kind: str) -> None:
    data = _dataset(tmp_path / "data", kind)
    out = tmp_path / "out"
    status = run_cli("sweep", _design(tmp_path, data), "--out", out, "--no-progress")
    assert status == itemshot.EXIT_SOME_FAILED
    # Two cells (standard, vision) for each good item; the bad row once.
    _check_one_lost(read_manifest(out), kind, 2 * GOOD_ROWS)


def test_a_mix_file_whose_first_row_lacks_a_column_keeps_its_layout(tmp_path: Path) -> None:
    """The layout is told by most rows, not the first: the other rows keep their 10 options."""
    lines = MIX_DATA.read_text(encoding="utf-8").splitlines()[:3]
    first = json.loads(lines[0])
    del first["shuffled_options"]
    data = tmp_path / "mix.jsonl"
    data.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    items = itemshot.load(data, missing_images="placeholder")
    assert items.format == "mmmu_pro_mix"
    [error] = items.errors
    assert (error.item_id, error.field) == (first["id"], "shuffled_options")
    assert all(item.options_4 is not None and len(item.options) > 4 for item in items)
    design = _design(tmp_path, data, ", missing_images: placeholder")
    run = itemshot.sweep(design, tmp_path / "out", progress=False, workers=1)
    assert run.status == itemshot.RunStatus.SOME_FAILED
    bad = [row for row in run.rows if row["status"] != "ok"]
    assert [(row["item_id"], row["error"]["field"]) for row in bad] == [
        (first["id"], "shuffled_options")
    ]
    assert sum(1 for row in run.rows if row["status"] == "ok") == 2 * 2


def test_a_wrong_map_column_names_the_field_and_lists_the_columns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _dataset(tmp_path / "data", "bad_answer")
    status = run_cli(
        "render", data, "--out", tmp_path / "out", "--format", "generic", "--map", "question=nope"
    )
    assert status == itemshot.EXIT_USAGE
    err = " ".join(capsys.readouterr().err.split())
    assert "question='nope'" in err
    assert "its columns are answer, image_1, options, question" in err
    assert not (tmp_path / "out" / "manifest.jsonl").exists()
