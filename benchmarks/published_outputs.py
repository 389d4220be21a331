"""Both answer parsers on the GPT-4o responses the MMMU-Pro authors published.

    .venv/bin/python benchmarks/published_outputs.py [FOLDER]

FOLDER holds `gpt-4o_standard10_cot.jsonl`, `gpt-4o_standard10_direct.jsonl`,
`gpt-4o_vision_cot.jsonl` and `gpt-4o_vision_direct.jsonl` (the files of
`mmmu-pro/output/` in MMMU-Benchmark/MMMU, 1,730 rows each, under these
names); the default is the cut of them the tests carry,
`tests/data/mmmu-pro/outputs/`. Per file it checks that the `mmmu_pro` parser
extracts the official letter (`pred_indexs`) on every row where it does not
guess, and that the official evaluation's count of right rows (`if_right`)
is reachable by its random guesses; on full files it also checks that count
against the published accuracy. Printed per file: rows, guessed rows, the
accuracy range over the guesses, the official accuracy, the `mmmu_pro`
accuracy with its guesses seeded at 0, and the strict parser's unparsed rows
and accuracy. Exits 1 when a check fails.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from itemshot.factorial.answers.parsers import coerce_options, parse_mmmu_pro, row_rng
from itemshot.factorial.answers.parsers_strict import parse_strict

ROOT = Path(__file__).resolve().parents[1]
OUTPUTS = ROOT / "tests" / "data" / "mmmu-pro" / "outputs"
FULL_ROWS = 1730
# The accuracies (%) published for the full files.
PUBLISHED = {
    "gpt-4o_standard10_cot.jsonl": 55.03,
    "gpt-4o_standard10_direct.jsonl": 40.12,
    "gpt-4o_vision_cot.jsonl": 50.06,
    "gpt-4o_vision_direct.jsonl": 42.43,
}


def check_file(path: Path) -> list[str]:
    """Print one file's figures; return the checks it fails."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    failures: list[str] = []
    guessed = sure = seeded = strict_right = unparsed = 0
    for row in rows:
        options = coerce_options(row["options"])
        official = parse_mmmu_pro(row["response"], options, row_rng(0, row["id"]))
        seeded += official.letter == row["answer"]
        if official.fallback:
            guessed += 1
        elif official.letter != row["pred_indexs"]:
            failures.append(f"{row['id']}: read {official.letter}, official {row['pred_indexs']}")
        else:
            sure += official.letter == row["answer"]
        strict = parse_strict(row["response"], options)
        unparsed += strict.letter is None
        strict_right += strict.letter == row["answer"]
    right = sum(bool(row["if_right"]) for row in rows)
    if not sure <= right <= sure + guessed:
        failures.append(f"official right rows {right} outside {sure}–{sure + guessed}")
    # The published figure is the official count over all rows, rounded to 0.01 %.
    if len(rows) == FULL_ROWS and round(100 * right / len(rows), 2) != PUBLISHED[path.name]:
        failures.append(f"official accuracy {100 * right / len(rows):.2f} % ≠ published")

    def share(count: int) -> str:
        return f"{100 * count / len(rows):6.2f} %"

    print(
        f"{path.name:32s}{len(rows):6d}{guessed:7d}  {share(sure)}–{share(sure + guessed)}"
        f"  {share(right)}  {share(seeded)}{unparsed:9d}  {share(strict_right)}"
    )
    return [f"{path.name}: {failure}" for failure in failures]


def main() -> int:
    """Check every file of the folder; print the table and any failed check."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, nargs="?", default=OUTPUTS)
    args = parser.parse_args()
    print(
        f"{'file':32s}{'rows':>6s}{'guess':>7s}  {'mmmu_pro range':^21s}  {'official':>8s}"
        f"  {'seed 0':>8s}{'unparsed':>9s}  {'strict':>8s}"
    )
    failures = [failure for name in PUBLISHED for failure in check_file(args.folder / name)]
    for failure in failures:
        print(f"FAILED {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
