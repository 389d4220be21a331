"""Manifest rows of a sweep that need no rendering, figure files, and per-format prompts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from itemshot.factorial.answers.prompts import builtin_prompts, options_text, standard_text
from itemshot.renderer.items import Item
from itemshot.renderer.output import write_figure_files

# Formats whose figures travel beside the text (or beside the image of the text).
FIGURE_FORMATS = ("standard", "vision_text_only")


def prompt_for(fmt: str, question: str, options: Sequence[str], language: str) -> str:
    """Return the direct-mode prompt text a model gets with this row (MMMU-Pro wording)."""
    prompts = builtin_prompts("direct", language)
    if fmt in ("standard", "blind"):
        return standard_text(question, options, prompts)
    if fmt == "vision_question_only":
        return options_text(options, prompts)
    return prompts.vision


def figure_fields(out: Path, item: Item, fmt: str) -> dict[str, Any]:
    """Return a row's figure fields, writing the figures it sends under OUT/figures/.

    `figures` are the files sent beside the text (content-addressed, in
    first-use order), `figure_numbers` their `<image N>` numbers, and
    `missing_figures` the referenced figures the dataset lacks (drawn as
    placeholders in a rendered image, absent from a text row).
    """
    sent = write_figure_files(out, item) if fmt in FIGURE_FORMATS else {}
    return {
        "figures": list(sent.values()),
        "figure_numbers": list(sent),
        "missing_figures": list(item.missing_figures),
    }


def text_row(
    item: Item, key: str, condition: Mapping[str, Any], extra: Mapping[str, Any], out: Path
) -> dict[str, Any]:
    """Return the manifest row of a blind or standard cell (figures written as files)."""
    fmt = str(condition["format"])
    return {
        "item_id": item.id,
        "job_key": key,
        "seed": None,
        "condition": dict(condition),
        "content": None,
        "question": item.question,
        "options": list(item.options),
        "answer": item.answer_letter,
        "subject": item.subject,
        "language": item.language,
        "presentation": None,
        "backend": None,
        "image": None,
        "layout": None,
        "status": "ok",
        "error": None,
        **figure_fields(out, item, fmt),
        "prompt": prompt_for(fmt, item.question, item.options, item.language),
        **extra,
    }
