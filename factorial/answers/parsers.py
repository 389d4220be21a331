"""Answer parsers: turn a model's raw response into an option letter.

Two parsers share one result record:

* `mmmu_pro` reproduces the behaviour of `parse_multi_choice_response` in the
  MMMU-Pro repository's `evaluate.py` (MMMU-Benchmark/MMMU, Apache-2.0) so that
  accuracies stay comparable with published numbers. Where the official code
  guesses with `random.choice`, this one guesses from a seeded generator and
  flags the row, so the guess can be counted and bounded.
* `strict` (in `parsers_strict`) never guesses: an unparseable answer is wrong
  and reported separately.

`registry.get_parser` picks one by name.
"""

from __future__ import annotations

import ast
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from itemshot.renderer.items import LETTERS
from itemshot.seeds import seed_hash

# Characters the official parser strips from both ends, one after another.
_OFFICIAL_STRIP_ORDER = (",", ".", "!", "?", ";", ":", "'")


@dataclass(frozen=True)
class ParseResult:
    """The letter a parser extracted, whether it was a random guess, and why."""

    letter: str | None
    fallback: bool
    reason: str

    @property
    def valid(self) -> bool:
        """Return whether the parser found an answer without guessing."""
        return self.letter is not None and not self.fallback


def option_letters(n_options: int) -> list[str]:
    """Return the option letters A, B, … for `n_options` options."""
    if not 0 < n_options <= len(LETTERS):
        raise ValueError(f"number of options must be 1..{len(LETTERS)}, got {n_options}")
    return list(LETTERS[:n_options])


def coerce_options(options: Any) -> list[str]:
    """Return options as a list of strings, accepting a list or a stringified Python list."""
    if isinstance(options, str):
        parsed = ast.literal_eval(options)
        if not isinstance(parsed, list | tuple):
            raise ValueError("options string does not hold a list")
        options = parsed
    if not isinstance(options, list | tuple):
        raise ValueError(f"options must be a list, got {type(options).__name__}")
    return [str(option) for option in options]


def row_rng(seed: int, key: str) -> random.Random:
    """Return a generator seeded from (seed, key) by a stable hash, independent of row order."""
    return random.Random(seed_hash(f"{seed}\x1f{key}", bits=64))


def _official_strip(text: str) -> str:
    for char in _OFFICIAL_STRIP_ORDER:
        text = text.strip(char)
    return text


def _answer_line_choice(response: str, choices: Sequence[str]) -> str | None:
    """Return the one choice letter occurring after the last `Answer:`, if exactly one does."""
    position = response.rfind("Answer:")
    if position == -1:
        return None
    tail = response[position + len("Answer:") :].strip()
    found = [choice for choice in choices if choice in tail]
    return found[0] if len(found) == 1 else None


def parse_mmmu_pro(
    response: Any,
    options: Sequence[str],
    rng: random.Random | None = None,
) -> ParseResult:
    """Parse a response the way MMMU-Pro's official evaluator does, guessing from `rng`."""
    choices = option_letters(len(options))
    index2ans = dict(zip(choices, options, strict=True))
    text = response if isinstance(response, str) else ""

    letter = _answer_line_choice(text, choices)
    if letter is not None:
        return ParseResult(letter, False, "answer_line")

    padded = f" {_official_strip(text)} "
    candidates = [c for c in choices if f"({c})" in padded]
    kind = "bracket"
    if not candidates:
        candidates = [c for c in choices if f"{c} " in padded]
        kind = "letter_space"
    if not candidates:
        candidates = [c for c in choices if f"{c}." in padded]
        kind = "letter_dot"
    if not candidates and len(padded.split()) > 5:
        lowered = padded.lower()
        candidates = [c for c in choices if index2ans[c].lower() in lowered]
        kind = "option_text"

    if not candidates:
        generator = rng if rng is not None else random.Random(0)
        return ParseResult(generator.choice(choices), True, "random_fallback")
    if len(candidates) == 1:
        return ParseResult(candidates[0], False, kind)

    # Several candidates: the official code keeps the one found last in the text
    # (ties and misses go to the earliest candidate, as numpy.argmax does).
    if kind == "option_text":
        lowered = padded.lower()
        positions = [lowered.rfind(index2ans[c].lower()) for c in candidates]
    elif kind == "bracket":
        positions = [padded.rfind(f"({c})") for c in candidates]
    else:
        positions = [padded.rfind(f" {c} ") for c in candidates]
    best = max(range(len(candidates)), key=lambda i: (positions[i], -i))
    return ParseResult(candidates[best], False, kind)
