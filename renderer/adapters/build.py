"""Turn one raw dataset row into a checked Item, or an ItemError naming the field."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from itemshot.renderer.adapters.figures import FigureProblem, decode_figure, read_figure_file
from itemshot.renderer.items import IMAGE_TAG, LETTERS, MAX_OPTIONS, Figure, Item, ItemError

MAX_QUESTION_CHARS = 10_000
MAX_OPTION_CHARS = 2_000
MISSING_POLICIES = ("fail", "placeholder")

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
    if not isinstance(raw.question, str) or not raw.question.strip():
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
        if not text.strip():
            raise ItemError(item_id, name, f"option {letter} is empty")
        if len(text) > MAX_OPTION_CHARS:
            raise ItemError(item_id, name, f"option {letter} is longer than {MAX_OPTION_CHARS}")
    seen: dict[str, str] = {}
    for letter, text in zip(LETTERS, options, strict=False):
        key = " ".join(text.split())
        if key in seen:
            raise ItemError(item_id, name, f"options {seen[key]} and {letter} are identical")
        seen[key] = letter
    return options


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
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, float) and math.isfinite(value) and "e" not in repr(value):
        return repr(value)
    shown = printable(repr(value))
    shown = shown if len(shown) <= 40 else shown[:39] + "…"
    raise ItemError(item_id, name, f"option {letter} is not text ({type(value).__name__} {shown})")


def _parse_answer(item_id: str, name: str, value: Any, options: tuple[str, ...], fmt: str) -> int:
    """Return the answer as an index; formats: auto (letter or option text), letter, index0, index1, text."""
    count = len(options)
    text = str(value).strip() if value is not None else ""
    if fmt in ("auto", "letter") and re.fullmatch(r"[A-Za-z]", text):
        index = LETTERS.index(text.upper())
        if index >= count:
            raise ItemError(
                item_id, name, f"letter {text!r} is outside the options A–{LETTERS[count - 1]}"
            )
        return index
    if fmt in ("index0", "index1"):
        if not re.fullmatch(r"-?\d+", text):
            raise ItemError(item_id, name, f"{value!r} is not a whole number")
        index = int(text) - (1 if fmt == "index1" else 0)
        if not 0 <= index < count:
            raise ItemError(item_id, name, f"index {text} is outside the {count} options")
        return index
    if fmt in ("auto", "text") and text in options:
        return options.index(text)
    raise ItemError(item_id, name, f"{value!r} is neither an option letter nor an option's text")


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
