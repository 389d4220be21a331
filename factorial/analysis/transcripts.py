"""Score a model's transcript of an item image against the item's source text.

Every measure comes from the verifier (`itemshot.verify`), so a model's
reading and itemshot's own OCR round trip are scored by one rule:

* Expected text: the verifier's fields (`verify.checks.expected`): the stem with
  `<image N>` shown as the page shows it ("Figure N", "図N") and formulas set
  aside, and each option with its letter. `vision_question_only` images hold
  the stem only.
* Each field: the verifier's field scorers (`verify.checks.scoring`): OCR accuracy
  `1 − Levenshtein / max(len)` after `verify.reading.text.normalise` (NFKC, quotes
  and dashes unified, whitespace folded, fill-in blanks dropped, CJK spacing
  removed) with every space removed and letter case folded; a field holding
  formulas is scored by word recall of its plain text, as the verifier does.
* Whole item: the same OCR accuracy on "question, then `A. option` lines"
  against the transcript reassembled the same way (its labels rewritten as
  `A.`, so `(A)` and `A)` cost nothing; formulas written in `$…$` are set
  aside on both sides by the same flattening).
* Critical tokens: the verifier's `number_missing`, `unit_missing`,
  `letter_mismatch` (an option's letter not read, or the option absent) and
  `short_option_missing` checks, plus the baseline numbers of formulas.

Reading a transcript: the text between `<transcript>` and `</transcript>`
(on their own lines or not) when the reply has them (the `ocr_then_answer` prompt asks
for it; its answer is parsed from the text after the closing line), else the
whole reply of the transcription task, without a Markdown fence around it.
Option labels split it into stem and options: a label opening a line, read
by the verifier's label reader (`A.`, `A)`, `A:`, `(A)`, and OCR-style
misreadings such as `(8)` for B), and `(A)` after a space (options in two
columns). Of the labels found, the longest run in increasing letter order
is used (the later one among equals), so a stem's "I. … II. …" statements
or a cited "(B)" do not open the options.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from itemshot.factorial.answers.prompts import TRANSCRIPT_CLOSE, TRANSCRIPT_OPEN
from itemshot.factorial.design.sweep import SweepRow
from itemshot.renderer.items import LETTERS, Item
from itemshot.verify.checks.expected import Field
from itemshot.verify.checks.expected import options as expected_options
from itemshot.verify.checks.expected import stem as expected_stem
from itemshot.verify.checks.labels import split_label
from itemshot.verify.checks.scoring import score_option, score_stem
from itemshot.verify.checks.tokens import missing_formula_numbers
from itemshot.verify.reading.text import normalise, ocr_accuracy
from itemshot.verify.thresholds import DEFAULT_THRESHOLDS

STEM_ONLY_FORMATS = ("vision_question_only",)
_OPEN = re.compile(re.escape(TRANSCRIPT_OPEN), re.IGNORECASE)
_CLOSE = re.compile(re.escape(TRANSCRIPT_CLOSE), re.IGNORECASE)
_FENCE = re.compile(r"^\s*```[^\n]*\n(?P<body>.*?)\n```\s*$", re.DOTALL)
_BULLET = re.compile(r"^[ \t]*(?:[-*•][ \t]+)?(?:\*\*)?")  # Markdown list marks and bold
_INLINE_LABEL = re.compile(r"(?<=[ \t])\((?P<a>[A-Z])\)[ \t]+")
# The verifier's reason codes that name a critical token, and how the report calls them.
CRITICAL_REASONS = {
    "number_missing": "numbers",
    "unit_missing": "units",
    "letter_mismatch": "letters",
    "short_option_missing": "short options",
}


@dataclass(frozen=True)
class FieldReading:
    """One field's score (stem or option) and the rule the verifier used for it."""

    name: str
    accuracy: float
    rule: str


@dataclass(frozen=True)
class Reading:
    """A model's reading of one condition's image: scores and the critical tokens it lost.

    `status` is `ok`, `empty` (a blank transcript, scored 0), `no_transcript`
    (an ocr_then_answer reply without its transcript block) or
    `request_error`; only `ok` and `empty` readings have scores.
    """

    condition_id: str
    item_id: str
    model: str
    source: str
    status: str
    accuracy: float | None = None
    question: float | None = None
    options: tuple[FieldReading, ...] = ()
    missing: tuple[tuple[str, str], ...] = ()  # (token kind, detail), e.g. ("numbers", "4,500")

    @property
    def scored(self) -> bool:
        """Return whether the reading has scores."""
        return self.accuracy is not None

    @property
    def option_accuracy(self) -> float | None:
        """Return the mean accuracy of the options shown (None when the image has none)."""
        if not self.options:
            return None
        return sum(field.accuracy for field in self.options) / len(self.options)

    def missed(self, kind: str) -> bool:
        """Return whether a critical token of this kind (numbers, units, …) was lost."""
        return any(found == kind for found, _ in self.missing)

    @property
    def critical_ok(self) -> bool:
        """Return whether every number, unit, option letter and short option was kept."""
        return not self.missing


def strip_fence(text: str) -> str:
    """Return `text` without a Markdown code fence wrapped around all of it."""
    match = _FENCE.match(text)
    return match.group("body") if match else text


def split_ocr_answer(response: str) -> tuple[str | None, str]:
    """Return (transcript block or None, text after it) of an ocr_then_answer reply.

    Without a complete block the transcript is None and the whole reply is
    left for the answer parser.
    """
    opened = _OPEN.search(response)
    if opened is None:
        return None, response
    closed = _CLOSE.search(response, opened.end())
    if closed is None:
        return None, response
    return response[opened.end() : closed.start()].strip(), response[closed.end() :]


