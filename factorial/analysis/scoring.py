"""Score a JSONL of responses (`id`, `response`, `answer`, `options`) with a parser."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from itemshot.factorial.analysis.stats import Accuracy, accuracy
from itemshot.factorial.answers.parsers import LETTERS, coerce_options
from itemshot.factorial.answers.registry import get_parser


@dataclass(frozen=True)
class ScoredRow:
    """One response after parsing: the letter found, correctness and how it was found."""

    id: str
    answer: str
    letter: str | None
    correct: bool
    fallback: bool
    reason: str


@dataclass(frozen=True)
class ScoreSummary:
    """Accuracy of a response file under one parser, with unparsed and fallback counts.

    `low_bound` and `high_bound` are the accuracies reachable by the random
    guesses: all guesses wrong, all guesses right.
    """

    parser: str
    accuracy: Accuracy
    unparsed: int
    fallback: int
    low_bound: float
    high_bound: float
    errors: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        """Return the summary as a JSON-ready mapping (rates in percent)."""
        acc = self.accuracy
        return {
            "parser": self.parser,
            "n": acc.n,
            "correct": acc.correct,
            "accuracy": 100 * acc.rate if acc.n else None,
            "ci95": [100 * acc.low, 100 * acc.high],
            "unparsed": self.unparsed,
            "fallback": self.fallback,
            "accuracy_range_over_fallbacks": [100 * self.low_bound, 100 * self.high_bound],
            "errors": list(self.errors),
        }


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Return the JSON objects of a JSONL file (blank lines ignored)."""
    records = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError as error:
                    raise ValueError(f"{path.name} line {number}: {error.msg}") from None
    return records


def answer_letter(value: Any) -> str:
    """Return the gold answer as a letter, accepting a letter or a 0-based index."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(LETTERS):
        return LETTERS[value]
    if isinstance(value, str) and value.strip():
        return value.strip().upper()
    raise ValueError(f"answer {value!r} is neither a letter nor an index")


def score_records(
    records: Iterable[Mapping[str, Any]], parser: str, seed: int = 0
) -> tuple[list[ScoredRow], list[str]]:
    """Return scored rows and one error message per record that could not be scored."""
    parse = get_parser(parser, seed)
    scored: list[ScoredRow] = []
    errors: list[str] = []
    for number, record in enumerate(records, start=1):
        row_id = str(record.get("id", f"line{number}"))
        try:
            options = coerce_options(record.get("options"))
            gold = answer_letter(record.get("answer"))
            result = parse(record.get("response"), options, row_id)
        except (ValueError, SyntaxError) as error:
            errors.append(f"row {row_id!r}: {error}")
            continue
        correct = result.letter == gold
        scored.append(
            ScoredRow(row_id, gold, result.letter, correct, result.fallback, result.reason)
        )
    return scored, errors


def summarise(parser: str, scored: Sequence[ScoredRow], errors: Sequence[str] = ()) -> ScoreSummary:
    """Return accuracy with CI, unparsed and fallback counts for scored rows."""
    n = len(scored)
    sure = sum(1 for row in scored if row.correct and not row.fallback)
    fallback = sum(1 for row in scored if row.fallback)
    unparsed = sum(1 for row in scored if row.letter is None)
    return ScoreSummary(
        parser=parser,
        accuracy=accuracy(row.correct for row in scored),
        unparsed=unparsed,
        fallback=fallback,
        low_bound=sure / n if n else 0.0,
        high_bound=(sure + fallback) / n if n else 0.0,
        errors=tuple(errors),
    )
