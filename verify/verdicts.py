"""Verdict records: per-image pass/fail, machine-readable reasons and per-region scores."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

# Reason codes (the `code` of a Reason). Each names one check that failed.
REASON_CODES = {
    "text_mismatch": "OCR of a text region does not match the source text well enough",
    "number_missing": "a number in the source is not read exactly in its region",
    "unit_missing": "a number with its unit is not read together",
    "short_option_missing": "a short option is not read exactly",
    "letter_mismatch": "an option's text is not next to its own letter",
    "option_missing": "an option of the item is not in the image",
    "extra_option": "the image shows an option letter the item does not have",
    "reading_order": "stem and options are not in reading order",
    "figure_missing": "a source figure is not found in the image",
    "figure_mismatch": "a figure box shows something else than its source figure",
    "figure_reference_dropped": "an `<image N>` reference in the text is not shown as words",
    "math_error": "a formula failed to typeset or is not in its region",
    "overflow": "a region's content overflows its box",
    "clipped": "a region lies partly outside the image",
    "font_fallback": "text was drawn with a font that was not requested",
    "missing_glyph": "a character has no glyph in the fonts used (tofu)",
    "low_contrast": "text/background contrast ratio is under the threshold",
    "text_too_small": "the text's x-height in the final image's pixels is under the minimum",
    "illegible": "the text is too blurred or too faint in the final image to be read",
    "hard_to_read": "no engine reads a field whose text sits at the edge of legibility",
    "caption_mismatch": "a figure caption's number is not the one the stem refers to",
    "glyph_ambiguity": "a token left failing is drawn like a rival in its face: the ink cannot tell",
    "image_mismatch": "the image does not match its layout record (size, missing regions)",
    "unreadable_image": "the image file cannot be read",
    "verify_error": "the verifier failed on this image (the message says where)",
    "no_item": "no source item matches this image",
}


@dataclass(frozen=True)
class Reason:
    """One failed check: a code from `REASON_CODES`, where it failed, and a short detail."""

    code: str
    region: str = ""
    detail: str = ""

    def as_dict(self) -> dict[str, str]:
        """Return the reason as a plain dict."""
        return asdict(self)


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
