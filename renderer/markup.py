"""Split untrusted item text into typed segments: plain text, math and figure references.

Nothing here produces HTML. Templates render the segments with autoescape on,
so untrusted text can only ever appear as literal characters on the page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from itemshot.renderer.items import IMAGE_TAG
from itemshot.renderer.tex_commands import known_commands


@dataclass(frozen=True)
class Text:
    """Literal text."""

    text: str


@dataclass(frozen=True)
class Math:
    """A formula in LaTeX; `display` for `$$…$$` / `\\[…\\]`; `form`, how the text wrote it.

    `form` is one of FORMS; it is provenance only (two formulas with the same
    LaTeX and display are equal however they were written).
    """

    latex: str
    display: bool
    form: str = field(default="$…$", compare=False)


# How item text writes a formula (see `_delimited` and `_undelimited`).
FORMS = ("$…$", "$…$ spaced", "$$…$$", "\\[…\\]", "\\(…\\)", "undelimited")


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


# How item text writes formulas (counts over the 1,730 MMMU-Pro mix items'
# question and option texts are in benchmarks/raw_latex.py):
# - `$…$` inline, by pandoc's rule: no space just inside the dollars and no
#   digit right after the closing one, so "costs $5 and $10" stays text;
# - `$…$` with a space just inside (`$\mu $`, `$ L_{1} $`, MMMU-Pro's usual
#   form), accepted when its content is plainly TeX (a command, `^`, `_` or a
#   brace, and no run of prose words) or a single token; plainly TeX content
#   may also be followed by a digit (MMMU-Pro writes `$\beta $0` for β0);
# - `$$…$$` and `\[…\]` display, `\(…\)` inline;
# - no delimiters at all (`1.2\phase{-37.8} V`, `10e^{-t} u(t)`): a run of
#   formula-like words around a command KaTeX defines or a braced script
#   (see `_undelimited`).
# `\$` is a literal dollar, never a delimiter, and shows as `$`.
_DIGIT = re.compile(r"\d")
_TEX_MARK = re.compile(r"[\\^_{}]")
_SPACE = re.compile(r"\s")
_BRACED = re.compile(r"\{[^{}]*\}")
_PROSE = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{3,}\s+[A-Za-z]{3,}(?![A-Za-z])")


def _unescaped_dollar(text: str, start: int) -> int:
    """Return the index of the first `$` at or after `start` that is not `\\$`, or -1."""
    index = start
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == "$":
            return index
        index += 1
    return -1


def _is_inline(content: str, after: str) -> bool:
    """Return whether `$content$`, followed by the character `after`, is a formula."""
    latex = content.strip()
    if not latex:
        return False
    tex = bool(_TEX_MARK.search(latex)) and not _PROSE.search(_BRACED.sub(" ", latex))
    if _DIGIT.match(after) and not tex:
        return False  # "$5 and $10": the second dollar starts an amount (`$\beta $0` is TeX)
    if latex == content or tex:
        return True
    return not _SPACE.search(latex)


def _delimited(text: str) -> list[tuple[int, int, Math]]:
    """Return (start, end, formula) of every delimited formula in `text`, in order."""
    found: list[tuple[int, int, Math]] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\":
            pair = text[index : index + 2]
            if pair in ("\\(", "\\["):
                close = text.find("\\)" if pair == "\\(" else "\\]", index + 2)
                latex = text[index + 2 : close].strip() if close != -1 else ""
                if latex:
                    form = "\\[…\\]" if pair == "\\[" else "\\(…\\)"
                    found.append((index, close + 2, Math(latex, pair == "\\[", form)))
                    index = close + 2
                    continue
            index += 2  # an escaped character (`\$` among them) never opens a formula
            continue
        if char != "$":
            index += 1
            continue
        if text.startswith("$$", index):
            close = text.find("$$", index + 2)
            latex = text[index + 2 : close].strip() if close != -1 else ""
            if latex:
                found.append((index, close + 2, Math(latex, True, "$$…$$")))
                index = close + 2
            else:
                index += 2  # `$$` never opens an inline formula
            continue
        close = _unescaped_dollar(text, index + 1)
        if close == -1:
            break
        content = text[index + 1 : close]
        if _is_inline(content, text[close + 1 : close + 2]):
            form = "$…$" if content.strip() == content else "$…$ spaced"
            found.append((index, close + 1, Math(content.strip(), False, form)))
            index = close + 1
        else:
            index = close  # the closing dollar may open the next formula
    return found


def parse_inline(text: str) -> list[Segment]:
    """Return the segments of one piece of text, in order."""
    segments: list[Segment] = []
    position = 0
    for start, end, formula in _delimited(text):
        segments.extend(_text_segments(text[position:start]))
        segments.append(formula)
        position = end
    segments.extend(_text_segments(text[position:]))
    return [s for s in segments if not (isinstance(s, Text) and not s.text)]


def _text_segments(text: str) -> list[Segment]:
    """Return the segments of text outside delimiters: figure tags, bare formulas, literals."""
    segments: list[Segment] = []
    for segment in _split_figure_refs(text):
        if isinstance(segment, Text):
            segments.extend(_undelimited(segment.text))
        else:
            segments.append(segment)
    return segments


# Words a formula may hold outside commands: function names and single letters.
FUNCTION_NAMES = frozenset(
    [
        "sin",
        "cos",
        "tan",
        "cot",
        "sec",
        "csc",
        "sinh",
        "cosh",
        "tanh",
        "arcsin",
        "arccos",
        "arctan",
        "log",
        "ln",
        "lg",
        "exp",
        "lim",
        "max",
        "min",
        "det",
        "arg",
        "deg",
        "mod",
    ]
)
# A word is a run of characters between spaces; CJK characters separate words
# too (Japanese writes no spaces), so a formula never swallows a sentence.
_WORD = re.compile(r"[^\s\u3000-\u30ff\u3400-\u9fff\uf900-\ufaff\uff00-\uffef]+")
_COMMAND_NAME = re.compile(r"\\([A-Za-z]+)")
_BRACED_SCRIPT = re.compile(r"[\^_]\{")  # `e^{-t}`, `V_{in}`: TeX in any text
_LETTERS = re.compile(r"[A-Za-z]+")
_ONLY_LETTERS = re.compile(r"[A-Za-z]+[.,;:]?")
_TRAILING_PUNCTUATION = re.compile(r"[.,;:]+$")


def _has_known_command(word: str) -> bool:
    """Return whether a word holds a command KaTeX defines and no dollar.

    A word with a dollar in it has an unclosed `$`: a broken delimiter, left as
    text for the page check to report, not a formula.
    """
    known = known_commands()
    return "$" not in word and any(m.group(1) in known for m in _COMMAND_NAME.finditer(word))


def _seeds_formula(word: str) -> bool:
    """Return whether a word is surely TeX: a command KaTeX defines, or a braced script."""
    return _has_known_command(word) or ("$" not in word and bool(_BRACED_SCRIPT.search(word)))


def _formula_word(word: str) -> bool:
    """Return whether a word next to a command belongs to its formula (not to the prose)."""
    if "$" in word:
        return False
    if _ONLY_LETTERS.fullmatch(word):
        letters = word.rstrip(".,;:")
        return len(letters) == 1 or letters in FUNCTION_NAMES
    for match in _LETTERS.finditer(word):
        after_backslash = match.start() > 0 and word[match.start() - 1] == "\\"
        if len(match.group()) >= 3 and not after_backslash and match.group() not in FUNCTION_NAMES:
            return False  # a prose word or a unit glued on ("Mrad/s.")
    return True


def _balanced(latex: str) -> bool:
    depth = 0
    for char in re.sub(r"\\[{}]", "", latex):
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


def _undelimited(text: str) -> list[Segment]:
    """Return `text` with its undelimited formulas as Math, the rest as literal Text.

    A formula is a command KaTeX defines or a braced script, and the
    formula-like words around it (numbers, operators, single letters,
    function names, other commands), joined by spaces; prose words end it. A
    run whose braces do not balance is left as text (the page check then
    fails the render instead of showing it).
    """
    if "\\" not in text and not _BRACED_SCRIPT.search(text):
        return [Text(_unescape(text))]
    words = list(_WORD.finditer(text))
    runs: list[tuple[int, int]] = []
    for index, word in enumerate(words):
        if (runs and index <= runs[-1][1]) or not _seeds_formula(word.group()):
            continue
        first = last = index
        while first > 0 and _joined(text, words[first - 1], words[first]):
            if not _formula_word(words[first - 1].group()):
                break
            first -= 1
        while last + 1 < len(words) and _joined(text, words[last], words[last + 1]):
            if not _formula_word(words[last + 1].group()):
                break
            last += 1
        runs.append((first, last))
    segments: list[Segment] = []
    position = 0
    for first, last in runs:
        start, end = words[first].start(), words[last].end()
        latex = _TRAILING_PUNCTUATION.sub("", text[start:end])
        if not latex or not _balanced(latex):
            continue
        segments.append(Text(_unescape(text[position:start])))
        segments.append(Math(latex, False, "undelimited"))
        position = start + len(latex)
    segments.append(Text(_unescape(text[position:])))
    return segments


def _joined(text: str, left: re.Match[str], right: re.Match[str]) -> bool:
    """Return whether two words are separated by spaces only (not by CJK text)."""
    return text[left.end() : right.start()].isspace()


def _unescape(text: str) -> str:
    """Return literal text as it reads: LaTeX's escaped dollar `\\$` is a dollar."""
    return text.replace("\\$", "$")


def _split_figure_refs(text: str) -> list[Segment]:
    # A tag's words ("Figure 1") are a word of their own. Sources glue the tag to theirs
    # ("above:<image 1>The", "<image 1><image 2>A"): set as written, the page would read
    # "above:Figure 1The", which no reader (nor OCR) takes for two words.
    segments: list[Segment] = []
    position = 0
    for match in IMAGE_TAG.finditer(text):
        before = text[position : match.start()]
        if _glued(before[-1:], opening=True):
            before += " "
        segments.append(Text(before))
        segments.append(FigureRef(int(match.group(1))))
        position = match.end()
        if _glued(text[position : position + 1], opening=False) or IMAGE_TAG.match(text, position):
            segments.append(Text(" "))
    segments.append(Text(text[position:]))
    return segments


def _glued(char: str, *, opening: bool) -> bool:
    """Return whether a figure tag's words beside `char` need a space between them.

    Before the tag: after a word or its punctuation, not after a space or an opening
    bracket. After it: before a Latin letter or digit, not before punctuation.
    Japanese sets no spaces between words: beside kana or kanji nothing is added.
    """
    if not char or char.isspace() or not char.isascii():
        return False
    return char not in "([{\"'" if opening else char.isalnum()


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
