"""Verdict records: per-image pass/fail, machine-readable reasons and per-region scores."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any


class ReasonCode(StrEnum):
    """The code of a Reason: each names one check that failed (`REASON_CODES` says which)."""

    TEXT_MISMATCH = "text_mismatch"
    NUMBER_MISSING = "number_missing"
    UNIT_MISSING = "unit_missing"
    WORD_CHANGED = "word_changed"
    WORD_DROPPED = "word_dropped"
    WORD_ADDED = "word_added"
    FORMULA_CHANGED = "formula_changed"
    RELATION_CHANGED = "relation_changed"
    SHORT_OPTION_MISSING = "short_option_missing"
    LETTER_MISMATCH = "letter_mismatch"
    OPTION_MISSING = "option_missing"
    EXTRA_OPTION = "extra_option"
    READING_ORDER = "reading_order"
    FIGURE_MISSING = "figure_missing"
    FIGURE_MISMATCH = "figure_mismatch"
    FIGURE_REFERENCE_DROPPED = "figure_reference_dropped"
    MATH_ERROR = "math_error"
    OVERFLOW = "overflow"
    CLIPPED = "clipped"
    FONT_FALLBACK = "font_fallback"
    MISSING_GLYPH = "missing_glyph"
    LOW_CONTRAST = "low_contrast"
    TEXT_TOO_SMALL = "text_too_small"
    ILLEGIBLE = "illegible"
    HARD_TO_READ = "hard_to_read"
    CAPTION_MISMATCH = "caption_mismatch"
    GLYPH_AMBIGUITY = "glyph_ambiguity"
    IMAGE_MISMATCH = "image_mismatch"
    UNREADABLE_IMAGE = "unreadable_image"
    VERIFY_ERROR = "verify_error"
    NO_ITEM = "no_item"


# What each code's check is, for reports and the documentation.
_DESCRIPTIONS: dict[ReasonCode, str] = {
    ReasonCode.TEXT_MISMATCH: "OCR of a text region does not match the source text well enough",
    ReasonCode.NUMBER_MISSING: "a number in the source is not read exactly in its region",
    ReasonCode.UNIT_MISSING: "a number with its unit is not read together",
    ReasonCode.WORD_CHANGED: "a word of the source is read, confidently, as another real word",
    ReasonCode.WORD_DROPPED: (
        "a critical word of the source (negation, quantifier, comparative, direction) is not shown"
    ),
    ReasonCode.WORD_ADDED: "a negation the source does not have is shown between its words",
    ReasonCode.FORMULA_CHANGED: (
        "a formula was typeset from other TeX than the source's (layout record), or its ink "
        "matches the formula with another digit better (no record)"
    ),
    ReasonCode.RELATION_CHANGED: (
        "a comparison (=, <, >, ≤, ≥, ≠) is read between the same operands with another meaning"
    ),
    ReasonCode.SHORT_OPTION_MISSING: "a short option is not read exactly",
    ReasonCode.LETTER_MISMATCH: "an option's text is not next to its own letter",
    ReasonCode.OPTION_MISSING: "an option of the item is not in the image",
    ReasonCode.EXTRA_OPTION: "the image shows an option letter the item does not have",
    ReasonCode.READING_ORDER: "stem and options are not in reading order",
    ReasonCode.FIGURE_MISSING: "a source figure is not found in the image",
    ReasonCode.FIGURE_MISMATCH: "a figure box shows something else than its source figure",
    ReasonCode.FIGURE_REFERENCE_DROPPED: "an `<image N>` reference in the text is not shown as words",
    ReasonCode.MATH_ERROR: "a formula failed to typeset or is not in its region",
    ReasonCode.OVERFLOW: "a region's content overflows its box",
    ReasonCode.CLIPPED: "a region lies partly outside the image",
    ReasonCode.FONT_FALLBACK: "text was drawn with a font that was not requested",
    ReasonCode.MISSING_GLYPH: "a character has no glyph in the fonts used (tofu)",
    ReasonCode.LOW_CONTRAST: "text/background contrast ratio is under the threshold",
    ReasonCode.TEXT_TOO_SMALL: "the text's x-height in the final image's pixels is under the minimum",
    ReasonCode.ILLEGIBLE: "the text is too blurred or too faint in the final image to be read",
    ReasonCode.HARD_TO_READ: "no engine reads a field whose text sits at the edge of legibility",
    ReasonCode.CAPTION_MISMATCH: "a figure caption's number is not the one the stem refers to",
    ReasonCode.GLYPH_AMBIGUITY: "a token left failing is drawn like a rival in its face: the ink cannot tell",
    ReasonCode.IMAGE_MISMATCH: "the image does not match its layout record (size, missing regions)",
    ReasonCode.UNREADABLE_IMAGE: "the image file cannot be read",
    ReasonCode.VERIFY_ERROR: "the verifier failed on this image (the message says where)",
    ReasonCode.NO_ITEM: "no source item matches this image",
}
REASON_CODES: dict[str, str] = {code.value: text for code, text in _DESCRIPTIONS.items()}


@dataclass(frozen=True)
class Reason:
    """One failed check: its code, where it failed, a short detail and the tokens it is about.

    `tokens` are what the check found not shown (numbers, units, words with
    their place), one by one: a settler drops the tokens its evidence shows
    without parsing `detail`, which says the same in words.
    """

    code: str  # a ReasonCode (a str, so records written before the enum still compare)
    region: str = ""
    detail: str = ""
    tokens: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """Return the reason as a plain dict (`tokens` only when it has some)."""
        record: dict[str, Any] = {"code": str(self.code), "region": self.region}
        record["detail"] = self.detail
        if self.tokens:
            record["tokens"] = list(self.tokens)
        return record


@dataclass(frozen=True)
class RegionScore:
    """What was measured for one region (or one field of a whole-image audit)."""

    name: str
    kind: str
    score: float | None
    expected: str = ""
    observed: str = ""
    measures: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """Return the region score as a JSON-ready dict."""
        record = asdict(self)
        if self.score is not None:
            record["score"] = round(self.score, 4)
        return record


@dataclass(frozen=True)
class Verdict:
    """The verifier's answer for one image: pass/fail, why, and the per-region scores."""

    image: str
    item_id: str
    passed: bool
    mode: str  # "regions" (layout record) or "whole_image"
    lang: str
    reasons: tuple[Reason, ...] = ()
    regions: tuple[RegionScore, ...] = ()

    @property
    def codes(self) -> list[str]:
        """Return the distinct reason codes, in first-seen order."""
        return list(dict.fromkeys(r.code for r in self.reasons))

    def as_dict(self) -> dict[str, Any]:
        """Return the verdict as a JSON-ready dict."""
        return {
            "image": self.image,
            "item_id": self.item_id,
            "passed": self.passed,
            "mode": self.mode,
            "lang": self.lang,
            "reasons": [r.as_dict() for r in self.reasons],
            "regions": [r.as_dict() for r in self.regions],
        }


def verdict(
    image: str,
    item_id: str,
    mode: str,
    lang: str,
    reasons: list[Reason],
    regions: list[RegionScore],
) -> Verdict:
    """Return a verdict that passes exactly when there is no reason to fail it."""
    return Verdict(image, item_id, not reasons, mode, lang, tuple(reasons), tuple(regions))
