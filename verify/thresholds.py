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
    - `whole_image_placeholder` (0.80): how closely a line must read as a missing figure's
      placeholder ("Figure 1 (image not available)") to be the figure's, not the stem's.

    Meaning (`verify.checks.meaning`: a source word read, in its place, as another word):

    - `meaning_word_zipf` (3.0): minimum Zipf frequency (`wordfreq`: 3 is about once per
      million words) of what a reading shows in a source word's place for it to count as
      another real word; a rarer reading is a misread glyph, not a changed word.
    - `meaning_min_edits` (2): minimum characters (after OCR look-alikes are folded) by which
      a non-critical word's reading must differ from it to count as another word.
    - `meaning_min_letters` (4): a shorter non-critical source word read as another word is
      not judged: one engine's slip into another short word ("in" for "on") is common, and a
      critical short word (no, all, up) is judged whatever its length.

    Text and tokens (`verify.reading.text`, `verify.checks.tokens`):

    - `ends_chars` (16): characters at each end of a long text that must be read near the
      reading's own ends (the truncation check: a lost last line keeps a high accuracy).
    - `ends_min_chars` (6): a formula field's first or last plain piece shorter than this
      has no end of its own to check (the formula's numbers are checked instead).
    - `ends_from_chars` (24): a text shorter than this (spaces aside) has no ends checked:
      its accuracy covers them.
    - `short_option_chars` (12): an option of at most this many characters (spaces aside)
      must be read exactly, whole (`short_option_missing`).
    - `unit_word_zipf` (5.4): letters after a number as common as this (`wordfreq` Zipf,
      English) are a word of the sentence ("3 only", "10 per box"), not the number's unit.

    Glyphs a face draws alike (`verify.checks.glyphs`: a text read as the face draws it):

    - `glyph_min_similarity` (0.85): minimum correlation of two glyphs (cropped to their
      ink, centred and softened by 1 px as the eye sees them) for the face to draw them alike.
    - `glyph_max_height_ratio` (1.25): glyphs whose heights differ by more than this ratio
      are never drawn alike.
    - `glyph_same_height_ratio` (1.10), `glyph_min_similarity_same_height` (0.78): glyphs
      within this ratio are one height to the eye (under a pixel at the 8-11 px x-height
      text is read at) and leave a reader only their shape: this lower correlation is
      enough (Nanum Pen Script's "0" and "o", "2" and "z": 0.80).

    Figures (`verify.checks.figures`, `verify.checks.figure_search`):

    - `figure_blank_std` (6.0): grey-level standard deviation under which a figure box with
      no source figure at hand counts as empty (`figure_missing`).
    - `figure_search_min_gain` (0.15): a placement whose fitted contrast (gain of the image
      over the figure) is below this relates to it not at all (or shows it inverted): 0.
    - `figure_search_ratio` (0.75): Lowe's ratio test of a SIFT match (best distance under
      this share of the second best) for it to count as a distinct match.
    - `figure_search_min_inliers` (6): fewest RANSAC inliers of a feature placement.
    - `figure_search_min_side_px` (16): a placement with a side shorter than this (final px)
      is no figure that can be checked (nor read).
    - `figure_search_max_tilt` (30.0): most degrees a placement's top edge may be rotated.
    - `figure_search_max_corner_cosine` (0.5): most |cosine| of a placement's corners (they
      lie between 60 and 120 degrees).
    - `figure_search_max_aspect_change` (1.5): most ratio of a placement's width/height to
      the figure's own, either way.

    Layout and legibility (`verify.checks.layout_checks`, `verify.checks.legibility`):

    - `clip_tolerance_px` (1.0): px a region's quad may reach past the image, or a figure's
      box past the text box it is drawn in, and still lie within it.
    - `sharp_edge` (1.9): ink-to-background step over the steepest gradient of a crisp
      anti-aliased edge (1.7-2.0 on clean renders); an edge's measured width is divided by
      it, so a crisp edge is 1 px wide and the resolved x-height is set by blur alone.

    Region mode (`verify.modes.regions`):

    - `layout_size_tolerance_px` (1): px the image's width or height may differ from its
      layout record's; more and the image is not the one recorded (`image_mismatch`).
    - `reread_max_fields` (4): more failing fields than this and no field is read again at
      other scales: the image fails whatever a re-reading would find.

    Ink evidence (`verify.settlers.ink`: the source's token drawn in the field's face and
    size, against each rival drawn alike, asked of the ink):

    - `ink_min_match` (0.80): minimum correlation of the source's drawing with the ink for
      the token to be shown, whatever its rivals; also the minimum mean correlation of the
      probe words drawn in a face for it to be the face of a page with no layout record.
    - `ink_margin` (0.05): how much better than every rival the source's drawing must match
      the ink where the two differ; a token within this of a rival either way is ambiguous.
    - `ink_read_lead` (0.08): how much better a reading drawn in one of the token's contexts
      must fit the ink than the source drawn in the same context for the place to show the
      reading ("Both can" 0.98 over "Both cannot" 0.85 where the image says "can").
    - `ink_context_tolerance` (0.02): a longer context matching this much worse than the
      best is still the one drawn (its rivals then lie over ink both drawings model).
    - `ink_fit_tolerance` (0.05): a size at which both drawings match the ink this much worse
      than the located one says nothing (their glyphs land anywhere).
    - `ink_min_window_std` (0.25): a window of the ink whose standard deviation is under this
      share of the drawing's is near blank (it correlates with anything) and is not a place.
    - `ink_side_level` (0.40): share of the page's ink level (its 99.5th percentile) at which
      a strip beside a located drawing's ink holds another glyph's stroke (the drawing sits
      inside a longer word or number, and is not located there).
    - `ink_alone_em` (1.0): a token looked for without its neighbours, its own contexts cut
      by a line break and another place of it found where they fit, is located only where no
      ink lies this many em beside it (alone on its line, as a wrapped last word stands): a
      lone "0" is otherwise found on a handwritten "o".

    Formula ink (`verify.settlers.formula_ink`: a formula with no layout record drawn with
    its digits and with each digit replaced, asked of the ink):

    - `formula_ink_min_match` (0.75): minimum correlation of the source formula's drawing
      with the ink where it is located, and of the rival's with the ink where the two
      differ, for the ink to show the rival (mathtext's Computer Modern is KaTeX's family,
      not its files: a formula matches less than a word drawn in its own face).
    - `formula_ink_margin` (0.15): how much better a rival digit must match the ink where
      the two drawings differ for the image to show the rival.

    The face of a page with no layout record (`verify.settlers.drawn_face`); its drawing
    must match by `ink_min_match`:

    - `face_lead` (0.03): how much better than every other catalogue face it must fit.
    - `face_size_low` (0.7), `face_size_high` (1.6): the drawn sizes tried, per px of the size
      estimated from a probe word's OCR box (its height depends on its letters' ascenders
      and descenders as well as on the face).
    - `face_probes` (3), `face_probe_letters` (5): the longest words read exactly, of at
      least that many letters, drawn in each face.
    - `face_opening_chars` (16): how much of a field's opening words is drawn to find the
      size its text is drawn at (`DrawnFace.fitted_px`).
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
    whole_image_placeholder: float = 0.80
    # Meaning
    meaning_word_zipf: float = 3.0
    meaning_min_edits: float = 2.0
    meaning_min_letters: float = 4.0
    # Text and tokens
    ends_chars: float = 16.0
    ends_min_chars: float = 6.0
    ends_from_chars: float = 24.0
    short_option_chars: float = 12.0
    unit_word_zipf: float = 5.4
    # Glyphs a face draws alike
    glyph_min_similarity: float = 0.85
    glyph_max_height_ratio: float = 1.25
    glyph_same_height_ratio: float = 1.10
    glyph_min_similarity_same_height: float = 0.78
    # Figures
    figure_blank_std: float = 6.0
    figure_search_min_gain: float = 0.15
    figure_search_ratio: float = 0.75
    figure_search_min_inliers: float = 6.0
    figure_search_min_side_px: float = 16.0
    figure_search_max_tilt: float = 30.0
    figure_search_max_corner_cosine: float = 0.5
    figure_search_max_aspect_change: float = 1.5
    # Layout and legibility
    clip_tolerance_px: float = 1.0
    sharp_edge: float = 1.9
    # Region mode
    layout_size_tolerance_px: float = 1.0
    reread_max_fields: float = 4.0
    # Ink evidence
    ink_min_match: float = 0.80
    ink_margin: float = 0.05
    ink_read_lead: float = 0.08
    ink_context_tolerance: float = 0.02
    ink_fit_tolerance: float = 0.05
    ink_min_window_std: float = 0.25
    ink_side_level: float = 0.40
    ink_alone_em: float = 1.0
    # Formula ink
    formula_ink_min_match: float = 0.75
    formula_ink_margin: float = 0.15
    # The face of a page with no layout record
    face_lead: float = 0.03
    face_size_low: float = 0.7
    face_size_high: float = 1.6
    face_probes: float = 3.0
    face_probe_letters: float = 5.0
    face_opening_chars: float = 16.0

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
