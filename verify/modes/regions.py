"""Region-by-region verification of an image that has a layout record."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import numpy as np

from itemshot.renderer.items import LETTERS, Item
from itemshot.renderer.records import Layout, Region
from itemshot.verify.checks import expected as source
from itemshot.verify.checks.expected import Field
from itemshot.verify.checks.figures import (
    SHIFT,
    decode_figure,
    feature_match,
    figure_content,
    template_score,
)
from itemshot.verify.checks.findings import FINDING_CODES, finding_shown
from itemshot.verify.checks.formula_record import formula_reasons
from itemshot.verify.checks.glyphs import read_as_drawn
from itemshot.verify.checks.labels import split_label
from itemshot.verify.checks.layout_checks import (
    final_drawn_px,
    final_font_px,
    layout_reasons,
    primary_font,
)
from itemshot.verify.checks.legibility import marginal_reasons, region_legibility
from itemshot.verify.checks.meaning import adds_negation, token_word
from itemshot.verify.checks.scoring import (
    FORMULA_PREFIX,
    UNREAD_SCRIPT,
    FieldResult,
    ends_reason,
    formula_number_reasons,
    read_as_another_option,
    score_caption,
    score_option,
    score_stem,
    unread_script_reasons,
)
from itemshot.verify.checks.tokens import (
    contradicted_formula_scripts,
    leading_number,
    prefixed_units,
    shown_in_place,
    unread_formula_scripts,
)
from itemshot.verify.page.crops import (
    clean_text_crop,
    despeckled,
    gray,
    is_axis_aligned,
    normalise_text,
    otsu,
    paint_quads,
    rectify,
    scaled,
)
from itemshot.verify.reading import second_reader
from itemshot.verify.reading.ocr import join_words, language_for, ocr_stacked, words
from itemshot.verify.reading.text import normalise, word_recall
from itemshot.verify.settlers.drawn_face import DrawnFace
from itemshot.verify.settlers.ink_settle import settle_by_ink
from itemshot.verify.thresholds import DEFAULT_THRESHOLDS, Thresholds
from itemshot.verify.verdicts import Reason, ReasonCode, RegionScore, Verdict, verdict

TEXT_KINDS = ("question", "option", "caption")
CAPTION_MARGIN = 0.4  # em
TARGET_FONT_PX = 22.0  # tesseract reads best around this size


class Retry(NamedTuple):
    """One more way to read a region that failed at the normal scale."""

    scale: float  # for 20 px text
    binarise: bool
    despeckle: bool


# Tried in turn, each until one reading passes the field.
RETRIES = (
    Retry(2.0, binarise=False, despeckle=False),
    Retry(1.5, binarise=True, despeckle=False),
    Retry(2.5, binarise=False, despeckle=False),
    Retry(1.2, binarise=True, despeckle=False),
    Retry(1.1, binarise=False, despeckle=True),
    Retry(2.0, binarise=True, despeckle=True),
)
SECOND_ENGINE_MEASURES = ("second_engine", "readings", "settled")


@dataclass(frozen=True)
class TextCrop:
    """A text region ready for OCR."""

    region: Region
    first: np.ndarray  # crop at the normal scale
    raw: np.ndarray  # unscaled crop for a retry
    font_px: float  # font size in the unscaled crop, as the reference face's of that x-height
    drawn_px: float  # the size the face's glyphs are drawn at in the unscaled crop


def _text_crops(
    image: np.ndarray, layout: Layout, render: Mapping[str, Any] | None
) -> list[TextCrop]:
    figures = [r.quad for r in layout.regions if r.kind == "figure"]
    painted = paint_quads(image, figures) if figures else image
    crops: list[TextCrop] = []
    for region in layout.regions:
        if region.kind not in TEXT_KINDS:
            continue
        font = max(1.0, final_font_px(region, layout, render))
        # A caption is one short line alone under its figure: a margin around its box keeps
        # the glyphs a capture's lens moved a pixel or two out of the mapped quad.
        pad = round(CAPTION_MARGIN * font) if region.kind == "caption" else 0
        grey = normalise_text(gray(rectify(painted, region.quad, pad)), font)
        clean = clean_text_crop(grey, font_px=font)
        scale = min(3.0, max(1.0, TARGET_FONT_PX / font))
        drawn = final_drawn_px(region, layout, render)
        crops.append(TextCrop(region, scaled(clean, scale), clean, font, drawn))
    return crops


def _retry(crop: TextCrop, lang: str, retry: Retry) -> str:
    """Return the OCR text of one crop read alone the `retry`'s way."""
    scale = min(5.0, max(1.0, retry.scale * 20.0 / crop.font_px))
    one_line = crop.raw.shape[0] < 2.2 * crop.font_px
    pixels = despeckled(crop.raw, crop.font_px) if retry.despeckle else crop.raw
    pixels = scaled(pixels, scale)
    if retry.binarise:
        pixels = otsu(pixels)
    return join_words(words(pixels, lang, psm=7 if one_line else 6))


