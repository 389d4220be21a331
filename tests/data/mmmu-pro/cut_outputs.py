"""Cut the published GPT-4o MMMU-Pro response files to the rows the tests carry.

Usage: `python tests/data/mmmu-pro/cut_outputs.py SOURCE_FOLDER [DEST_FOLDER]`
(DEST_FOLDER defaults to `outputs/` beside this script). Each row is put in a
class: the path by which the official parser (`parse_mmmu_pro`) found its
letter (or its random fallback), whether the response names more than one
option letter the way the official parser looks for them (`(X)`, `X `, `X.`),
how the strict parser read it, and whether the two parsers agree. The first
`PER_CLASS` rows of every class, in file order, are kept verbatim.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from itemshot.factorial.answers.parsers import (
    coerce_options,
    option_letters,
    parse_mmmu_pro,
    row_rng,
)
from itemshot.factorial.answers.parsers_strict import parse_strict

NAMES = (
    "gpt-4o_standard10_cot.jsonl",
    "gpt-4o_standard10_direct.jsonl",
    "gpt-4o_vision_cot.jsonl",
    "gpt-4o_vision_direct.jsonl",
)
PER_CLASS = 2


def row_class(row: dict) -> tuple[str, bool, str, bool]:
    """Return the class of one published row (see the module docstring)."""
    options = coerce_options(row["options"])
    response = row["response"] if isinstance(row["response"], str) else ""
    official = parse_mmmu_pro(response, options, row_rng(0, row["id"]))
    strict = parse_strict(response, options)
    padded = f" {response} "
    named = [
        letter
        for letter in option_letters(len(options))
        if any(form.format(letter) in padded for form in ("({})", "{} ", "{}."))
    ]
    return official.reason, len(named) > 1, strict.reason, strict.letter == official.letter


def cut(source: Path, dest: Path) -> None:
    """Write the kept rows of every file in `source` to `dest`; print the counts."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in NAMES:
        lines = (source / name).read_text(encoding="utf-8").splitlines()
        seen: dict[tuple[str, bool, str, bool], int] = {}
        kept = []
        for line in lines:
            key = row_class(json.loads(line))
            seen[key] = seen.get(key, 0) + 1
            if seen[key] <= PER_CLASS:
                kept.append(line)
        (dest / name).write_text("\n".join(kept) + "\n", encoding="utf-8")
        print(f"{name}: {len(kept)} of {len(lines)} rows, {len(seen)} classes")


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.splitlines()[2])
    here = Path(__file__).resolve().parent
    cut(Path(sys.argv[1]), Path(sys.argv[2]) if len(sys.argv) == 3 else here / "outputs")
