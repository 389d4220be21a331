"""Settle a field's failed token checks by its ink, where every engine misread the token.

The checks that name a token (a number, a number with its unit, a short
option, the option's label, a caption's figure number) are asked again of
the pixels (`verify.settlers.ink`): a token whose drawing in the field's own face
matches the ink better than every rival is shown, and its check passes. A
check that compares whole text (`text_mismatch`) has no token to draw, except
on a short option, whose whole text is its token: a longer field failing one
is left as it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import cache

import numpy as np

from itemshot.renderer.items import LETTERS
from itemshot.verify.checks.expected import Field
from itemshot.verify.checks.meaning import WORD_CODES, source_spelling, token_word
from itemshot.verify.checks.scoring import FORMULA_PREFIX, FieldResult
from itemshot.verify.checks.tokens import (
    baseline_digits,
    codes,
    formula_numbers,
    formula_scripts,
    is_short,
    leading_number,
    number_units,
    numbers,
)
from itemshot.verify.reading.text import normalise
from itemshot.verify.settlers import ink
from itemshot.verify.settlers.formula_ink import weigh_formula
from itemshot.verify.thresholds import DEFAULT_THRESHOLDS, Thresholds
from itemshot.verify.verdicts import Reason, ReasonCode

SETTLED_BY_INK = (
    "number_missing",
    "unit_missing",
    "letter_mismatch",
    "short_option_missing",
    "caption_mismatch",
)


def settle_by_ink(
    field: Field,
    crops: Sequence[np.ndarray],
    font_px: float,
    family: str,
    label: str,
    result: FieldResult,
    others: Sequence[str] = (),
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
    letters: str = LETTERS,
) -> FieldResult:
    """Return the field's result with every token check its ink settles passed.

    `crops` are the field's normalised crops (dark ink on white) at
    `font_px`, `family` the face that drew most of its glyphs, `label` the
    option's drawn label ("(A)") and `others` the item's other options'
    texts: what a short option's place could show instead (swapped options);
    `letters` the item's option letters, what a label could show instead.
    A formula's number is asked of its formula's drawing instead
    (`formula_ink`). The evidence is weighed by `thresholds` (its `ink_*` and
    `formula_ink_*` fields). What was weighed is recorded in the region's
    measures under `ink` and `formula_ink`.
    """
    # No face on record leaves the field's words unweighed (`ink.weigh` draws nothing), not
    # its formulas, which are drawn in math's own face.
    if not result.reasons or not crops:
        return result
    whole_token = _whole_token(field, thresholds)
    settled = SETTLED_BY_INK + WORD_CODES + (("text_mismatch",) if whole_token else ())
    if any(r.code not in settled for r in result.reasons):
        return result  # the field fails on its text whatever the tokens show
    readings = _readings(result)
    # The field's other tokens are rivals of each one: a drawing located over the place
    # where the source shows another ("= 200 MPa," fits the ink of "= 100 MPa;" but for
    # a digit) is beaten there by that token's own drawing.
    siblings = _tokens_in(field.text)

    def alike(token: str) -> list[str]:
        """Return what the engines read that could stand where the token is drawn."""
        number = leading_number(token)
        if number and number != token:  # a number with its unit: the same number, read
            return [r for r in readings if leading_number(r) == number]
        near = [r for r in readings if abs(len(r) - len(token)) <= 1]
        if number:  # a bare number: what was read as a number (a unit is drawn beside it)
            return [r for r in near if leading_number(r) == r]
        return near

    weighed: list[ink.Evidence] = []

    # An option's text is drawn after its label: the label is its first word's neighbour.
    own = normalise(field.text)
    source = normalise(f"{label} {field.text}") if label else own

    def shown(
        token: str,
        rivals: list[str],
        text: str = "",
        read_here: Sequence[str] = (),
        found_at: list[ink.Evidence] | None = None,
    ) -> bool:
        """Return whether the ink shows the token at every place `text` (the field) has it.

        A token with no neighbour in the option's own text ("80°", a short
        option's whole text) is also drawn alone: its only neighbour is the
        label, set apart by the layout's own gap rather than a space. Where
        each place was found is added to `found_at`.
        """
        places = ink.occurrences(text or source, token)
        alone = ink.occurrences(own, token)
        if not text and label and len(alone) == 1 and not ink.has_neighbours(alone[0]):
            places = [[*alone[0], *contexts] for contexts in places]
        every = True
        others = rivals + alike(token) + _siblings(token, siblings)
        spots: list[ink.Evidence] = []

        def weigh(
            contexts: list[tuple[str, str]], taken: ink.Taken = (), apart: float = ink.SIDE
        ) -> ink.Evidence | None:
            return ink.weigh(
                crops,
                font_px,
                family,
                token,
                contexts,
                others,
                read_here,
                text=text or source,
                thresholds=thresholds,
                taken=taken,
                apart=apart,
            )

        for index, contexts in enumerate(places):
            found = weigh(contexts)
            if found is not None and any(found.same_place(seen) for seen in spots):
                # Found where an earlier place was: a line break cut this place's own
                # contexts ("of 350" / "mm and"). Its drawing is looked for again, in every
                # context it has, away from the places found: n places need n spots that
                # each show the token, so an image that changed one still fails.
                shared = ink.occurrences(text or source, token, shared=True)[index]
                taken = [s.at[:3] for s in spots if s.at is not None]
                found = weigh(shared, taken)
                if found is None or not found.shown:
                    # Cut on both sides ("ΔU =" / "0"): the token alone on its line.
                    alone = [ink.glued(text or source, token)[index]]
                    found = weigh(alone, taken, thresholds.ink_alone_em) or found
            if found is not None:
                weighed.append(found)
                # Two places of the token found at one spot are one drawing: the ink of the
                # first "don't" cannot also show the second, which the image may have changed.
                every = every and not any(found.same_place(seen) for seen in spots)
                spots.append(found)
            every = every and found is not None and found.shown
        if found_at is not None:
            found_at.extend(spots)
        return every and bool(places)

    formula_weighed: list[str] = []
    formula_shown: dict[tuple[str, bool], bool] = {}  # (formula, baseline only): shown

    def formulas_shown(token: str) -> bool:
        """Return whether the ink shows every formula of the field that holds `token`."""
        holding = [latex for latex in dict.fromkeys(field.math) if _holds(latex, token)]
        for latex in holding:
            key = (latex, token.isdigit())
            if key not in formula_shown:
                # A baseline number against changes of the baseline's digits: a script's
                # digit, which mathtext kerns otherwise than KaTeX (`ft^{2}`), is not what
                # was missed.
                digits = baseline_digits(latex) if token.isdigit() else None
                found = [
                    weigh_formula(crop, font_px, latex, thresholds, field.math, digits=digits)
                    for crop in crops
                ]
                evidence = [e for e in found if e is not None]
                formula_weighed.extend(e.describe() for e in evidence)
                formula_shown[key] = any(e.shown(thresholds) for e in evidence)
            if not formula_shown[key]:
                return False
        return bool(holding)

    whole = [normalise(t) for t in others if t.strip()]

    @cache  # weighed once, whichever checks ask
    def text_shown() -> bool:
        """Return whether the ink shows the field's whole text against its changed digits.

        An option's place could show another option instead; a caption's, no option.
        """
        token = normalise(field.text)
        return shown(token, ink.digit_rivals(token) + (whole if field.letter else []))

    kept: list[Reason] = []
    for reason in result.reasons:
        # A short option shown whole, against every changed digit, shows each of its numbers:
        # "2,2" is drawn as one word, whose second "2" has no place of its own to be found at.
        if whole_token and reason.code == "number_missing" and text_shown():
            continue
        left = _settle(reason, field, label, letters, shown, text_shown, formulas_shown)
        if left is not None:
            kept.append(left)
    if not weighed and not formula_weighed:
        return result
    if kept:
        kept.extend(_ambiguity(field.name, family, weighed))
    measures = dict(result.region.measures)
    if weighed:
        measures["ink"] = [e.describe() for e in weighed]
    if formula_weighed:
        measures["formula_ink"] = formula_weighed
    return replace(result, reasons=tuple(kept), region=replace(result.region, measures=measures))


def _ambiguity(name: str, family: str, weighed: list[ink.Evidence]) -> list[Reason]:
    """Return `glyph_ambiguity` when a token left failing is drawn like a rival in this face.

    Said beside the failing check, for the reviewer: the ink matches the
    source's drawing, but no better than a rival's (a handwritten "1" and
    "7"), so neither the engines nor the pixels can tell which the image shows.
    """
    pairs = [
        f"{e.token!r} no better than {e.rival!r} (lead {e.margin:+.2f})"
        for e in weighed
        if e.ambiguous
    ]
    if not pairs:
        return []
    detail = f"in {family} at this size the ink matches " + ", ".join(dict.fromkeys(pairs))
    return [Reason("glyph_ambiguity", name, detail)]


def _whole_token(field: Field, thresholds: Thresholds) -> bool:
    """Return whether a field's whole text is one token the ink can weigh (a short option)."""
    return bool(field.letter) and is_short(field.text, thresholds) and not field.math


