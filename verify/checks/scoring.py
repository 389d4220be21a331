"""Scores and reasons for one field (stem or option) from its OCR text."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from itemshot.verify.checks.expected import Field
from itemshot.verify.checks.glyphs import same_letter_as_drawn
from itemshot.verify.checks.labels import same_letter, split_label
from itemshot.verify.checks.meaning import word_reasons
from itemshot.verify.checks.relations import relation_reasons
from itemshot.verify.checks.tokens import (
    is_short,
    missing_formula_numbers,
    missing_numbers,
    missing_units,
    short_option_found,
    unread_formula_scripts,
)
from itemshot.verify.reading.text import (
    compact,
    missing_ends,
    ocr_accuracy,
    word_recall,
    words_and_numbers,
)
from itemshot.verify.thresholds import Thresholds
from itemshot.verify.verdicts import Reason, RegionScore

FORMULA_PREFIX = "in a formula: "  # a number_missing detail about a formula's numbers
UNREAD_SCRIPT = "script_unread"  # asks the second engine; never a verdict by itself


@dataclass(frozen=True)
class FieldResult:
    """The score of one field, its failed checks and its record for the report."""

    score: float
    reasons: tuple[Reason, ...]
    region: RegionScore


def _text_checks(
    field: Field, observed: str, minimum: float, thresholds: Thresholds
) -> tuple[float, list[Reason], dict[str, object]]:
    reasons: list[Reason] = []
    measures: dict[str, object] = {}
    if field.math:
        score = word_recall(field.text, observed)
        measures["rule"] = "math: word recall of the plain text"
        if score < thresholds.math_recall:
            reasons.append(Reason("text_mismatch", field.name, f"word recall {score:.2f}"))
    else:
        score = ocr_accuracy(field.text, observed)
        measures["rule"] = "ocr accuracy"
        if score < minimum:
            reasons.append(Reason("text_mismatch", field.name, f"accuracy {score:.2f}"))
    ends = missing_ends(field.text, observed, thresholds=thresholds)
    if ends:
        measures["missing_ends"] = ends
        reasons.append(ends_reason(field.name, ends))
    missing = missing_numbers(field.text, observed)
    if missing:
        measures["missing_numbers"] = missing
        reasons.append(Reason("number_missing", field.name, ", ".join(missing), tuple(missing)))
    # A unit is checked whatever the numbers gave, its number included: the second engine's
    # veto compares checks token by token, and a unit one reading shows without its number
    # ("goo k") must still count as missing there, or the other reading's "800 k" vetoes
    # the number and nothing is left to fail a source that says 800 °C.
    units = missing_units(field.text, observed)
    if units:
        measures["missing_units"] = units
        reasons.append(Reason("unit_missing", field.name, ", ".join(units), tokens=tuple(units)))
    # Whatever the similarity: one word read as another is another question.
    words = field.vocabulary
    reasons.extend(word_reasons(field.name, field.text, observed, "eng", thresholds, words))
    reasons.extend(relation_reasons(field.name, field.text, field.math, observed))
    return score, reasons, measures


def ends_reason(name: str, ends: Sequence[str]) -> Reason:
    """Return the `text_mismatch` reason for a text's unread ends ("start", "end"), its tokens."""
    return Reason("text_mismatch", name, f"{' and '.join(ends)} of the text not read", tuple(ends))


def formula_number_reasons(field: Field, observed: str) -> list[Reason]:
    """Return a reason when a number of the field's formulas is not read, or read as another.

    A formula's text is not compared (OCR reads typeset math poorly), but a
    baseline value (`180` in `x = 180^\\circ - y`, `6` in `x^2 - 5x + 6`)
    the reading does not show beside the field's other numbers, or a
    subscript read as another number (`CO2` for `CO7`), is a changed number.
    """
    missing = missing_formula_numbers(field.math, observed, field.text)
    if not missing:
        return []
    detail = FORMULA_PREFIX + ", ".join(missing)
    return [Reason("number_missing", field.name, detail, tokens=tuple(missing))]


def unread_script_reasons(field: Field, observed: str) -> list[Reason]:
    """Return a provisional reason when a formula's digit sub/superscript is not read at all.

    tesseract reads no superscript (`x^2` comes out `x?`), so a changed one
    would go unseen; the reason sends the field to the second engine, which
    often reads it inline (`x2`). Read by neither, the script is unchecked,
    not failed: the caller drops this reason once every engine has been asked.
    """
    unread = unread_formula_scripts(field.math, observed)
    return [Reason(UNREAD_SCRIPT, field.name, ", ".join(unread), tuple(unread))] if unread else []