def _reread(
    entry: tuple[Field, list[TextCrop], FieldResult],
    lang: str,
    thresholds: Thresholds,
    letters: str,
) -> tuple[Field, list[TextCrop], FieldResult]:
    """Read a failing field's crops again, alone, at other scales; keep the best reading."""
    field, crops, result = entry
    if not crops or not result.region.observed.strip():
        return entry
    # What the second engine read is kept on the record whichever reading wins.
    consulted = {k: v for k, v in result.region.measures.items() if k in SECOND_ENGINE_MEASURES}
    second = str(consulted.get("readings", {}).get(second_reader.ENGINE, ""))
    readings = [result.region.observed, second]
    scored_words = [result]
    result = _without_words(result)
    for retry in RETRIES:
        observed = "\n".join(_retry(c, lang, retry) for c in crops)
        readings.append(observed)
        scored = _score(field, observed, thresholds, crops, letters)
        if retry.despeckle and UNREAD_SCRIPT in {r.code for r in scored.reasons}:
            continue  # a formula's scripts are as small as specks: they went with them
        scored_words.append(scored)
        scored = _without_words(scored)
        # Asked after every engine: a script this reading leaves unread is no failure, but
        # no evidence against what the second engine read of it either.
        retried = _settle_unread_scripts(scored)
        if second and "number_missing" not in {r.code for r in retried.reasons}:
            evidence = _script_evidence(field, observed, second)
            retried = replace(retried, reasons=(*retried.reasons, *evidence))
        if _better(retried, result):
            measures = {**retried.region.measures, "engine": "tesseract", **consulted}
            result = replace(retried, region=replace(retried.region, measures=measures))
        if not result.reasons and not _words_left(field, scored_words, readings):
            break
    words = _words_left(field, scored_words, readings)
    result = _tokens_in_place(field, replace(result, reasons=(*result.reasons, *words)), readings)
    return (
        field,
        crops,
        replace(result, reasons=(*result.reasons, *_prefixed(field, result, readings))),
    )


def _prefixed(field: Field, result: FieldResult, readings: list[str]) -> tuple[Reason, ...]:
    """Return a unit check for the units some reading shows with a prefix the source lacks.

    A re-reading that shows the source's "1.00 M" where another read "1.00 mM"
    may have dropped the "m": the readings disagree, and the ink decides.
    """
    if any(r.code == "unit_missing" for r in result.reasons):
        return ()
    changed = list(dict.fromkeys(t for r in readings for t in prefixed_units(field.text, r)))
    if not changed:
        return ()
    return (Reason("unit_missing", field.name, ", ".join(changed), tokens=tuple(changed)),)


def _without_words(result: FieldResult) -> FieldResult:
    return replace(result, reasons=tuple(r for r in result.reasons if r.code not in FINDING_CODES))


def _words_left(
    field: Field, results: list[FieldResult], readings: list[str]
) -> tuple[Reason, ...]:
    """Return the word findings of any reading that no reading shows as the source has it.

    A reading that has no finding about a word (it read the word as no
    word at all) is no evidence the word is shown: only a reading showing
    the source's word in its place settles it.
    """
    said: dict[str, dict[str, str]] = {}
    for result in results:
        for reason in result.reasons:
            if reason.code in FINDING_CODES:
                for token, text in _said(reason).items():
                    said.setdefault(reason.code, {}).setdefault(token, text)
    left = []
    texts = _as_scored(field, readings)
    for code, tokens in said.items():
        kept = {t: d for t, d in tokens.items() if not _word_shown(code, field, t, d, texts)}
        if kept:
            left.append(Reason(code, field.name, "; ".join(kept.values()), tuple(kept)))
    return tuple(left)