def _settle(
    reason: Reason,
    field: Field,
    label: str,
    letters: str,
    shown: Callable[..., bool],
    text_shown: Callable[[], bool],
    formulas_shown: Callable[[str], bool],
) -> Reason | None:
    """Return what of one failed check the ink does not settle (None: all of it).

    `text_shown` says whether the ink shows the field's whole text against
    its changed digits (and an option's, against the other options);
    `formulas_shown` says whether the ink shows every formula holding a token.
    """
    if reason.code == "number_missing":
        if reason.detail.startswith(FORMULA_PREFIX):
            # Drawn in the formula's face, not the field's: asked of the formulas holding it.
            missing = [t for t in _tokens(reason) if not formulas_shown(t)]
            detail = FORMULA_PREFIX + ", ".join(missing)
            return replace(reason, detail=detail, tokens=tuple(missing)) if missing else None
        tokens = _tokens(reason)

        def number_shown(token: str) -> bool:
            return (
                shown(token, ink.digit_rivals(token))
                or _shown_with_unit(field.text, token, shown)
                or _broken_at_hyphen(field.text, token, shown)
            )

        # A code shown against every change of its digits ("19th" against "18th", "10th",
        # ...) shows the number it starts with, where that number has no place of its own
        # ("the 19th century": "19" has no drawing of its own to weigh there).
        code_shown = {t: number_shown(t) for t in tokens if _number_of(t) not in ("", t)}

        def in_code(number: str) -> bool:
            inside = [code_shown[c] for c in code_shown if _number_of(c) == number]
            return bool(inside) and all(inside) and not ink.occurrences(field.text, number)

        missing = [
            t
            for t in tokens
            if not (code_shown[t] if t in code_shown else in_code(t) or number_shown(t))
        ]
    elif reason.code == ReasonCode.WORD_CHANGED:
        # The source's word drawn against what the engines read in its place: the ink must
        # favour the source's drawing, or the image shows the other word.
        parts = reason.detail.split("; ")
        missing = []
        for token, said in zip(reason.tokens, parts, strict=False):
            spelled = source_spelling(field.text, token_word(token)[1])
            read = said.rpartition(" read as ")[2].strip("'\"")
            rivals = list(dict.fromkeys([read, read.capitalize(), read.upper()]))
            # What was read there, drawn in the token's context, fitting the ink better
            # (elsewhere, or here by a lead) places the source's drawing over other ink;
            # `ink.weigh` leaves out a drawing the source itself shows somewhere.
            if spelled is None or not shown(spelled, rivals, read_here=rivals):
                missing.append(token)
        if missing:
            kept = [p for t, p in zip(reason.tokens, parts, strict=False) if t in missing]
            return replace(reason, detail="; ".join(kept), tokens=tuple(missing))
        return None
    elif reason.code in WORD_CODES:
        return reason  # a word not drawn at all has no drawing to weigh
    elif reason.code == "unit_missing":
        missing = []
        for token in _tokens(reason):
            span = _unit_span(field.text, token)
            if span is None or not (shown(span, ink.unit_rivals(span)) or _apart(span, shown)):
                missing.append(token)
    elif reason.code == "letter_mismatch":
        if not label or field.letter not in label:
            return reason
        # A label is drawn alone: every rival is a label too, so it cannot be found elsewhere.
        # Its rivals are the item's other letters: a label tells its option from the others,
        # and a letter no option has ("(T)" for a thin "(I)") names none of them.
        rivals = ink.label_rivals(label, field.letter, letters)
        return None if shown(label, rivals, text=label) else reason
    elif reason.code in ("short_option_missing", "caption_mismatch", "text_mismatch"):
        return None if text_shown() else reason
    else:
        return reason
    return replace(reason, detail=", ".join(missing), tokens=tuple(missing)) if missing else None