def transcript_of(response: str) -> str:
    """Return the transcript in a transcription reply: its block if it has one, else all of it."""
    block, _ = split_ocr_answer(response)
    return strip_fence(block if block is not None else response).strip()


def _increasing_run(labels: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """Return the longest subsequence of (start, end, letter index) with increasing letters.

    Among equally long runs the later labels win: options follow the stem, so
    a stem's own "a)" gives way to the option "A." after it.
    """
    if not labels:
        return []
    best = [1] * len(labels)
    previous = [-1] * len(labels)
    for i in range(len(labels)):
        for j in range(i):
            if labels[j][2] < labels[i][2] and best[j] + 1 >= best[i]:
                best[i], previous[i] = best[j] + 1, j
    index = max(range(len(labels)), key=lambda k: (best[k], k))
    run = []
    while index >= 0:
        run.append(labels[index])
        index = previous[index]
    return run[::-1]


def _labels(text: str, allowed: str) -> list[tuple[int, int, int]]:
    """Return every candidate option label: (start, end, letter index), in text order.

    A line's leading label is read by the verifier's own label reader (which
    knows the usual misreadings, "(8)" for B); further labels on a line
    (options in two columns) must be a parenthesised capital, "(B)".
    """
    found: list[tuple[int, int, int]] = []
    position = 0
    for line in text.split("\n"):
        bullet = _BULLET.match(line)
        skip = bullet.end() if bullet else 0
        letter, rest = split_label(line[skip:])
        first_end = 0
        if letter is not None and letter in allowed:
            first_end = len(line) - len(rest.removeprefix("**").lstrip())
            found.append((position, position + first_end, allowed.index(letter)))
        for match in _INLINE_LABEL.finditer(line, first_end):
            if match.group("a") in allowed:
                found.append(
                    (position + match.start(), position + match.end(), allowed.index(match["a"]))
                )
        position += len(line) + 1
    return found


def split_fields(transcript: str, n_options: int) -> tuple[str, dict[str, str]]:
    """Return (stem text, option letter → text) of a transcript, split at its option labels."""
    text = "\n".join(normalise(line) for line in transcript.splitlines())
    allowed = LETTERS[:n_options]
    run = _increasing_run(_labels(text, allowed))
    if not run:
        return text.strip(), {}
    found: dict[str, str] = {}
    for position, (_, end, index) in enumerate(run):
        stop = run[position + 1][0] if position + 1 < len(run) else len(text)
        found[allowed[index]] = text[end:stop].strip()
    return text[: run[0][0]].strip(), found


def _item(row: SweepRow, question: str, options: tuple[str, ...]) -> Item:
    return Item(
        id=row.item_id,
        question=question,
        options=options,
        answer=LETTERS.index(row.answer),
        language=row.language,
    )


def expected_fields(row: SweepRow) -> tuple[Field, list[Field]]:
    """Return the stem and the options the row's image shows, as the verifier expects them."""
    item = _item(row, row.question, row.options)
    shown = [] if row.format in STEM_ONLY_FORMATS else expected_options(item)
    return expected_stem(item), shown


def _flatten(row: SweepRow, text: str) -> str:
    """Return observed text flattened by the verifier's rule (figure tags as words, no math)."""
    return expected_stem(_item(row, text, ())).text


def _whole(stem_text: str, lines: list[tuple[str, str]]) -> str:
    return "\n".join([stem_text, *(f"{letter}. {text}".rstrip() for letter, text in lines)])


def _critical(field: Field, observed: str, reasons: list[tuple[str, str]]) -> None:
    """Add the formula numbers not found in the observed text (the whole-image audit's check)."""
    missing = missing_formula_numbers(field.math, observed, field.text) if field.math else []
    if missing:
        reasons.append(("numbers", f"{field.name}: in a formula: {', '.join(missing)}"))


def score_transcript(
    row: SweepRow, transcript: str, model: str = "", source: str = "transcribe"
) -> Reading:
    """Return the scores of a transcript of `row`'s image against its source text."""
    stem, options = expected_fields(row)
    # A stem-only image has no option labels to split at: everything read is the stem.
    observed_stem, observed_options = split_fields(transcript, len(options))
    thresholds = DEFAULT_THRESHOLDS
    missing: list[tuple[str, str]] = []

    def keep(result_reasons: tuple) -> None:
        for reason in result_reasons:
            if reason.code in CRITICAL_REASONS:
                missing.append((CRITICAL_REASONS[reason.code], f"{reason.region}: {reason.detail}"))

    stem_result = score_stem(stem, observed_stem, thresholds)
    keep(stem_result.reasons)
    _critical(stem, observed_stem, missing)
    readings: list[FieldReading] = []
    for field in options:
        text = observed_options.get(field.letter)
        observed = "" if text is None else f"{field.letter}. {text}"
        result = score_option(field, observed, thresholds)
        keep(result.reasons)
        _critical(field, text or "", missing)
        readings.append(
            FieldReading(field.name, result.score, str(result.region.measures.get("rule", "")))
        )
    shown = {field.letter for field in options}
    expected_all = _whole(stem.text, [(field.letter, field.text) for field in options])
    observed_all = _whole(
        _flatten(row, observed_stem),
        [(letter, _flatten(row, text)) for letter, text in observed_options.items()
         if letter in shown],
    )  # fmt: skip
    return Reading(
        condition_id=row.job_key,
        item_id=row.item_id,
        model=model,
        source=source,
        status="ok" if transcript.strip() else "empty",
        accuracy=ocr_accuracy(expected_all, observed_all),
        question=stem_result.score,
        options=tuple(readings),
        missing=tuple(missing),
    )


def unscored(row: SweepRow, model: str, source: str, status: str) -> Reading:
    """Return the reading of a condition whose transcript is missing (failed or no block)."""
    return Reading(row.job_key, row.item_id, model, source, status)