def _said(reason: Reason) -> dict[str, str]:
    """Return what a word finding's reason says of each of its tokens ("'most' read as 'least'")."""
    parts = reason.detail.split("; ")
    whole = len(parts) != len(reason.tokens)
    return {t: reason.detail if whole else parts[k] for k, t in enumerate(reason.tokens)}


def _word_shown(code: str, field: Field, token: str, said: str, texts: list[str]) -> bool:
    """Return whether some reading shows a finding's word as the source has it, in its place.

    Not a word another reading shows negated by a prefix (`adds_negation`):
    a reading that dropped the prefix settles nothing; the ink decides.
    """
    read = said.rpartition(" read as ")[2].strip("'\"")
    if code == ReasonCode.WORD_CHANGED and adds_negation(token_word(token)[0], read):
        return False
    return finding_shown(code, field.text, token, texts)


def _as_scored(field: Field, readings: list[str]) -> list[str]:
    """Return the readings as the field's scorer compares them: an option's after its label.

    Left on, the label is one more word to align ("(B) not BAA" aligns its "B"
    with the source's first word), and a reading shows a word it has not.
    """
    return [split_label(r)[1] for r in readings] if field.letter else readings


def _tokens_in_place(field: Field, result: FieldResult, readings: list[str]) -> FieldResult:
    """Drop from the token checks each token some reading shows in its place in the source.

    Each reading misreads its own few tokens ("300" as "360" in one, "1,150"
    as "1 150" in another): a token the readings show between the words the
    source has beside it, wherever the source has it, is shown. A formula's
    numbers are another check.
    """
    kept: list[Reason] = []
    texts = _as_scored(field, readings)
    for reason in result.reasons:
        prefix, tokens = _tokens(reason)
        if reason.code not in TOKEN_CODES or prefix:
            kept.append(reason)
            continue
        if reason.code in FINDING_CODES:
            said = _said(reason)
            left = [
                t
                for t in tokens
                if not _word_shown(reason.code, field, t, said.get(t, reason.detail), texts)
            ]
        else:
            left = [t for t in tokens if not shown_in_place(field.text, t, texts)]
        if left:
            kept.append(_keep_tokens(reason, left))
    return replace(result, reasons=tuple(kept))


def _by_ink(
    entry: tuple[Field, list[TextCrop], FieldResult],
    page_family: str,
    options: list[Field],
    thresholds: Thresholds,
) -> tuple[Field, list[TextCrop], FieldResult]:
    """Ask the field's pixels about the tokens every engine missed (see `verify.settlers.ink`).

    A region that records no face of its own (an image-only option: its
    label is all the text it has) is drawn in the page's main face. The
    item's other `options` are what an option's place could show instead.
    """
    field, crops, result = entry
    if not crops:
        return entry
    family = primary_font(crops[0].region) or page_family
    raw = [c.raw for c in crops]
    label = crops[0].region.label
    others = [o.text for o in options if o.name != field.name]
    # The ink is drawn in the face at the size it was set at (see `Region.drawn_px`).
    letters = "".join(o.letter for o in options)
    settled = settle_by_ink(
        field, raw, crops[0].drawn_px, family, label, result, others, thresholds, letters
    )
    return field, crops, settled


def _score(
    field: Field, observed: str, thresholds: Thresholds, crops: list[TextCrop], letters: str
) -> FieldResult:
    """Score a field's reading, numbers read as the field's own face draws them."""
    family = (primary_font(crops[0].region) or "") if crops else ""
    observed = read_as_drawn(observed, field.text, family, thresholds)
    if field.name.startswith("caption:"):
        return score_caption(field, observed, thresholds)
    if field.letter:
        result = score_option(field, observed, thresholds, family, letters)
    else:
        result = score_stem(field, observed, thresholds)
    formulas = formula_number_reasons(field, observed)
    unread = unread_script_reasons(field, observed)
    if not formulas and not unread:
        return result
    measures = dict(result.region.measures)
    if formulas:
        measures["missing_formula_numbers"] = formulas[0].detail
    region = replace(result.region, measures=measures)
    return replace(result, reasons=(*result.reasons, *formulas, *unread), region=region)