def _shown_with_unit(text: str, number: str, shown: Callable[..., bool]) -> bool:
    """Return whether the ink shows every place of `number` as drawn with its unit ("1643 lb").

    A unit opening with an upright stroke is read as one more digit
    ("16431b"): that reading, drawn where the bare number is, fits the ink
    as well as the number does. Drawn with its unit, against every changed
    digit, the number is told from it. Only when the source writes the
    number with a unit at each of its places: a bare place has no unit to tell it by.
    """
    found = (_unit_span(text, t) for t in number_units(text) if leading_number(t) == number)
    spans = [span for span in found if span is not None]
    if not spans or len(spans) != numbers(text).count(number):
        return False
    return all(shown(span, ink.digit_rivals(span)) for span in spans)


def _broken_at_hyphen(text: str, token: str, shown: Callable[..., bool]) -> bool:
    """Return whether the ink shows a hyphenated token broken after its hyphen, its number whole.

    A browser may break a line after a hyphen ("EV71-" / "related"): one
    drawing of the token matches no line. When every digit stands before
    the last hyphen, that piece, drawn at the line's end against its changed
    digits, is what shows the number; the letters after it are words, which
    the word checks weigh.
    """
    head, hyphen, tail = token.rpartition("-")
    if not head or not tail or any(c.isdigit() for c in tail):
        return False
    piece, whole = head + hyphen, normalise(text)
    broken = whole.replace(token, f"{piece} {tail}")
    return broken != whole and shown(piece, ink.digit_rivals(piece), text=broken)


