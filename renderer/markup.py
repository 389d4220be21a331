"""Split untrusted item text into typed segments: plain text, math and figure references.

Nothing here produces HTML. Templates render the segments with autoescape on,
so untrusted text can only ever appear as literal characters on the page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from itemshot.renderer.items import IMAGE_TAG


@dataclass(frozen=True)
class Text:
    """Literal text."""

    text: str


@dataclass(frozen=True)
class Math:
    """A formula in LaTeX; `display` for `$$…$$` / `\\[…\\]`."""

    latex: str
    display: bool


@dataclass(frozen=True)
class FigureRef:
    """An `<image N>` tag, shown as a readable reference such as "Figure 1"."""

    number: int


Segment = Text | Math | FigureRef

# LaTeX commands an item may not use. KaTeX's `trust` commands would link,
# load images or set classes, ids, styles and data attributes; the TeX ones
# read or write files. KaTeX draws the first kind as a red command name with
# its argument dropped (and does not know the second), so an item using any
# of them fails with `math_blocked` instead of rendering wrong.
BLOCKED_COMMANDS = frozenset(
    {
        "href",
        "url",
        "includegraphics",
        "htmlClass",
        "htmlId",
        "htmlStyle",
        "htmlData",
        "input",
        "include",
        "openin",
        "openout",
        "read",
        "write",
        "immediate",
        "special",
        "usepackage",
        "documentclass",
        "catcode",
    }
)
_COMMAND = re.compile(r"\\([A-Za-z]+)")


def blocked_commands(latex: str) -> list[str]:
    """Return the blocked commands a formula uses (as `\\name`), in order, without repeats."""
    found = (f"\\{m.group(1)}" for m in _COMMAND.finditer(latex) if m.group(1) in BLOCKED_COMMANDS)
    return list(dict.fromkeys(found))


# Display math first so `$$` is never read as two empty `$` spans. Inline `$…$`
# follows pandoc's rule: no space just inside the dollars, and no digit right
# after the closing one, so "costs $5 and $10" stays text.
_MATH = re.compile(
    r"\$\$(?P<dd>.+?)\$\$"
    r"|\\\[(?P<bd>.+?)\\\]"
    r"|\\\((?P<bi>.+?)\\\)"
    r"|(?<![\\$])\$(?P<di>[^\s$](?:[^$]*?[^\s\\$])?)\$(?!\d)",
    re.DOTALL,
)


def parse_inline(text: str) -> list[Segment]:
    """Return the segments of one piece of text, in order."""
    segments: list[Segment] = []
    position = 0
    for match in _MATH.finditer(text):
        segments.extend(_split_figure_refs(text[position : match.start()]))
        display = match.group("dd") is not None or match.group("bd") is not None
        latex = next(g for g in match.group("dd", "bd", "bi", "di") if g is not None)
        segments.append(Math(latex.strip(), display))
        position = match.end()
    segments.extend(_split_figure_refs(text[position:]))
    return [s for s in segments if not (isinstance(s, Text) and not s.text)]


def _split_figure_refs(text: str) -> list[Segment]:
    segments: list[Segment] = []
    position = 0
    for match in IMAGE_TAG.finditer(text):
        segments.append(Text(text[position : match.start()]))
        segments.append(FigureRef(int(match.group(1))))
        position = match.end()
    segments.append(Text(text[position:]))
    return segments


def paragraphs(text: str) -> list[list[Segment]]:
    """Return the text split into paragraphs (at line breaks), each a list of segments."""
    blocks = [block.strip() for block in re.split(r"\n\s*\n|\n", text.strip())]
    return [parse_inline(block) for block in blocks if block]


def figure_numbers(segments: list[Segment]) -> list[int]:
    """Return the figure numbers referenced in `segments`, in order, without repeats."""
    return list(dict.fromkeys(s.number for s in segments if isinstance(s, FigureRef)))


def has_math(segments: list[Segment]) -> bool:
    """Return whether any segment is a formula."""
    return any(isinstance(s, Math) for s in segments)


def is_only_figures(segments: list[Segment]) -> bool:
    """Return whether the text is nothing but figure tags (an image-only option)."""
    meaningful = [s for s in segments if not (isinstance(s, Text) and not s.text.strip())]
    return bool(meaningful) and all(isinstance(s, FigureRef) for s in meaningful)