def _second_opinion(
    entry: tuple[Field, list[TextCrop], FieldResult], thresholds: Thresholds, letters: str
) -> tuple[Field, list[TextCrop], FieldResult]:
    """Read a rejected field with the second engine; a check fails only if both readings fail it.

    Each check asks whether something is shown (the text, a number, the
    label); either engine reading it is evidence that it is. The reasons kept
    are those of the better reading for the checks both readings failed.
    """
    field, crops, first = entry
    if not crops:
        return entry
    observed = "\n".join(second_reader.read(c.raw, c.font_px) for c in crops)
    second = _score(field, observed, thresholds, crops, letters)
    best, other = (second, first) if _better(second, first) else (first, second)
    engine = second_reader.ENGINE if best is second else "tesseract"
    measures = {
        **best.region.measures,
        "engine": engine,
        "second_engine": second_reader.ENGINE,
        "readings": {"tesseract": first.region.observed, second_reader.ENGINE: observed},
    }
    region = replace(best.region, measures=measures)
    kept = tuple(
        r
        for r in (_shared(r, other.reasons) for r in best.reasons if r.code not in FINDING_CODES)
        if r is not None
    )
    readings = [first.region.observed, observed]
    kept, recall = _formula_words_shown(field, kept, readings, thresholds)
    if recall is not None:
        region = replace(region, measures={**region.measures, "word_recall_either": recall})
    # A word either reading shows otherwise stays until a reading shows it as the source has it.
    words = _words_left(field, [first, second], readings)
    kept += words
    if "number_missing" not in {r.code for r in kept}:
        kept += _script_evidence(field, first.region.observed, observed)
    return field, crops, FieldResult(best.score, kept, region)


def _formula_words_shown(
    field: Field, kept: tuple[Reason, ...], readings: list[str], thresholds: Thresholds
) -> tuple[tuple[Reason, ...], float | None]:
    """Return the reasons without a formula field's word-recall failure that both readings pass.

    A field with formulas is checked by the share of its plain words read,
    each word on its own: one either reading shows is shown ("mv sin θ" read
    "wv sin" and "mv sīn"). Also return that share over both readings (None
    when there was no such failure to weigh).
    """
    recall_failed = [r for r in kept if r.code == "text_mismatch" and not r.tokens]
    if not field.math or not recall_failed:
        return kept, None
    recall = word_recall(field.text, "\n".join(readings))
    if recall < thresholds.math_recall:
        return kept, recall
    return tuple(r for r in kept if r not in recall_failed), recall


# Checks about tokens (numbers, units, words in their place), each read or not on its own.
TOKEN_CODES = ("number_missing", "unit_missing", *FINDING_CODES)


def _tokens(reason: Reason) -> tuple[str, list[str]]:
    """Return (formula prefix or "", the tokens) of a token check's reason."""
    prefix = FORMULA_PREFIX if reason.detail.startswith(FORMULA_PREFIX) else ""
    return prefix, list(reason.tokens) or reason.detail[len(prefix) :].split(", ")


def _keep_tokens(reason: Reason, kept: list[str]) -> Reason:
    """Return the reason about only the `kept` of its tokens, its detail said again for them."""
    prefix, tokens = _tokens(reason)
    if kept == tokens:
        return reason
    if reason.code in FINDING_CODES:
        parts = reason.detail.split("; ")
        said = [parts[tokens.index(t)] for t in kept if len(parts) == len(tokens)]
        return replace(reason, detail="; ".join(said), tokens=tuple(kept))
    return replace(reason, detail=prefix + ", ".join(kept), tokens=tuple(kept))


def _shared(reason: Reason, others: tuple[Reason, ...]) -> Reason | None:
    """Return what of a failed check the other reading fails too, or None if it passes it.

    A number or unit either engine reads is shown: a token check keeps only
    the tokens both readings miss ("800" read by one, "1200" by the other:
    nothing is missing).
    """
    same = [o for o in others if o.code == reason.code]
    if reason.code == "text_mismatch":
        # A text's ends are checked apart from its similarity: one reading that misses the
        # end and another that scores low elsewhere have each shown what the other missed.
        same = [o for o in same if bool(o.tokens) == bool(reason.tokens)]
        if reason.tokens:
            missed_ends = {t for o in same for t in o.tokens}
            common_ends = [t for t in reason.tokens if t in missed_ends]
            return ends_reason(reason.region, common_ends) if common_ends else None
    if reason.code not in TOKEN_CODES:
        return reason if same else None
    if not same and reason.code != "unit_missing":
        return None
    prefix, tokens = _tokens(reason)
    missed: set[str] = set()
    for other in same:
        other_prefix, other_tokens = _tokens(other)
        if other_prefix == prefix:
            missed.update(other_tokens)
    if reason.code == "unit_missing":
        # A reading that misses a token's number does not check its unit ("10o kPa"): the
        # unit is not shown there either.
        numbers = {t for o in others if o.code == "number_missing" for t in _tokens(o)[1]}
        missed.update(t for t in tokens if leading_number(t) in numbers)
    common = [t for t in tokens if t in missed]
    return _keep_tokens(reason, common) if common else None