def _apart(span: str, shown: Callable[..., bool]) -> bool:
    """Return whether the ink shows a spaced `number unit` span as its two words, on two lines.

    A line may break between the number and its unit ("Now 300 / kJ of"):
    one drawing of the span matches no line, but each word matches its own,
    the number against its changed digits, the unit against its changed prefix.
    Only across a line break: on the number's own line the span's drawing is
    what shows them, and the unit drawn alone can lie with a letter over the
    number's last digit ("6081 W" showing "kW" by its "1").
    """
    number, _space, unit = span.partition(" ")
    if not unit or " " in unit:
        return False
    numbers: list[ink.Evidence] = []
    units: list[ink.Evidence] = []
    if not (
        shown(number, ink.digit_rivals(number), found_at=numbers)
        and shown(unit, ink.unit_variants(unit), found_at=units)
    ):
        return False
    return not any(n.same_line(u) for n in numbers for u in units)


def _holds(latex: str, token: str) -> bool:
    """Return whether a formula holds a token a formula check named (a baseline number, a script)."""
    if token.isdigit():
        return token in formula_numbers(latex)
    return any(shown == token for _pattern, _digits, shown in formula_scripts(latex))


def _tokens(reason: Reason) -> list[str]:
    return list(reason.tokens) or reason.detail.split(", ")


def _unit_span(text: str, token: str) -> str | None:
    """Return the source's spelling ("100 kJ") of a compact `number+unit` token ("100kJ")."""
    number = leading_number(token)
    unit = token[len(number) :]
    if not number or not unit:
        return None
    match = re.search(re.escape(number) + r"\s?" + re.escape(unit), normalise(text))
    return match.group(0) if match else None


def _readings(result: FieldResult) -> list[str]:
    """Return the tokens the engines read in the field: rivals a drawing must beat."""
    texts = [result.region.observed]
    texts += [str(t) for t in dict(result.region.measures.get("readings", {})).values()]
    return list(dict.fromkeys(token for text in texts for token in _tokens_in(text)))


def _siblings(token: str, tokens: list[str]) -> list[str]:
    """Return the field's tokens led by another number than `token`'s: rivals of its place.

    Only a token led by a number has them; a code ("refrigerant-134a") or a
    unit drawn alone is no drawing of a number's place. A rival has the
    token's shape (a bare number, or a number with its unit) and is no wider:
    "1.1 mm" drawn for a bare "= 10", or "2015" for the "1" of "Figure 1" at a
    line's end, reaches over the ink after it (the unit, the next word), which
    the source's drawing leaves blank, and wins there whatever the number shows.
    """
    number = _number_of(token)
    if not number:
        return []
    bare = leading_number(token) == token
    return [
        t
        for t in tokens
        if _number_of(t)
        and _number_of(t) != number
        and (leading_number(t) == t) == bare
        and len(t) <= len(token)
    ]


def _number_of(token: str) -> str:
    """Return the number a token starts with, without a sentence's point ("0.1" of "0.1.Figure")."""
    return leading_number(token).rstrip(".,")


def _tokens_in(text: str) -> list[str]:
    """Return a text's numbers, codes and `number+unit` tokens (each also spaced "100 kJ")."""
    found = numbers(text) + codes(text)
    for token in number_units(text):
        number = leading_number(token)
        found += [token, ink.with_unit(number, token[len(number) :], " ")]
    return list(dict.fromkeys(found))
