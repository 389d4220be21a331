"""Turn one raw dataset row into a checked Item, or an ItemError naming the field."""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np

from itemshot.renderer.adapters.figures import FigureProblem, decode_figure, read_figure_file
from itemshot.renderer.identity import (
    char_name,
    differences,
    look_alike,
    same_text,
    shown,
    visible_form,
)
from itemshot.renderer.items import IMAGE_TAG, LETTERS, MAX_OPTIONS, Figure, Item, ItemError

MAX_QUESTION_CHARS = 10_000
MAX_OPTION_CHARS = 2_000
MISSING_POLICIES = ("fail", "placeholder")
ANSWER_FORMATS = ("auto", "letter", "index0", "index1", "text")

_SURROGATE = re.compile(r"[\ud800-\udfff]")
_JAPANESE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff66-\uff9f]")


@dataclass(frozen=True)
class RawItem:
    """A dataset row as an adapter read it, before any checking.

    `images` maps a figure number to a file path (relative to the dataset
    folder), raw bytes, or None when the dataset has the column but no value.
    """

    id: str
    question: Any
    options: Any
    answer: Any
    images: Mapping[int, str | bytes | None] = field(default_factory=dict)
    options_4: Any = None
    answer_4: Any = None
    subject: str = ""
    language: str = ""
    answer_format: str = "auto"
    meta: Mapping[str, Any] = field(default_factory=dict)


def build_item(raw: RawItem, root: Path, missing_images: str = "fail") -> Item:
    """Return the checked Item for `raw`; raise ItemError naming the field at fault."""
    if not isinstance(raw.id, str) or invalid_character(raw.id) is not None:
        shown = printable(str(raw.id))
        raise ItemError(shown, "id", f"is not valid Unicode text ({_where(str(raw.id))})")
    for name in ("subject", "language"):
        _check_text(raw.id, name, getattr(raw, name) or "")
    question = _check_question(raw)
    options = _check_options(raw.id, "options", raw.options)
    answer = _parse_answer(raw.id, "answer", raw.answer, options, raw.answer_format)
    options_4: tuple[str, ...] | None = None
    answer_4: int | None = None
    if raw.options_4 is not None:
        options_4 = _check_options(raw.id, "options_4", raw.options_4)
        answer_4 = _parse_answer(raw.id, "answer_4", raw.answer_4, options_4, raw.answer_format)
    figures, missing = _load_figures(raw, question, options, root, missing_images)
    language = raw.language or ("ja" if _JAPANESE.search(question + "".join(options)) else "en")
    return Item(
        id=raw.id,
        question=question,
        options=options,
        answer=answer,
        figures=figures,
        options_4=options_4,
        answer_4=answer_4,
        subject=raw.subject or "",
        language=language,
        missing_figures=tuple(missing),
        meta=dict(raw.meta),
    )


def invalid_character(text: str) -> int | None:
    """Return the position of the first character that is not valid Unicode text, if any.

    Lone UTF-16 surrogates (U+D800–U+DFFF, e.g. a JSON `"\\ud800"`) cannot be
    encoded at all: they would fail the item's hash, its sidecar and the page.
    """
    found = _SURROGATE.search(text)
    return found.start() if found else None