def _script_evidence(field: Field, first: str, second: str) -> tuple[Reason, ...]:
    """Return a reason for a formula script one reading shows as another number, the other not.

    A script one engine does not read at all is no evidence: the other
    engine's reading of it decides.
    """
    shown = [
        script
        for one, other in ((first, second), (second, first))
        for script in contradicted_formula_scripts(field.math, one)
        if script in unread_formula_scripts(field.math, other)
    ]
    if not shown:
        return ()
    tokens = tuple(dict.fromkeys(shown))
    return (Reason("number_missing", field.name, FORMULA_PREFIX + ", ".join(tokens), tokens),)


def _settle_unread_scripts(result: FieldResult) -> FieldResult:
    """Drop the provisional unread-script reason; record the scripts as unchecked.

    Called once every engine has read the field: a script none of them read
    is not evidence of a defect.
    """
    unread = [r for r in result.reasons if r.code == UNREAD_SCRIPT]
    if not unread:
        return result
    measures = {**result.region.measures, "unchecked_scripts": unread[0].detail}
    kept = tuple(r for r in result.reasons if r.code != UNREAD_SCRIPT)
    return replace(result, reasons=kept, region=replace(result.region, measures=measures))


def _better(new: FieldResult, old: FieldResult) -> bool:
    if len(new.reasons) != len(old.reasons):
        return len(new.reasons) < len(old.reasons)
    return new.score > old.score


def verify_image(
    image: np.ndarray,
    item: Item,
    layout: Layout,
    *,
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
    render: Mapping[str, Any] | None = None,
    image_name: str = "",
) -> Verdict:
    """Verify one image against its item using the layout record's regions."""
    lang = language_for(item.language, [item.question, *item.options])
    mismatch = image_mismatch(image, layout, thresholds)
    if mismatch is not None:
        return verdict(image_name, item.id, "regions", lang, [mismatch], [])
    reasons: list[Reason] = list(layout_reasons(image, item, layout, thresholds, render))
    legibility_reasons, legibility = region_legibility(image, layout, render, thresholds)
    reasons.extend(legibility_reasons)
    scores: list[RegionScore] = []

    fig_reasons, fig_scores = _figures(image, item, layout, thresholds)
    reasons.extend(fig_reasons)

    crops = _text_crops(image, layout, render)
    texts = ocr_stacked([c.first for c in crops], lang)
    by_name = {c.region.name: (c, t) for c, t in zip(crops, texts, strict=True)}
    question = [(c, t) for c, t in zip(crops, texts, strict=True) if c.region.kind == "question"]

    # First reading: the stem (all question regions together) and each option.
    stem = source.stem(item)
    letters = "".join(LETTERS[: len(item.options)])
    stem_crops = [c for c, _t in question]
    stem_text = "\n".join(t for _c, t in question)
    fields: list[tuple[Field, list[TextCrop], FieldResult]] = [
        (stem, stem_crops, _score(stem, stem_text, thresholds, stem_crops, letters))
    ]
    for field in source.options(item):
        if field.name not in by_name:
            reasons.append(Reason("option_missing", field.name, "no region for this option"))
            continue
        crop, text = by_name[field.name]
        fields.append((field, [crop], _score(field, text, thresholds, [crop], letters)))

    for crop, text in by_name.values():
        if crop.region.kind == "caption" and crop.region.figure is not None:
            field = source.caption(item, crop.region.name, crop.region.figure)
            fields.append((field, [crop], _score(field, text, thresholds, [crop], letters)))

    page = _Page(
        lang,
        thresholds,
        letters,
        _page_family(layout),
        tuple(f for f, _c, _r in fields if f.letter),
        may_pass=not reasons,
    )
    fields = settle(fields, page)
    # What was typeset is on record: a formula drawn from other TeX fails, whatever is read
    # (after the settlers, which weigh what the readings show, not what the record says).
    for field, field_crops, _result in fields:
        drawn = [latex for c in field_crops for latex in c.region.math]
        reasons.extend(formula_reasons(field, drawn))
    reasons.extend(_options_read_as_others(fields, page))
    for field, field_crops, result in fields:
        reasons.extend(result.reasons)
        measured = [legibility[c.region.name] for c in field_crops if c.region.name in legibility]
        if result.reasons and measured:
            reasons.extend(marginal_reasons(field.name, measured, thresholds))
        if measured:
            worst = min(measured, key=lambda m: m.resolved_x_height)
            measures = {"engine": "tesseract", **result.region.measures, **worst.as_dict()}
            scores.append(replace(result.region, measures=measures))
        else:
            scores.append(result.region)
    scores.extend(fig_scores)
    return verdict(image_name, item.id, "regions", lang, reasons, scores)


