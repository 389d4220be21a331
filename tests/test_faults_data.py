"""Hostile datasets: each bad row costs one item with its own reason, the rest render.

The inputs are files in `tests/hostile/` (see its README): lone surrogates,
non-text options, a figure whose pixels do not decode, blocked LaTeX
commands, a LaTeX error in an option, an Excel CSV with a byte-order mark
and a gap in its option columns, Latin-1 files, empty files, a 0-byte
parquet. Real Chromium renders them; real tesseract audits the good ones.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from itemshot.renderer.output import read_jsonl
from tests.conftest import run_cli
from tests.fault_injection import HOSTILE
from tests.hostile.make_hostile import BLOCKED

FLAGS = ("--scene", "plain", "--font-size", "22", "--no-progress")
GOOD = ("good-text", "good-figure", "good-math")

# item → (reason, field, words the message must hold)
EXPECTED = {
    "surrogate-question": ("invalid_item", "question", "lone surrogate U+D800"),  # case 3
    "surrogate-option": ("invalid_item", "options", "option B is not valid Unicode"),
    "nontext-object": ("invalid_item", "options", "option A is not text (dict"),  # case 17
    "nontext-bool": ("invalid_item", "options", "option B is not text (bool True)"),
    "corrupt-figure": ("invalid_item", "image_1", "broken data stream"),  # case 6
    "option-latex-error": ("latex_error", "option:C", "LaTeX error in option C"),  # case 14
    "blocked-in-option": ("math_blocked", "option:B", "\\url is not allowed"),  # case 13
    **{
        f"blocked-{name}": ("math_blocked", "question", f"\\{name} is not allowed")
        for name in BLOCKED
    },
}


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, dict], Path]:
    """Render and verify `tests/hostile/items.jsonl` with the command line."""
    out = tmp_path_factory.mktemp("hostile") / "out"
    status = run_cli("render", HOSTILE / "items.jsonl", "--out", out, *FLAGS)
    manifest = {row["item_id"]: row for row in read_jsonl(out / "manifest.jsonl")}
    return status, manifest, out


@pytest.mark.parametrize("item_id", sorted(EXPECTED))
def test_each_hostile_item_fails_alone_with_its_reason_and_field(
    hostile_run: tuple, item_id: str
) -> None:
    _, manifest, _ = hostile_run
    reason, field, words = EXPECTED[item_id]
    row = manifest[item_id]
    assert row["status"] == "failed"
    assert (row["error"]["reason"], row["error"]["field"]) == (reason, field), row["error"]
    assert words in row["error"]["message"], row["error"]["message"]


def test_the_good_items_render_and_pass_the_audit_beside_the_hostile_ones(
    hostile_run: tuple,
) -> None:
    status, manifest, out = hostile_run
    assert status == 3  # some items failed to render; the others are written
    assert set(manifest) == set(EXPECTED) | set(GOOD)
    for item_id in GOOD:
        row = manifest[item_id]
        assert row["status"] == "ok" and (out / row["image"]).is_file(), row
        assert row["verdict"] == "pass", row["verify"]["reasons"]
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert {f["item_id"] for f in summary["failed_items"]} == set(EXPECTED)
    assert summary["failures_by_reason"]["math_blocked"] == len(BLOCKED) + 1
    assert not [p for p in out.rglob("*") if p.name.startswith(".tmp-")]


def test_an_excel_csv_with_a_bom_loads_and_a_gap_in_option_columns_is_refused(
    tmp_path: Path,
) -> None:
    """Cases 8 and 2: the byte-order mark is not part of the first column's name, and
    closing a gap (A=x, B empty, C=z) would silently move the answer key."""
    out = tmp_path / "out"
    status = run_cli(
        "render", HOSTILE / "excel.csv", "--out", out, *FLAGS, "--no-verify",
        "--map", "options=A,B,C,D", "--map", "id=id",
    )  # fmt: skip
    manifest = {row["item_id"]: row for row in read_jsonl(out / "manifest.jsonl")}
    assert status == 3
    gap = manifest["gap-1"]
    assert (gap["status"], gap["error"]["field"]) == ("failed", "options")
    assert "option B (column 'B') is empty" in gap["error"]["message"]
    assert manifest["bom-1"]["question"] == "Which letter is first?"
    assert manifest["bom-2"]["answer"] == "B" and manifest["bom-2"]["options"][1] == "two"
    assert manifest["short-1"]["options"] == ["no", "yes"]  # trailing empty columns are fine
    for item_id in ("bom-1", "bom-2", "short-1"):
        assert manifest[item_id]["status"] == "ok", manifest[item_id]


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("latin1.jsonl", "line 3, byte 34 is 0xE9"),  # case 9
        ("latin1.csv", "line 3, byte 4 is 0xE9"),
        ("empty.parquet", "not a readable parquet file"),
        ("empty.jsonl", "has no rows"),  # case 12
        ("empty.csv", "has no rows"),
        ("header_only.csv", "has no rows"),
    ],
)
def test_an_unusable_dataset_is_one_clear_message_and_exit_2(
    name: str, words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = run_cli("render", HOSTILE / name, "--out", tmp_path / "out", *FLAGS)
    error = capsys.readouterr().err
    assert status == 2
    assert words in " ".join(error.split()), error
    assert "Traceback" not in error
    assert not (tmp_path / "out" / "manifest.jsonl").exists()


def test_out_pointing_at_a_file_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "a-file"
    target.write_text("not a folder\n", encoding="utf-8")
    status = run_cli("render", HOSTILE / "items.jsonl", "--out", target, *FLAGS)
    error = capsys.readouterr().err
    assert status == 2
    assert "is a file, not a folder" in " ".join(error.split()), error
    assert target.read_text(encoding="utf-8") == "not a folder\n"


@pytest.mark.parametrize("target", ["vlmevalkit", "lmms-eval", "hf"])
def test_an_export_name_cannot_leave_the_export_folder(
    hostile_run: tuple, target: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Case 15: the name is checked once, for every target, before anything is written."""
    _, _, out = hostile_run
    dest = tmp_path / "a" / "b" / "export"
    status = run_cli("export", out, "--to", target, "--out", dest, "--name", "../../x")
    assert status == 2
    assert "not a plain name" in " ".join(capsys.readouterr().err.split())
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []
    assert run_cli("export", out, "--to", target, "--out", dest, "--name", "hostile") == 0
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written and all(p.resolve().is_relative_to(dest.resolve()) for p in written)


def test_verify_refuses_a_bomb_and_a_corrupt_figure_copy_without_stopping(
    hostile_run: tuple, tmp_path: Path
) -> None:
    """Case 6 from the audit's side: images and figure copies read back by `verify` go
    through the same bounded decoder; a bad one fails its image, never the run."""
    import shutil

    _, manifest, source = hostile_run
    out = tmp_path / "out"
    shutil.copytree(source, out)
    bombed = manifest["good-text"]
    (out / bombed["image"]).write_bytes((HOSTILE / "bomb.png").read_bytes())
    figure = manifest["good-figure"]["figure_files"]["1"]
    (out / figure).write_bytes((HOSTILE / "figures" / "corrupt.png").read_bytes())
    status = run_cli("verify", out, "--no-progress")
    rows = {row["item_id"]: row for row in read_jsonl(out / "manifest.jsonl")}
    assert status == 3
    reasons = rows["good-text"]["verify"]["reasons"]
    assert [r["code"] for r in reasons] == ["unreadable_image"]
    assert "20000×20000" in reasons[0]["detail"]
    assert rows["good-math"]["verdict"] == "pass"
    assert rows["good-figure"]["verdict"] == "pass"  # its box is still checked for content
