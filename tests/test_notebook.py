"""The API in a notebook: one-line reprs, named statuses, tables, and progress in a log."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

import itemshot
from itemshot.progress import progress_bar, progress_lines
from tests.conftest import TOOL_DATA, run_cli, sample_subset


def test_items_and_figures_print_as_one_short_line() -> None:
    items = itemshot.load(TOOL_DATA)
    assert repr(items) == "Items(21 items from data.jsonl (mmmu_pro_tool))"
    # The figures' bytes (hundreds of kilobytes) are never printed.
    assert len(repr(items[0])) < 200 and repr(items[0]).startswith("Item('1', ")
    figure = next(iter(items[0].figures.values()))
    assert "bytes from 'images/" in repr(figure) and len(repr(figure)) < 150
    table = items.to_pandas()
    assert list(table["item_id"][:2]) == ["1", "2"] and set(table["status"]) == {"ok"}


def test_bad_rows_show_in_the_repr_and_the_table(tmp_path: Path) -> None:
    lines = TOOL_DATA.read_text(encoding="utf-8").splitlines()[:3]
    bad = json.loads(lines[1]) | {"answer": "Z"}
    data = tmp_path / "data.jsonl"
    data.write_text("\n".join([lines[0], json.dumps(bad), lines[2]]) + "\n", encoding="utf-8")
    items = itemshot.load(data, missing_images="placeholder")
    assert repr(items) == "Items(2 items from data.jsonl (mmmu_pro_tool), 1 bad rows)"
    [row] = [row for row in items.rows if row["status"] != "ok"]
    assert (row["item_id"], row["field"]) == ("2", "answer")


def test_run_results_are_short_named_and_tabular(tmp_path: Path) -> None:
    data = sample_subset(tmp_path, ["en-parabola", "en-change"])
    run = itemshot.render(
        itemshot.load(data), tmp_path / "out", scene="webpage", progress=False, workers=1
    )
    assert isinstance(run.status, itemshot.RunStatus)
    assert run.status.label in ("ok", "unverified") and int(run.status) in (0, 4)
    assert repr(run).startswith(f"RunResult({str(tmp_path / 'out')!r}, status={run.status.label}")
    assert "2 ok" in repr(run) and len(repr(run)) < 200
    table = run.to_pandas()
    assert len(table) == 2 and {"item_id", "status", "image", "verdict"} <= set(table.columns)
    assert repr(run.audit).startswith("VerifyResult(2 images: ")
    assert [row["verdict"] for row in run.audit.rows] == list(table["verdict"])
    assert itemshot.RunStatus(130).label == "interrupted"
    assert itemshot.RunStatus.SOME_FAILED == itemshot.EXIT_SOME_FAILED == 3


def test_without_a_terminal_progress_is_printed_as_plain_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = sample_subset(tmp_path, ["en-parabola", "en-change"])
    out = tmp_path / "out"
    status = run_cli("render", data, "--out", out, "--scene", "webpage", "--workers", "1")
    assert status in (itemshot.EXIT_OK, itemshot.EXIT_UNVERIFIED)
    err = capsys.readouterr().err
    assert "rendering: 2/2 (100%)" in err and "verifying: 2/2 (100%)" in err
    assert run_cli("verify", out, "--workers", "1") in (0, 3)
    assert "verifying: 2/2 (100%)" in capsys.readouterr().err
    # --no-progress keeps the log free of them.
    run_cli("verify", out, "--workers", "1", "--no-progress")
    assert "verifying:" not in capsys.readouterr().err


def test_progress_lines_come_every_tenth_and_after_a_silence() -> None:
    console = Console(file=io.StringIO(), width=200)
    now = [0.0]
    with progress_lines(console, 100, "verifying", every=5.0, clock=lambda: now[0]) as advance:
        for step in range(100):
            now[0] = step * 0.01
            advance()
    lines = console.file.getvalue().splitlines()
    assert len(lines) == 10 and lines[-1].startswith("verifying: 100/100 (100%)")
    console = Console(file=io.StringIO(), width=200)
    with progress_lines(console, 1000, "sweep", every=5.0, clock=lambda: now[0]) as advance:
        now[0] = 0.0
        advance()  # 1 of 1000: too early for a line
        now[0] = 6.0
        advance()  # a silence of 6 s: a line
    lines = console.file.getvalue().splitlines()
    assert lines[0].startswith("sweep: 2/1000 (0%)") and lines[-1].startswith("sweep: 2/1000")


def test_a_terminal_keeps_the_bar(tmp_path: Path) -> None:
    console = Console(file=io.StringIO(), force_terminal=True, width=80)
    with progress_bar(console, 3, "rendering") as advance:
        for _ in range(3):
            advance()
    assert "rendering: 3/3" not in console.file.getvalue()  # the transient bar, not lines