Entry = tuple[Field, list[TextCrop], FieldResult]


INK_SETTLER = "ink"
TEXT_CHECKS = ("text_mismatch", "short_option_missing")


def _text_shown_by_ink(result: FieldResult) -> bool:
    """Return whether the ink settler passed the field's text check, as its record says.

    The ink weighs an option's whole text against the other options' texts
    (`settle_by_ink`): shown, the text is the option's own whatever an
    engine read ("s**" read "s*", another option's text).
    """
    settled = result.region.measures.get("settled", [])
    return any(
        entry.get("settler") == INK_SETTLER
        and any(passed.partition(":")[0] in TEXT_CHECKS for passed in entry.get("passed", []))
        for entry in settled
        if isinstance(entry, dict)
    )


def _options_read_as_others(fields: list[Entry], page: _Page) -> list[Reason]:
    """Return a reason per option read as another option's text by every engine that read it.

    Asked once the readings are settled, over what each engine read: the
    second engine reads an option tesseract read as another's unless it was
    asked already (see `read_as_another_option`).
    """
    found = []
    for field, crops, result in fields:
        if not field.letter or not crops or _text_shown_by_ink(result):
            continue
        readings = result.region.measures.get("readings")
        texts = list(readings.values()) if isinstance(readings, dict) else [result.region.observed]
        if read_as_another_option(field, texts, page.options) is None:
            continue
        if not isinstance(readings, dict):
            texts.append("\n".join(second_reader.read(c.raw, c.font_px) for c in crops))
        reason = read_as_another_option(field, texts, page.options)
        if reason is not None:
            found.append(reason)
    return found


@dataclass(frozen=True)
class _Page:
    """What the settlers know of the page beside each field."""

    lang: str
    thresholds: Thresholds
    letters: str  # the item's option letters
    family: str  # the face that drew most of the page
    options: tuple[Field, ...]
    may_pass: bool  # no page-level reason fails the image already
    # Options placed where their text is read (whole-image mode): no place vouches for
    # their labels, which must be read as their letters or shown by the ink.
    placed_by_text: frozenset[str] = frozenset()

    def bound_letters(self, name: str) -> str:
        """Return the letters a field's label is bound to by its place ("" for none)."""
        return "" if name in self.placed_by_text else self.letters


class Settler(NamedTuple):
    """One named step that may turn a failing check into a pass on its evidence.

    `applies` gates the step on the page as a whole (the failing entries
    given); `run` settles one failing field. A settler passes a check only
    where its evidence (another engine's reading, a re-reading, the ink)
    shows the source; what it passed is recorded under `settled`.
    """

    name: str
    applies: Callable[[_Page, list[Entry]], bool]
    run: Callable[[Entry, _Page], Entry]


def _while_passable(page: _Page, _failing: list[Entry]) -> bool:
    return page.may_pass


def _few_left(page: _Page, failing: list[Entry]) -> bool:
    """Return whether the image could pass and few enough fields fail to read them again.

    More failing fields than `reread_max_fields` and the image fails whatever a re-read finds.
    """
    return page.may_pass and 0 < len(failing) <= int(page.thresholds.reread_max_fields)