def printable(text: str) -> str:
    """Return text with invalid characters shown as escapes (safe to write anywhere)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _where(text: str) -> str:
    position = invalid_character(text) or 0
    return f"a lone surrogate U+{ord(text[position]):04X} at character {position + 1}"


def _check_text(item_id: str, name: str, value: str) -> str:
    if invalid_character(value) is not None:
        raise ItemError(item_id, name, f"is not valid Unicode text ({_where(value)})")
    return value


def _check_question(raw: RawItem) -> str:
    # A question of zero-width characters only is as empty as a blank one: it draws nothing.
    if not isinstance(raw.question, str) or not visible_form(raw.question):
        raise ItemError(raw.id, "question", "is empty or not text")
    _check_text(raw.id, "question", raw.question)
    if len(raw.question) > MAX_QUESTION_CHARS:
        raise ItemError(
            raw.id,
            "question",
            f"is {len(raw.question):,} characters long; the limit is {MAX_QUESTION_CHARS:,}",
        )
    return raw.question


def _check_options(item_id: str, name: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list | tuple):
        raise ItemError(item_id, name, f"is not a list of options ({type(value).__name__})")
    if not value:
        raise ItemError(item_id, name, "is empty; a multiple-choice item needs options")
    if len(value) > MAX_OPTIONS:
        raise ItemError(item_id, name, f"has {len(value)} options; at most {MAX_OPTIONS} (A–Z)")
    options = tuple(
        _option_text(item_id, name, letter, v) for letter, v in zip(LETTERS, value, strict=False)
    )
    for letter, text in zip(LETTERS, options, strict=False):
        if not visible_form(text):
            raise ItemError(item_id, name, f"option {letter} is empty")
        if len(text) > MAX_OPTION_CHARS:
            raise ItemError(item_id, name, f"option {letter} is longer than {MAX_OPTION_CHARS}")
    # Pairwise, not by one key: looking alike is not transitive (see `identity`).
    for later, text in enumerate(options):
        for earlier in range(later):
            if same_text(options[earlier], text):
                raise ItemError(item_id, name, _same_options(options, earlier, later))
    return options


def _same_options(options: tuple[str, ...], first: int, second: int) -> str:
    """Return the message for two options a reader of the image could not tell apart."""
    a, b, pair = options[first], options[second], f"{LETTERS[first]} and {LETTERS[second]}"
    if " ".join(a.split()) == " ".join(b.split()):
        return f"options {pair} are identical"
    marked = {char for char in set(a) ^ set(b) if not char.isascii()}
    # Long options are shown around their first difference, which is at one place in both.
    pairs = enumerate(zip(a, b, strict=False))
    at = next((i for i, (x, y) in pairs if x != y), min(len(a), len(b)))
    why = differences(a, b)
    more = f" (and {len(why) - 2} more)" if len(why) > 2 else ""
    return (
        f"options {LETTERS[first]} {shown(a, marked, at)} and {LETTERS[second]} "
        f"{shown(b, marked, at)} would look the same in the image: {'; '.join(why[:2])}{more}"
    )


def _option_text(item_id: str, name: str, letter: str, value: Any) -> str:
    """Return one option as text: strings as they are, whole numbers and plain decimals written out.

    Anything else (a mapping, a list, true/false, 1e-05) is refused rather than
    turned into text the dataset never had.
    """
    if value is None:
        return ""
    if isinstance(value, str):
        if invalid_character(value) is not None:
            raise ItemError(
                item_id, name, f"option {letter} is not valid Unicode text ({_where(value)})"
            )
        return value
    if isinstance(value, numbers.Integral) and not _boolean(value):
        return str(int(value))
    if isinstance(value, float) and math.isfinite(value) and "e" not in repr(value):
        return repr(value)
    shown = printable(repr(value))
    shown = shown if len(shown) <= 40 else shown[:39] + "…"
    raise ItemError(item_id, name, f"option {letter} is not text ({type(value).__name__} {shown})")


def _parse_answer(item_id: str, name: str, value: Any, options: tuple[str, ...], fmt: str) -> int:
    """Return the answer key as an index into `options`, read by the value's type.

    - Missing (None, NaN, empty or invisible-only text): refused.
    - A boolean: refused; it is no answer key.
    - A number (int, numpy integer, or a float with a whole value, as pandas
      writes an integer column with gaps) is an index: 0-based under `auto`
      and `index0` (the convention of integer answer columns, as Hugging Face
      `ClassLabel`s are), 1-based under `index1`, refused under `letter` and
      `text`. It is never matched against an option's text: `2` next to an
      option "2" would otherwise pick that option silently.
    - Text: one letter A–Z (either case, full-width too) under `auto` and
      `letter`; digits under `index0`/`index1`; otherwise an option's text,
      compared by identity (`identity.same_text`), under `auto` and `text`.
    """
    if fmt not in ANSWER_FORMATS:
        raise ItemError(item_id, name, f"answer_format {fmt!r} is not one of {ANSWER_FORMATS}")
    if _missing(value):
        what = "NaN" if isinstance(value, numbers.Real | Decimal) else "no value"
        raise ItemError(item_id, name, f"is missing ({what}); every item needs its answer key")
    if _boolean(value):
        raise ItemError(item_id, name, f"is {value}, a true/false value, not an answer key")
    if isinstance(value, numbers.Real | Decimal):
        return _number_answer(item_id, name, value, len(options), fmt)
    if not isinstance(value, str):
        raise ItemError(
            item_id,
            name,
            f"is not a letter, an index or an option's text ({type(value).__name__})",
        )
    text = visible_form(value)
    if not text:
        raise ItemError(item_id, name, "is empty; every item needs its answer key")
    count = len(options)
    if fmt in ("auto", "letter") and re.fullmatch(r"[A-Za-z]", text):
        index = LETTERS.index(text.upper())
        if index >= count:
            raise ItemError(
                item_id, name, f"letter {text!r} is outside the options A–{LETTERS[count - 1]}"
            )
        return index
    if fmt in ("index0", "index1"):
        if not re.fullmatch(r"-?\d+", text):
            raise ItemError(item_id, name, f"{shown(value)} is not a whole number")
        return _index(item_id, name, int(text), count, fmt)
    if fmt in ("auto", "text"):
        matches = [index for index, option in enumerate(options) if same_text(option, value)]
        if len(matches) == 1:
            return matches[0]
        if matches:
            alike = " and ".join(LETTERS[index] for index in matches)
            raise ItemError(item_id, name, f"{shown(value)} looks like options {alike} alike")
    raise ItemError(
        item_id,
        name,
        f"{shown(value)} is neither an option letter nor an option's text{_letter_hint(text)}",
    )


def _missing(value: Any) -> bool:
    """Return whether an answer value is absent: None, NaN (float, numpy, Decimal) or pandas NA."""
    if value is None or type(value).__name__ == "NAType":
        return True
    if isinstance(value, Decimal):
        return value.is_nan()
    return isinstance(value, numbers.Real) and math.isnan(value)


def _boolean(value: Any) -> bool:
    # numpy's bool is no subclass of bool; both are true/false, never a number here.
    return isinstance(value, bool | np.bool_)


def _number_answer(item_id: str, name: str, value: Any, count: int, fmt: str) -> int:
    if fmt in ("letter", "text"):
        wanted = "a letter" if fmt == "letter" else "an option's text"
        raise ItemError(
            item_id, name, f"is the number {value}; with answer_format={fmt} it must be {wanted}"
        )
    whole = isinstance(value, numbers.Integral) or (math.isfinite(value) and value == int(value))
    if not whole:
        raise ItemError(item_id, name, f"{value} is not a whole number (an option index)")
    return _index(item_id, name, int(value), count, fmt)


def _index(item_id: str, name: str, number: int, count: int, fmt: str) -> int:
    first = 1 if fmt == "index1" else 0
    index = number - first
    if not 0 <= index < count:
        span = f"{first}–{count - 1 + first}"
        why = (
            f"{span} with answer_format=index1"
            if first
            else f"{span}: numbers are 0-based indices; answer_format=index1 reads them 1-based"
        )
        raise ItemError(item_id, name, f"index {number} is outside the {count} options ({why})")
    return index


def _letter_hint(text: str) -> str:
    """Return a note when a one-character answer only looks like an option letter (Cyrillic "В")."""
    if len(text) != 1 or text.isascii():
        return ""
    for letter in LETTERS + LETTERS.lower():
        if look_alike(text, letter):
            return f" ({char_name(text)} looks like the letter {letter!r} but is another character)"
    return ""


def _load_figures(
    raw: RawItem, question: str, options: tuple[str, ...], root: Path, policy: str
) -> tuple[dict[int, Figure], list[int]]:
    referenced = sorted(
        {int(m.group(1)) for t in (question, *options) for m in IMAGE_TAG.finditer(t)}
    )
    figures: dict[int, Figure] = {}
    missing: list[int] = []
    for number in referenced:
        field_name = f"image_{number}"
        source = raw.images.get(number)
        try:
            if source is None:
                what = "no value" if number in raw.images else "no such column"
                raise FigureProblem(
                    f"the text references <image {number}> but {field_name} has {what}",
                    missing=True,
                )
            if isinstance(source, bytes):
                data, label = source, f"{field_name} bytes"
            else:
                data, label = read_figure_file(source, root)
            figures[number] = decode_figure(number, data, label)
        except FigureProblem as problem:
            if problem.missing and policy == "placeholder":
                missing.append(number)
                continue
            raise ItemError(raw.id, field_name, str(problem)) from None
    return figures, missing
