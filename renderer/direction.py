"""Writing direction of an item's text: right to left for Arabic, Hebrew and their kin.

The page sets `dir` on each text block (question paragraph, option) from
these functions, never from the item: the value is always one of
`DIRECTIONS`. Formulas are left out of the decision (they are set left to
right, isolated, whatever the paragraph's direction), and so are figure
captions, which are scene words.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from itemshot.renderer.markup import Segment, Text

LTR, RTL = "ltr", "rtl"
DIRECTIONS = (LTR, RTL)

# Languages written right to left (ISO 639 codes; `iw` is Hebrew's old code).
RTL_LANGUAGES = frozenset(
    {"ar", "arc", "ckb", "dv", "fa", "he", "iw", "ks", "ku", "ps", "sd", "syr", "ug", "ur", "yi"}
)
_RTL_CLASSES = frozenset({"R", "AL"})


def language_direction(language: str) -> str:
    """Return the direction of a language tag (`he`, `ar-EG`, …); left to right when unknown."""
    primary = language.replace("_", "-").split("-", 1)[0].lower()
    return RTL if primary in RTL_LANGUAGES else LTR


def _strong(segments: Iterable[Segment]) -> list[str]:
    """Return the bidi classes of the strong characters of the text segments, in order."""
    classes: list[str] = []
    for segment in segments:
        if isinstance(segment, Text):
            for char in segment.text:
                kind = unicodedata.bidirectional(char)
                if kind in ("L", "R", "AL"):
                    classes.append(kind)
    return classes


def text_direction(segments: Iterable[Segment], default: str) -> str:
    """Return the direction of a paragraph or option: its first strong character's.

    Text with no strong character (a number, a formula) takes `default`, the
    item's direction. In a right-to-left item any right-to-left letter makes
    the text right to left, so an Arabic sentence that opens with a Latin
    abbreviation ("DNA …") is still set right to left.
    """
    strong = _strong(segments)
    if not strong:
        return default
    if default == RTL and any(kind in _RTL_CLASSES for kind in strong):
        return RTL
    return RTL if strong[0] in _RTL_CLASSES else LTR


def item_direction(language: str, question: Iterable[Segment]) -> str:
    """Return an item's direction: its language's, else its question's first strong character's.

    The text decides when the language does not (datasets often leave the
    language at its default), so a Hebrew question tagged `en` is still right
    to left.
    """
    if language_direction(language) == RTL:
        return RTL
    return text_direction(question, LTR)