# In order. A field tesseract rejects is read by the second engine; a formula script no
# engine read is unchecked, not failed; near misses left are re-read by tesseract at other
# scales (and a token or word some reading shows in its place is shown); what every
# engine misread is asked of the ink. Only while the image could pass.
SETTLERS = (
    Settler(
        "second_engine",
        _while_passable,
        lambda e, p: _second_opinion(e, p.thresholds, p.bound_letters(e[0].name)),
    ),
    Settler(
        "unread_scripts",
        lambda _p, _f: True,
        lambda e, _p: (e[0], e[1], _settle_unread_scripts(e[2])),
    ),
    Settler(
        "reread",
        _few_left,
        lambda e, p: _reread(e, p.lang, p.thresholds, p.bound_letters(e[0].name)),
    ),
    Settler(
        INK_SETTLER,
        _while_passable,
        lambda e, p: _by_ink(e, p.family, list(p.options), p.thresholds),
    ),
)


def settle(fields: list[Entry], page: _Page) -> list[Entry]:
    """Run the settlers in order over the failing fields; record what each passed."""
    for settler in SETTLERS:
        failing = [f for f in fields if f[2].reasons]
        if not failing or not settler.applies(page, failing):
            continue
        fields = [
            _recorded(settler.name, f, settler.run(f, page)) if f[2].reasons else f for f in fields
        ]
    return fields


def _recorded(name: str, before: Entry, after: Entry) -> Entry:
    """Return `after` with what settler `name` passed of `before`'s checks on its record."""
    field, crops, result = after
    left = {(r.code, t) for r in result.reasons for t in (r.tokens or (r.detail,))}
    passed = [
        f"{r.code}: {t}"
        for r in before[2].reasons
        for t in (r.tokens or (r.detail,))
        if (r.code, t) not in left and r.code != UNREAD_SCRIPT
    ]
    if not passed:
        return after
    record = [*result.region.measures.get("settled", []), {"settler": name, "passed": passed}]
    region = replace(result.region, measures={**result.region.measures, "settled": record})
    return field, crops, replace(result, region=region)


def settle_located(
    image: np.ndarray,
    item: Item,
    located: list[Region],
    *,
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
    face: DrawnFace | None = None,
    page_readings: Mapping[str, str] | None = None,
    placed_by_text: frozenset[str] = frozenset(),
) -> dict[str, FieldResult]:
    """Return the region audit's result for each field at a place found on the page.

    An image with no layout record (whole-image mode) has no regions; where
    its words show where a field stands, the box around them serves as the
    field's region and the field is read, scored and settled exactly as in
    region mode: the same crops, readings and settlers, so a page read
    better in place is judged by one rule. No face is on record: `face`, the
    one its ink shows (`verify.settlers.drawn_face`), stands in for it when one shows
    clearly; without it nothing depends on the face (numbers and labels as
    it draws them, the ink). `page_readings` are what the whole page's
    reading showed for each field: the same pixels, read in another crop. A
    field is scored on whichever of that and its reading in place it fails
    on least, and settled from there. An option in `placed_by_text` was
    placed where its text is read, so its place vouches for no label: its
    label must be read as its letter or shown by the ink.
    """
    lang = language_for(item.language, [item.question, *item.options])
    options = {field.name: field for field in source.options(item)}
    if face is not None:
        located = [
            replace(r, fonts={face.family: 1}, set_px=face.drawn_px(r.font_px)) for r in located
        ]
        sources = {"question": source.stem(item), **options}
        located = _sized_by_ink(image, located, face, sources, thresholds)
    crops = _located_text_crops(image, located)
    texts = ocr_stacked([c.first for c in crops], lang)
    letters = "".join(LETTERS[: len(item.options)])
    family = face.family if face is not None else ""
    page = _Page(lang, thresholds, letters, family, tuple(options.values()), True, placed_by_text)
    fields: list[Entry] = []
    for crop, text in zip(crops, texts, strict=True):
        name = crop.region.name
        field = source.stem(item) if name == "question" else options.get(name)
        if field is not None:
            read = [text, (page_readings or {}).get(name, "")]
            bound = page.bound_letters(name)
            results = [_score(field, t, thresholds, [crop], bound) for t in read if t.strip()]
            if results:
                best = min(results, key=lambda r: (len(r.reasons), -r.score))
                fields.append((field, [crop], best))
    return {field.name: result for field, _crops, result in settle(fields, page)}


