"""`itemshot score` on the published MMMU-Pro responses and on a small file."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from itemshot.cli.analysis import register
from itemshot.factorial.answers.parsers import coerce_options
from itemshot.factorial.answers.parsers_strict import parse_strict
from tests.conftest import OUTPUTS


def main(argv: list[str]) -> int:
    """Run the factorial subcommands exactly as `itemshot` dispatches them."""
    parser = argparse.ArgumentParser(prog="itemshot")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.handler(args) or 0)


def _score(capsys: pytest.CaptureFixture[str], path: Path, parser: str) -> dict:
    assert main(["score", str(path), "--parser", parser, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_score_json_on_fixture(capsys: pytest.CaptureFixture[str]) -> None:
    path = OUTPUTS / "gpt-4o_vision_direct.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    official = _score(capsys, path, "mmmu_pro")
    assert official["n"] == len(rows)
    # The official evaluation's accuracy on these rows (its `if_right`) lies in the range.
    low, high = official["accuracy_range_over_fallbacks"]
    assert low <= 100 * sum(bool(r["if_right"]) for r in rows) / len(rows) <= high
    assert official["fallback"] > 0 and official["unparsed"] == 0
    assert official["ci95"][0] < official["accuracy"] < official["ci95"][1]

    strict = _score(capsys, path, "strict")
    unparsed = sum(
        1 for r in rows if parse_strict(r["response"], coerce_options(r["options"])).letter is None
    )
    assert strict["unparsed"] == unparsed and strict["fallback"] == 0
    assert strict["accuracy_range_over_fallbacks"] == [strict["accuracy"], strict["accuracy"]]


def test_score_table_and_bad_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "responses.jsonl"
    records = [
        {"id": "a", "response": "Answer: B", "answer": "B", "options": ["x", "y"]},
        {"id": "b", "response": "答え：Ａ", "answer": 0, "options": "['x', 'y']"},
        {"id": "c", "response": "no idea", "answer": "A", "options": ["x", "y"]},
        {"id": "d", "response": "Answer: A", "answer": "A", "options": 5},
    ]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    result = _score(capsys, path, "strict")
    assert (result["n"], result["correct"], result["unparsed"]) == (3, 2, 1)
    assert len(result["errors"]) == 1 and "'d'" in result["errors"][0]
    assert main(["score", str(path), "--parser", "strict"]) == 0
    table = capsys.readouterr().out
    assert "66.67" in table and "unparsed" in table
    assert main(["score", str(tmp_path / "missing.jsonl")]) == 2
