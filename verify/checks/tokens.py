"""Critical tokens: numbers (with their units) and short options that must be read exactly."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from itemshot.verify.checks.expected import FIGURE_WORDS
from itemshot.verify.checks.meaning import zipf
from itemshot.verify.reading.text import READ_MARKS, compact, has_cjk, normalise, words
from itemshot.verify.thresholds import DEFAULT_THRESHOLDS, Thresholds

# A number: optional sign, digits with thousands separators or decimals. Not after a Latin
# letter or digit ("x2", "E1" are codes), but after kana or kanji ("電圧は12 V": Japanese
# puts no space before a number).
_NUMBER = re.compile(r"(?<![A-Za-z0-9_.])[-+]?(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?")
# A unit right after a number: short letter run, maybe with / or ^ and a digit.
# Only ASCII units: symbols such as Ω or μ are outside what tesseract's models read reliably.
_UNIT = re.compile(r"\s?(%|°[CF]?|[A-Za-z]{1,4}(?:/[A-Za-z]{1,4})?(?:\^?\d)?)(?![A-Za-z])")
# A capitalised word after a number starts a sentence ("Figure 1 What …"); it is no unit.
_SENTENCE_START = re.compile(r"[A-Z][a-z]{2,3}")
# What a figure reference puts before its number, in every language the page draws one.
_FIGURE_NUMBER = re.compile(
    "(?:"
    + "|".join(re.escape(w.partition("{n}")[0].strip()) for w in FIGURE_WORDS.values())
    + r")\s*$"
)
# "5th", "1st": an ordinal's suffix is part of its word, checked with it as a code.
_ORDINAL_SUFFIXES = frozenset({"st", "nd", "rd", "th"})
# Where a number starts in compact text (spaces removed): after no digit, and after no
# point or comma that follows one ("W.C.B. 7°" compacts to "W.C.B.7°", whose 7 starts one).
NUMBER_START = r"(?<!\d)(?<!\d[.,])"
# Parts of a formula OCR does not read reliably: super- and subscripts, command names,
# and the digits of a chemical formula that follow an element or a bracket (CH4, (OH)2).
_SCRIPT = re.compile(r"[\^_](?:\{[^{}]*\}|\\?[A-Za-z]+|\d)")
_COMMAND = re.compile(r"\\[A-Za-z]+")
_CHEM_SUBSCRIPT = re.compile(r"(?<=[A-Za-z)\]])\d+")
_CHEM = re.compile(r"\\ce\{([^{}]*)\}")
# Commands that stack their arguments (a fraction's numerator over its denominator):
# those digits sit above and below the line, in a smaller size, not on the baseline.
_STACKING = re.compile(r"\\(?:[dtc]?frac|[dt]?binom|stackrel|overset|underset)(?![A-Za-z])")


def numbers(text: str) -> list[str]:
    """Return every number in the normalised text, as written (separators kept)."""
    return [number for number, _ in _numbers_read_on(text)]


def number_units(text: str, thresholds: Thresholds = DEFAULT_THRESHOLDS) -> list[str]:
    """Return `number+unit` strings (without spaces) where a unit follows a number."""
    found: list[str] = []
    # Line by line: a field's text has a line break where a formula stood ("-1 $\\le$ x"),
    # and the letter after that formula is no unit of the number before it.
    for line in text.split("\n"):
        norm = normalise(line)
        for match in _NUMBER.finditer(norm):
            unit = _UNIT.match(norm, match.end())
            if _FIGURE_NUMBER.search(norm, 0, match.start()):
                continue  # "Figure 1 E is": a figure's number has no unit
            if unit and not _is_word(unit.group(1), thresholds):
                found.append((match.group(0) + unit.group(1)).lstrip("+"))
    return found


def _is_word(letters: str, thresholds: Thresholds) -> bool:
    """Return whether the letters after a number are a word of the sentence, not its unit.

    A word as common as `unit_word_zipf` ("Figures 1 and 2", "3 only", "10 per
    box") is one, and so is an ordinal's suffix ("5th"); no unit symbol is that
    common ("mm" 4.7, "min" 4.4, "cup" 5.1), and a unit counted a word ("5 in",
    "3 days") is still checked as a word, its number as a number.
    """
    if _SENTENCE_START.fullmatch(letters) or letters in _ORDINAL_SUFFIXES:
        return True
    return len(letters) >= 2 and zipf(letters.casefold(), "en") >= thresholds.unit_word_zipf


def leading_number(token: str) -> str:
    """Return the number a `number+unit` token starts with ("300" of "300kJ/kg", "-50" of "-50")."""
    match = re.match(r"-?[\d.,]+", token)
    return match.group(0) if match else ""


# What joins two tokens without making them one name: a relation ("p-values=0.000" is the
# words "p-values" and the number "0.000", each checked by its own check) and a percent
# sign run into the next word ("10%increase").
_JOINS = re.compile(r"[=<>≤≥≈≠]+|(?<=%)")
# A sentence run into the next after a number ("x =8.If"): the number ends one sentence and
# the word starts the next; neither is a code (`numbers` and the word checks have them).
_SENTENCE_RUN = re.compile(r"(?<=\d)\.(?=[A-Z][a-z])")


def codes(text: str) -> list[str]:
    """Return words that mix letters and digits (E1, P2.79, G2, 2E3), punctuation stripped."""
    found = []
    for word in words(text):
        for piece in (p for joined in _JOINS.split(word) for p in _SENTENCE_RUN.split(joined)):
            piece = piece.strip(".,;:!?()[]{}\"'")
            # Latin letters only: Japanese runs on without spaces, so a "word" mixing kana
            # and digits is a whole sentence, whose numbers `numbers` checks one by one.
            latin = any(c.isascii() and c.isalpha() for c in piece)
            if latin and any(c.isdigit() for c in piece) and not has_cjk(piece):
                found.append(piece)
    return found


def missing_numbers(expected: str, observed: str) -> list[str]:
    """Return the numbers and letter-digit codes of `expected` not read exactly in `observed`.

    Numbers are compared as a multiset; codes such as `P2.79` must occur in the
    observed text with spaces ignored.
    """
    # Letter case aside where it changes no quantity: a handwriting face draws "psi" in
    # "55.549psi" with capital-sized strokes, and "55.549PSi" says the same.
    seen = _unit_case(_code_glyphs(compact(_ocr_number_fix(observed))))
    # As a multiset too: "N3" changed to "N2" where the text says "N3" again later is missing.
    wanted = Counter(codes(expected))
    missing = [
        code for code, count in wanted.items() if seen.count(_unit_case(_code_glyphs(code))) < count
    ]
    plain = _missing_plain_numbers(expected, observed)
    # A number the text sets after a relation ("k = 90") read there as another ("k = 9"),
    # though the page shows its digits elsewhere, is changed too.
    changed = list(
        (Counter(contradicted_formula_numbers((), observed, expected)) - Counter(plain)).elements()
    )
    return plain + changed + missing


# Glyphs a code is read with whichever character they are: in a code ("l(b)", "2-II") no
# reader tells a lowercase l, a capital I and a digit 1 apart by anything but the face's
# serifs, nor an O from a 0 ("P0" read "PO", a subscript zero read as a letter) by more than
# its width. Marks read as their look-alikes (a caret as an apostrophe) are folded too.
_CODE_ALIKE = str.maketrans({"l": "1", "I": "1", "|": "1", "O": "0", "o": "0", **READ_MARKS})


def _code_glyphs(text: str) -> str:
    return text.translate(_CODE_ALIKE)


def _places(expected: str, token: str) -> list[str]:
    """Return each occurrence of `token` in `expected` with a word on both sides (compact).

    `token` is a number, a code or a compact `number+unit` of `expected`.
    What ends the outer words (a period, a bracket) is left out: it is no
    evidence of the token.
    """
    text = normalise(expected)
    body = r"\s*".join(re.escape(c) for c in token.replace(" ", ""))
    found = []
    for match in re.finditer(r"(?<![\d.,])" + body + r"(?!\d)", text):
        before = re.search(r"(?:\S+\s+)?\S*$", text[: match.start()])
        after = re.match(r"\S*(?:\s+\S+)?", text[match.end() :])
        left = before.start() if before else match.start()
        right = match.end() + (after.end() if after else 0)
        context = text[left:right].strip(_OUTER_PUNCTUATION)
        found.append(compact(_ocr_number_fix(context)).casefold())
    return found


# Stripped from a token's context: what ends a neighbouring word is no evidence of the token.
_OUTER_PUNCTUATION = ".,;:!?\"'()[]{}"


def shown_in_place(expected: str, token: str, readings: Sequence[str]) -> bool:
    """Return whether the `readings` show every occurrence of `token` in its place.

    Each occurrence may come from another reading, but between the words
    the source has beside it: a reading that shows the number only
    elsewhere says nothing about this place ("costs $6" read where the
    source has "$5", while the "$6" asked for is drawn as "$3" further
    on). Which of several occurrences a failed check missed is unknown, so
    every one must be shown.
    """
    seen = [compact(_ocr_number_fix(r)).casefold() for r in readings]
    found = _places(expected, token)
    return bool(found) and all(any(place in s for s in seen) for place in found)


def _missing_plain_numbers(expected: str, observed: str) -> list[str]:
    # Signed: "e = -1" shown as "e = 1" is another answer (two options a sign apart swapped).
    # A minus an engine drops is the ink's to settle, weighed against the unsigned drawing.
    have = Counter(numbers(_ocr_number_fix(observed)))
    missing: list[str] = []
    for number, read_on in _numbers_read_on(expected):
        if have[number] > 0:
            have[number] -= 1
        elif read_on and have[read_on] > 0:
            have[read_on] -= 1
        else:
            missing.append(number)
    return missing


# A point after a number, then a letter drawn as a digit: a sentence run into the next
# without a space ("x =8.If").
_POINT_LETTER = re.compile(r"\.([IlO])")


def _numbers_read_on(text: str) -> list[tuple[str, str]]:
    """Return each number of the text with the decimal a reader may read it as ("" for none).

    "x =8.If" shows the number 8, a point and the word "If"; no reader tells
    that "I" from a 1 (`_CODE_ALIKE`), so "8.1f" shows the 8 as drawn.
    """
    text = normalise(text)
    found = []
    for match in _NUMBER.finditer(text):
        number = match.group(0).lstrip("+")
        letter = _POINT_LETTER.match(text, match.end())
        found.append((number, f"{number}.{_code_glyphs(letter[1])}" if letter else ""))
    return found


def missing_units(expected: str, observed: str) -> list[str]:
    """Return the `number+unit` tokens of `expected` whose compact form is absent from `observed`.

    Letter case is compared only where it changes the quantity: m/M
    (milli, mega; metre, molar) and p/P before a unit (pico, peta). Elsewhere ("750 k" for 750 K,
    "w/m" for W/m) it is how a handwriting face draws its capitals, and no
    reader takes another unit from it.
    """
    seen = compact(_unit_case(_ocr_number_fix(observed)))  # a unit ends at its space
    # As a multiset: "100 m" changed to "100 cm" where the text says "100 m" again is missing.
    wanted = Counter(_unit_case(t.replace(" ", "")) for t in number_units(expected))
    short = {token for token, count in wanted.items() if _places_count(seen, token) < count}
    return list(
        dict.fromkeys(t for t in number_units(expected) if _unit_case(t.replace(" ", "")) in short)
    )


def _places_count(seen: str, token: str) -> int:
    """Return how often a compact `number+unit` token is in the compact text, not in a longer number."""
    number = leading_number(token)
    # The unit is what is checked: the number's separators are the number check's ("101 148
    # m" read for "101.148 m" shows the unit), its digits place the unit.
    digits = r"[.,]?".join(re.escape(part) for part in re.split(r"[.,]", number))
    return len(re.findall(NUMBER_START + digits + re.escape(token[len(number) :]), seen))


# A unit symbol a cased prefix stands before: "p" is pico only before one ("pF", "pm"); in
# "psi" or "bp" it is a letter of the unit, whose case a handwriting face does not show.
_PREFIXED_UNIT = re.compile(r"(?:mol|Hz|Pa|eV|Wb|Gy|Bq|[msgLlFAJWVNCKHTSM])(?![A-Za-z])")
# The SI prefixes an edit puts before a unit ("1.00 M" → "1.00 mM", "5 g" → "5 kg").
_SI_PREFIXES = "pnumckMGT"


def prefixed_units(expected: str, observed: str) -> list[str]:
    """Return the `number+unit` tokens of `expected` a reading shows with an SI prefix added.

    "1.00 M" read as "1.00 mM" (more often than the source has "1.00 mM") is
    another quantity. OCR drops a glyph far more often than it adds one, so a
    reading that adds a prefix is evidence against any reading that shows the
    source's unit there: it drops what the page may well show.
    """
    wanted = Counter(_unit_case(t) for t in number_units(expected))
    shown = Counter(_unit_case(t) for t in number_units(observed))
    changed = []
    for token in dict.fromkeys(number_units(expected)):
        number = leading_number(token)
        unit = token[len(number) :]
        rivals = (_unit_case(number + prefix + unit) for prefix in _SI_PREFIXES)
        if any(shown[rival] > wanted[rival] for rival in rivals):
            changed.append(token)
    return changed


def _unit_case(text: str) -> str:
    """Return the text case-folded except where case changes a quantity (m/M; p/P as a prefix)."""
    return "".join(
        c if c in "mM" or (c in "pP" and _PREFIXED_UNIT.match(text, k + 1)) else c.casefold()
        for k, c in enumerate(text)
    )


def short_option_found(option: str, observed: str) -> bool:
    """Return whether a short option's whole text is found exactly (letter case aside) in `observed`.

    An option whose commas all separate list items ("0.45, 0.56") is found
    without them: a handwriting face draws such a comma as a speck OCR drops,
    and "0.45 0.56" still shows both numbers apart. A comma inside a number
    ("1,150") is never dropped.
    """
    # A closing period or comma ("A stroke.") is punctuation, not part of the answer.
    wanted = compact(option).casefold().rstrip(".,")
    seen = compact(_ocr_number_fix(observed)).casefold()
    if wanted in seen:
        return True
    if "," in option and not _INNER_COMMA.search(normalise(option)):
        return wanted.replace(",", "") in seen.replace(",", "")
    return False


_INNER_COMMA = re.compile(r",(?=\S)")  # a comma with no space after it: inside a number


def is_short(option: str, thresholds: Thresholds = DEFAULT_THRESHOLDS) -> bool:
    """Return whether an option is short enough that it must be read exactly (`short_option_chars`)."""
    return 0 < len(compact(option)) <= int(thresholds.short_option_chars)


def _ocr_number_fix(text: str) -> str:
    """Close the spaces tesseract puts around separators inside numbers ("4, 500" stays two)."""
    text = normalise(text)
    text = re.sub(r"(?<=[^\W\d_])(?=\d)", " ", text)  # "Figure1" read without its space
    return re.sub(r"(?<=\d)\s*\.\s*(?=\d)", ".", text)


def formula_numbers(latex: str) -> list[str]:
    """Return the digit runs on a formula's baseline: what a reading of it must show.

    `x^2 - 5x + 6 = 0` gives 5, 6, 0; `180^\\circ` gives 180; in
    `\\ce{CH4 + 2O2}` only the coefficient 2 counts.
    """
    return re.findall(r"\d+", _baseline(latex))


def baseline_digits(latex: str) -> frozenset[int]:
    """Return the indexes in `latex` of the digits its formula sets on the baseline."""
    if _CHEM.search(latex):
        return frozenset()  # `\ce{}` is set from its own notation, not character for character
    return frozenset(k for k, c in enumerate(_baseline(latex)) if c.isdigit())


def _baseline(latex: str) -> str:
    """Return what a formula sets on its baseline: scripts, stacks and commands blanked out.

    Blanked character for character: outside `\\ce{}`, an index of the result is
    one of `latex`.
    """
    text = _CHEM.sub(lambda m: _CHEM_SUBSCRIPT.sub(" ", m.group(1)), latex)
    text = _without_stacked(text)
    return _COMMAND.sub(_blank, _SCRIPT.sub(_blank, text))


def _blank(match: re.Match[str]) -> str:
    return " " * len(match.group(0))


def _without_stacked(latex: str) -> str:
    """Return `latex` with every stacking command and its two brace groups blanked out."""
    while match := _STACKING.search(latex):
        end = match.end()
        for _ in range(2):
            end = _group_end(latex, end)
        latex = latex[: match.start()] + " " * (end - match.start()) + latex[end:]
    return latex


def _group_end(latex: str, start: int) -> int:
    """Return the index after the brace group (or single token) that starts at `start`."""
    position = start
    while position < len(latex) and latex[position].isspace():
        position += 1
    if position >= len(latex):
        return position
    if latex[position] != "{":
        return position + 1  # `\frac12`: a single-character argument
    depth = 0
    for index in range(position, len(latex)):
        depth += {"{": 1, "}": -1}.get(latex[index], 0)
        if depth == 0:
            return index + 1
    return len(latex)  # unbalanced: the rest is the group


def missing_formula_numbers(
    formulas: tuple[str, ...] | list[str], observed: str, text: str = ""
) -> list[str]:
    """Return the formula numbers the observed text does not show, or shows otherwise.

    Baseline numbers are looked for as a multiset: each must be found (a
    substring of the text's digits, spaces ignored — OCR reads formulas
    poorly) among what is left once the field's own `text` numbers have taken
    theirs, so a coefficient changed into a number the sentence also has is
    still missing. A sub- or superscript (`CO2`, `x^3`) is reported when the
    reading shows its base followed by another number and never by its own:
    a script read as a speck is no evidence either way.
    """
    seen = compact(_ocr_number_fix(observed))
    scripts = [script for latex in formulas for script in formula_scripts(latex)]
    rest = _without_scripts(_without_numbers(seen, numbers(text)), scripts)
    missing = []
    for number in (n for latex in formulas for n in formula_numbers(latex)):
        at = rest.find(number)
        if at < 0:
            missing.append(number)
        else:
            rest = rest[:at] + " " + rest[at + len(number) :]
    # Only a formula's: one the text sets after a relation is the plain number check's.
    in_formulas = Counter(contradicted_formula_numbers(formulas, observed, text))
    in_formulas -= Counter(contradicted_formula_numbers((), observed, text))
    changed = [n for n in in_formulas.elements() if n not in missing]
    return missing + changed + contradicted_formula_scripts(formulas, observed)


# A baseline number right after a relation and the glyph before it ("t=1", "V(s) = (1 / s)"):
# the number a reading shows after the same glyphs is that one, read. It ends where its
# digits do ("1.644" of "1.644 \times 10^{5}").
_AFTER_RELATION = re.compile(r"([A-Za-z)\]])\s*=\s*(\(?)\s*(\d+(?:\.\d+)?)(?![\d.])")


def contradicted_formula_numbers(
    formulas: tuple[str, ...] | list[str], observed: str, text: str = ""
) -> list[str]:
    """Return the formula numbers a reading shows as other numbers after the same relation.

    Found anywhere, a changed "t=1" read "t=5" still has its "1" in some
    other number of the page. After its own relation's glyphs it has one
    place: where the reading shows, after those glyphs, numbers the source
    (its formulas and its `text`) has not there, and lacks some it has, those
    are changed. Glyphs read otherwise ("T=") are no evidence either way.
    """

    def after_relations(plain: str) -> Counter[tuple[str, str]]:
        found = _AFTER_RELATION.findall(plain)
        return Counter((f"{glyph}={bracket}", number) for glyph, bracket, number in found)

    source = after_relations(normalise(text))
    for latex in formulas:
        source += after_relations(_baseline(latex))
    read = after_relations(_ocr_number_fix(observed))
    changed: list[str] = []
    for key in dict.fromkeys(key for key, _number in source):
        wanted = Counter({n: c for (k, n), c in source.items() if k == key})
        shown = Counter({n: c for (k, n), c in read.items() if k == key})
        missing, extra = wanted - shown, shown - wanted
        if missing and extra:
            changed += list(missing.elements())[: extra.total()]
    return changed


def contradicted_formula_scripts(formulas: tuple[str, ...] | list[str], observed: str) -> list[str]:
    """Return the digit sub/superscripts a reading shows as another number (`CO2` for `CO7`)."""
    return _scripts_read_as(formulas, observed, "contradicted")


def _without_scripts(seen: str, scripts: list[tuple[str, str, str]]) -> str:
    """Blank the digits read right after each script's base (`x2` for `x^2`) in the compact text.

    A superscript read inline is no baseline number: left in, the `2` of
    `x^2` would stand in for a changed `= 2`.
    """
    for pattern, _digits, _shown in scripts:
        match = re.search(pattern + r"(\d+)", seen)
        if match:
            seen = seen[: match.start(1)] + " " + seen[match.end(1) :]
    return seen


def _without_numbers(seen: str, wanted: list[str]) -> str:
    """Remove one whole-number occurrence of each wanted number from the compact text."""
    for number in wanted:
        match = re.search(NUMBER_START + re.escape(number) + r"(?!\d)", seen)
        if match:
            seen = seen[: match.start()] + " " + seen[match.end() :]
    return seen


# A chemical species: coefficient, then elements or brackets each with their subscript.
_SPECIES = re.compile(r"(\d*)((?:[A-Z][a-z]?|[()\[\]])(?:[A-Za-z()\[\]\d]*))")
_PART = re.compile(r"([A-Za-z()\[\]]+)(\d*)")
# A digit script in general math: the letters it is attached to and its digits.
_GENERAL_SCRIPT = re.compile(r"([A-Za-z]+)[_^](\d+)")  # braces removed first
_BEFORE = r"(?<![A-Za-z\d])"  # a base starts a word: "CO" in "CO2", not in "ACO2"


def formula_scripts(latex: str) -> list[tuple[str, str, str]]:
    """Return `(pattern, digits, shown)` for each number written as a formula's sub/superscript.

    `pattern` matches the glyphs written before the script as OCR reads them
    (letter O also as 0, earlier scripts as any one glyph or none), `digits`
    the script, `shown` the part as written (`CO2`).
    """
    found: list[tuple[str, str, str]] = []
    for content in _CHEM.findall(latex):
        for species in _SPECIES.finditer(content):
            coefficient, body = species.groups()
            pattern = _BEFORE + (rf"(?:{coefficient}\s?)?" if coefficient else "")
            for part in _PART.finditer(body):
                letters, digits = part.groups()
                pattern += "".join("[O0]" if c == "O" else re.escape(c) for c in letters)
                if digits:
                    found.append((pattern, digits, body[: part.end()]))
                    pattern += r"(?:\d+|[^\sA-Za-z\d])?"
    general = re.sub(r"[\s{}]", "", _COMMAND.sub("", _CHEM.sub(" ", latex)))
    for match in _GENERAL_SCRIPT.finditer(general):
        letters, digits = match.groups()
        found.append((_BEFORE + re.escape(letters), digits, match.group(0)))
    return found


def unread_formula_scripts(formulas: tuple[str, ...] | list[str], observed: str) -> list[str]:
    """Return the digit sub/superscripts of the formulas a reading shows no digits for.

    Such a script (`x^2` read as `x?`) is neither confirmed nor contradicted:
    a reason to ask another engine, not evidence of a defect.
    """
    return _scripts_read_as(formulas, observed, "unread")


def _scripts_read_as(
    formulas: tuple[str, ...] | list[str], observed: str, status: str
) -> list[str]:
    """Return each formula script (as written) whose reading in `observed` has `status`."""
    text = normalise(observed)
    scripts = [script for latex in formulas for script in formula_scripts(latex)]
    return list(
        dict.fromkeys(
            shown
            for pattern, digits, shown in scripts
            if _script_status(pattern, digits, text, _siblings_of(pattern, digits, scripts))
            == status
        )
    )


def _siblings_of(pattern: str, digits: str, scripts: list[tuple[str, str, str]]) -> frozenset[str]:
    """Return the other digits the source writes as scripts of the same base (L_4 beside L_1)."""
    return frozenset(d for p, d, _shown in scripts if p == pattern and d != digits)


def _script_status(
    pattern: str, digits: str, text: str, siblings: frozenset[str] = frozenset()
) -> str:
    """Return how the text shows a script: "read", "contradicted" (other digits) or "unread".

    Read when its base is once followed by its own digits; contradicted when
    the base is followed only by other digits, none of them a script the
    source gives the same base elsewhere ("L4" read is the source's own
    `L_4`, no evidence about `L_1`); unread when no digit follows the base
    at all (or the base is not read).
    """
    after = [m.group(1) for m in re.finditer(pattern + r"(\d+)", text)]
    if any(a.startswith(digits) for a in after):
        return "read"
    return "contradicted" if [a for a in after if a not in siblings] else "unread"