def _sized_by_ink(
    image: np.ndarray,
    located: list[Region],
    face: DrawnFace,
    sources: Mapping[str, Field],
    thresholds: Thresholds,
) -> list[Region]:
    """Return the regions with the size their text is drawn at fitted to its ink (`fitted_px`).

    The size from a region's OCR boxes also sets how its crop is cleaned: too
    large ("(A) q = 0" boxed as tall as its brackets), the bar of an "=" is
    painted out as a speck, and the ink then shows "q > 0" better than "q = 0".
    """
    sized = []
    for region, crop in zip(located, _located_text_crops(image, located), strict=True):
        field = sources.get(region.name)
        fitted = None
        if field is not None:
            fitted = face.fitted_px(crop.raw, normalise(field.text), crop.drawn_px, thresholds)
        if fitted is not None:  # the size its boxes gave, scaled as the drawn size is
            region = replace(region, font_px=region.font_px * fitted / crop.drawn_px, set_px=fitted)
        sized.append(region)
    return sized


def located_crops(image: np.ndarray, located: list[Region]) -> list[np.ndarray]:
    """Return each located region's normalised grey crop (dark ink on white), unscaled."""
    return [c.raw for c in _located_text_crops(image, located)]


def _located_text_crops(image: np.ndarray, located: list[Region]) -> list[TextCrop]:
    """Return the text crops of regions found on a page with no layout record."""
    height, width = image.shape[:2]
    return _text_crops(image, Layout(width, height, tuple(located)), None)


def _page_family(layout: Layout) -> str:
    """Return the family that drew most of the page's text glyphs ("" when none is recorded)."""
    glyphs: dict[str, int] = {}
    for region in layout.regions:
        for family, count in region.fonts.items():
            glyphs[family] = glyphs.get(family, 0) + count
    return max(glyphs, key=lambda family: glyphs[family]) if glyphs else ""


def image_mismatch(image: np.ndarray, layout: Layout, thresholds: Thresholds) -> Reason | None:
    """Return why an image cannot be the one its layout record describes, or None.

    A cropped, resized or replaced file no longer has the record's size (by
    more than `layout_size_tolerance_px`), and a region of the record must
    cover at least a pixel of it: checking such an image region by region
    would read the wrong pixels.
    """
    height, width = image.shape[:2]
    tolerance = int(thresholds.layout_size_tolerance_px)
    if abs(width - layout.width) > tolerance or abs(height - layout.height) > tolerance:
        detail = f"image is {width}x{height}, its layout record says {layout.width}x{layout.height}"
        return Reason("image_mismatch", "", detail)
    if not any(r.kind == "question" for r in layout.regions):
        return Reason("image_mismatch", "question", "the layout record has no question region")
    for region in layout.regions:
        if rectify(image, region.quad, 0).size == 0:
            return Reason("image_mismatch", region.name, "the region is outside the image")
    return None


def _figures(
    image: np.ndarray, item: Item, layout: Layout, thresholds: Thresholds
) -> tuple[list[Reason], list[RegionScore]]:
    reasons: list[Reason] = []
    scores: list[RegionScore] = []
    shown: set[int] = set()
    for region in layout.regions:
        if region.kind != "figure" or region.figure is None or region.placeholder:
            continue
        figure = item.figures.get(region.figure)
        shown.add(region.figure)
        if figure is None:
            # No source bytes at hand (an output set verified without its dataset):
            # the box must at least show something.
            present = figure_content(rectify(image, region.quad, 0))
            if present < thresholds.figure_blank_std:
                reasons.append(Reason("figure_missing", region.name, "figure box is blank"))
            scores.append(
                RegionScore(region.name, "figure", None, measures={"method": "content only"})
            )
            continue
        source_pixels = decode_figure(figure.data)
        score = template_score(rectify(image, region.quad, SHIFT), source_pixels)
        method = "template"
        passed = score >= thresholds.figure_template
        if not passed and not _upright(region):
            match = feature_match(rectify(image, region.quad, 4 * SHIFT), source_pixels)
            score, method = match.score, "features"
            passed = score >= thresholds.figure_features
        if not passed:
            reasons.append(Reason("figure_mismatch", region.name, f"{method} score {score:.2f}"))
        scores.append(RegionScore(region.name, "figure", score, measures={"method": method}))
    for number in item.referenced_figures():
        if number in item.figures and number not in shown and number not in item.missing_figures:
            reasons.append(Reason("figure_missing", f"figure:{number}", "no figure region"))
    return reasons, scores


def _upright(region: Region) -> bool:
    return is_axis_aligned(region.quad)
