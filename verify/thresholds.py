"""The pass/fail thresholds of the verifier, with their documented defaults."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any


@dataclass(frozen=True)
class Thresholds:
    """Every number a verdict depends on. Defaults were set on clean 1024 px renders.

    - `text_accuracy` (0.90): minimum OCR accuracy of the stem (1 - Levenshtein / max length
      after normalisation; spaces and letter case are ignored, see `verify.reading.text`).
    - `option_accuracy` (0.80): minimum OCR accuracy of each option's text (short texts
      lose more per misread character, hence lower).
    - `math_recall` (0.80): for text with formulas, share of the plain words that must be read.
    - `figure_template` (0.60): minimum normalised cross-correlation of a figure in its box.
    - `figure_features` (0.35): minimum share of inlier features when a warped figure box is
      checked against its source.
    - `figure_presence` (0.35): minimum tile score of a figure found in a layout-less image
      (1 - the second-worst tile's residual in units of the figure's contrast; see
      `verify.checks.figure_search`). On Chromium renders of the sample items in six scenes the
      genuine figure scores at least 0.72 (0.55 after light screenshot, photo and scan
      captures) and a figure swapped for another sample figure at most 0.01.
    - `contrast` (4.5): minimum WCAG contrast ratio of text to its background (AA body text).
    - `x_height_px` (6.0): minimum x-height in final-image pixels (through the capture's
      geometry: see `verify.checks.legibility`).
    - `resolved_x_height_px` (3.0): minimum x-height left resolvable after blur
      (x-height / edge width); under it the text is `illegible`.
    - `legible_contrast` (1.5): minimum contrast of text to background measured on the final
      pixels; under it the text is `illegible`.
    - `marginal_x_height_px` (8.0), `marginal_resolved_px` (5.0), `marginal_contrast` (4.5):
      comfort levels; a field no engine reads whose text is under one of them also gets
      `hard_to_read` (a legible image whose text fails is then told from a reading problem).
    - `whole_image_field` (0.75): minimum aligned accuracy of a field in a whole-image audit.

    Meaning (`verify.checks.meaning`: a source word read, in its place, as another word):

    - `meaning_word_zipf` (3.0): minimum Zipf frequency (`wordfreq`: 3 is about once per
      million words) of what a reading shows in a source word's place for it to count as
      another real word; a rarer reading is a misread glyph, not a changed word.
    - `meaning_min_edits` (2): minimum characters (after OCR look-alikes are folded) by which
      a non-critical word's reading must differ from it to count as another word.
    - `meaning_min_letters` (4): a shorter non-critical source word read as another word is
      not judged: one engine's slip into another short word ("in" for "on") is common, and a
      critical short word (no, all, up) is judged whatever its length.

    The face of a page with no layout record (`verify.settlers.drawn_face`):

    - `face_match` (0.80): minimum mean correlation of the probe words drawn in a face with
      the ink for the face to be the page's (the ink module's `MIN_MATCH`).
    - `face_lead` (0.03): how much better than every other catalogue face it must fit.
    - `face_size_low` (0.7), `face_size_high` (1.6): the drawn sizes tried, per px of the size
      estimated from a probe word's OCR box (its height depends on its letters' ascenders
      and descenders as well as on the face).
    - `face_probes` (3), `face_probe_letters` (5): the longest words read exactly, of at
      least that many letters, drawn in each face.
    """

    text_accuracy: float = 0.90
    option_accuracy: float = 0.80
    math_recall: float = 0.80
    figure_template: float = 0.60
    figure_features: float = 0.35
    figure_presence: float = 0.35
    contrast: float = 4.5
    x_height_px: float = 6.0
    resolved_x_height_px: float = 3.0
    legible_contrast: float = 1.5
    marginal_x_height_px: float = 8.0
    marginal_resolved_px: float = 5.0
    marginal_contrast: float = 4.5
    whole_image_field: float = 0.75
    # Meaning
    meaning_word_zipf: float = 3.0
    meaning_min_edits: float = 2.0
    meaning_min_letters: float = 4.0
    # The face of a page with no layout record
    face_match: float = 0.80
    face_lead: float = 0.03
    face_size_low: float = 0.7
    face_size_high: float = 1.6
    face_probes: float = 3.0
    face_probe_letters: float = 5.0

    def as_dict(self) -> dict[str, float]:
        """Return the thresholds as a plain dict."""
        return asdict(self)

    def updated(self, values: dict[str, Any]) -> Thresholds:
        """Return a copy with some thresholds replaced; unknown names raise ValueError."""
        known = {f.name for f in fields(self)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown threshold(s): {', '.join(unknown)}; known: {sorted(known)}")
        return replace(self, **{k: float(v) for k, v in values.items()})


DEFAULT_THRESHOLDS = Thresholds()