def score_stem(field: Field, observed: str, thresholds: Thresholds) -> FieldResult:
    """Score the stem's OCR text against its source."""
    score, reasons, measures = _text_checks(field, observed, thresholds.text_accuracy, thresholds)
    region = RegionScore(field.name, "question", score, field.text, observed, measures)
    return FieldResult(score, tuple(reasons), region)


def score_option(
    field: Field,
    observed: str,
    thresholds: Thresholds,
    family: str = "",
    letters: str = "",
) -> FieldResult:
    """Score one option's OCR text: its letter label, its text and its critical tokens.

    `family` is the face the label is drawn in: a label read as a letter that
    face draws alike with the option's own ("(D)" as "(O)" in a mono face
    whose D and O are one shape) is the option's label. With `letters` (the
    item's option letters, region mode) a label is also bound by its region's
    position: read as a character that is no option letter ("(J)" in a
    handwriting face read as "(3)"), it contradicts nothing; read as another
    option's letter, or not at all, it fails.
    """
    letter, rest = split_label(observed)
    reasons: list[Reason] = []
    measures: dict[str, object] = {"letter_read": letter}
    if not same_letter(letter, field.letter):
        if same_letter_as_drawn(letter, field.letter, family, thresholds):
            measures["label"] = f"{letter} and {field.letter} look alike in {family}"
        elif letters and letter is not None and letter.upper() not in letters:
            measures["label"] = f"read as {letter!r}, no option letter: bound by position"
        else:
            reasons.append(Reason("letter_mismatch", field.name, f"label read as {letter!r}"))
    if field.text.strip():
        score, text_reasons, text_measures = _text_checks(
            field, rest, thresholds.option_accuracy, thresholds
        )
        reasons.extend(text_reasons)
        measures.update(text_measures)
        short = is_short(field.text, thresholds) and not field.math
        if short and not short_option_found(field.text, rest):
            reasons.append(Reason("short_option_missing", field.name, field.text.strip()))
    else:
        score = 1.0
        measures["rule"] = "image-only option: label only"
    region = RegionScore(field.name, "option", score, field.text, observed, measures)
    return FieldResult(score, tuple(reasons), region)


def read_as_another_option(
    field: Field, readings: Sequence[str], options: Sequence[Field]
) -> Reason | None:
    """Return a reason when an option is read as another option's text and no reading shows its own.

    Two options a sign apart ("(48.0+25.4) /48.0" and "(48.0*25.4) /48.0")
    swapped on the page keep every number and all but one character, so the
    text checks pass each; a reading that is another option's text, character
    for character (spaces and case aside), shows that option. A reading as
    near the option's own text as that one's (look-alike glyphs folded) is
    evidence for its own. Options with formulas are not compared (their text
    has gaps where the formulas stood).
    """
    own = _exact(field.text)
    if field.math or not own:
        return None
    texts = [split_label(r)[1] for r in readings if r.strip()]
    shown = {_exact(t) for t in texts}
    rival = next(
        (
            o
            for o in options
            if o.name != field.name
            and not o.math
            and _exact(o.text) != own
            and _exact(o.text) in shown
        ),
        None,
    )
    if rival is None or any(
        ocr_accuracy(field.text, t) >= ocr_accuracy(rival.text, t) for t in texts
    ):
        return None
    return Reason("text_mismatch", field.name, f"read as option {rival.letter}'s text")


def _exact(text: str) -> str:
    return compact(text).casefold()


def score_caption(field: Field, observed: str, thresholds: Thresholds) -> FieldResult:
    """Score a figure caption: its words and, exactly, its figure number.

    A caption showing another number than the stem's reference ("Figure 6"
    under the figure the stem calls Figure 1) misleads a reader even though
    almost every character matches. Its punctuation is not compared: a
    caption says its words and its number, and in a text this short the dust
    of a scan read as periods ("·Figure. 1.") would weigh as a changed word.
    """
    score = ocr_accuracy(words_and_numbers(field.text), words_and_numbers(observed))
    reasons: list[Reason] = []
    missing = missing_numbers(field.text, observed)
    if missing:
        reasons.append(
            Reason("caption_mismatch", field.name, f"number {', '.join(missing)} not read")
        )
    elif score < thresholds.option_accuracy:
        reasons.append(Reason("caption_mismatch", field.name, f"accuracy {score:.2f}"))
    region = RegionScore(field.name, "caption", score, field.text, observed, {"rule": "caption"})
    return FieldResult(score, tuple(reasons), region)
