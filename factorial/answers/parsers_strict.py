"""The strict answer parser: explicit answers only, never a guess.

Rules, applied to the NFKC-normalised response (so full-width letters, colons
and brackets count as their ASCII forms) in which LaTeX is transparent: text
and font wrappers (`\\text{…}`, `\\textbf{…}`, `\\mathrm{…}`, `\\mathbf{…}`,
nested or not), math delimiters (`\\(`…`\\)`, `\\[`…`\\]`, `$`) and LaTeX
spaces (`\\ `, `\\,`, `\\quad`) are removed first, so
`Answer: \\( \\text{(C)} \\)` reads as `Answer: (C)`:

1. Lines that merely list the options (a run of two or more lines that each
   start with an option label such as `A.`, `(B)`, `C)`) are ignored.
2. The last explicit answer wins: an answer marker (`Answer:`, `Final answer`,
   `The correct option is`, `正解`, `答え`, `解答`) followed by a letter, or
   `\\boxed{X}` (also `\\boxed{(X) text}`, `\\boxed{Answer: X}`). The letter
   may be wrapped as `(X)`, `**X**`, `[X]` or `【X】`; a lowercase letter counts
   after a marker only in brackets or alone (`Answer: (e)`).
3. Otherwise the last remaining line decides if it is a bare answer: `X`,
   `(X)`, `**X**`, `X.`, `X)` or `X. <text>`, a lone lowercase letter such as
   `(c)`, or a line holding exactly one bold letter.
4. Anything else is unparseable; so are letters outside the option range and
   answers naming two letters (`Answer: C or D`).

`A` and `I` are also English words: after a marker, `A` or `I` followed by a
lowercase word (`Answer: I think…`) is not taken as an answer.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any

from itemshot.factorial.answers.parsers import ParseResult, option_letters

_OPEN = r"[*_(\[【]*"
_CLOSE = r"[*_)\]】]*"

_MARKER = re.compile(
    r"(?<![A-Za-z])(?P<marker>final\s+answer|correct\s+answer|correct\s+option|correct\s+choice"
    r"|answer|正解|答え|解答)"
    r"[\s*_]*(?:is|は|:|=)?[\s*_]*[:]?[\s*_]*(?:option|choice|選択肢)?\s*"
    rf"(?P<open>{_OPEN})\s*(?P<letter>[A-Z])(?![A-Za-z0-9])(?P<close>{_CLOSE})",
    re.IGNORECASE,
)
# `\\boxed{…}` holding a letter, optionally labelled (`\\boxed{(A) 2.0 m}`) or
# introduced (`\\boxed{Answer: J}`); read after the LaTeX wrappers are gone.
_BOXED = re.compile(
    r"\\boxed\s*\{\s*(?:(?i:final\s+answer|answer)\s*(?:is|:)?\s*)?"
    r"(?P<open>[(\[]?)\s*(?P<letter>[A-Z])(?![A-Za-z0-9])\s*(?P<close>[)\]]?)(?P<rest>[^{}]*)\}"
)
_OPTION_LABEL = re.compile(
    r"^\s*(?:[-*•・>]\s*)?[*_]*\(?(?P<letter>[A-Z])[*_]*[.):、。][*_]*(?:\s|$)"
)
_BARE_LINE = re.compile(
    r"^(?P<open>[(\[【]?)(?P<letter>[A-Z])(?P<close>[)\]】]?)(?P<punct>[.:)]?)(?P<rest>.*)$"
)
_SECOND_LETTER = re.compile(
    r"^\s*(?:(?:,|/|&|or\b|and\b|または|か)\s*[*_(\[【]*|[(\[【])[A-Z](?![A-Za-z])"
)
# Wrappers that only change the font of their content; undone innermost first.
_LATEX_WRAPPER = re.compile(
    r"\\(?:text|textbf|textit|textrm|textsf|texttt|textnormal|mathrm|mathbf|mathit|mathsf"
    r"|mathtt|mathnormal|boldsymbol|emph|mbox)\s*\{([^{}]*)\}"
)
_LATEX_SPACE = re.compile(r"\\(?:qquad|quad|[ ,;:!])")
_LATEX_DELIMITER = re.compile(r"\\[()\[\]]|\\?\$")
_LONE_LOWER = re.compile(r"^[(\[【]?(?P<letter>[a-z])[)\]】]?[.:]?$")
_BOLD_LETTER = re.compile(r"\*\*\s*[(\[]?(?P<letter>[A-Z])[)\]]?[.):]?\s*\*\*")
_LOWER_WORD = re.compile(r"^\s+[a-z]")


def normalise(text: str) -> str:
    """Return the response in NFKC form, `\\n` line ends, LaTeX wrappers and delimiters removed."""
    text = unicodedata.normalize("NFKC", text).replace("\r\n", "\n").replace("\r", "\n")
    while True:
        unwrapped = _LATEX_WRAPPER.sub(r"\1", text)
        if unwrapped == text:
            break
        text = unwrapped
    text = _LATEX_SPACE.sub(" ", text)
    return _LATEX_DELIMITER.sub(" ", text)


def listing_lines(lines: Sequence[str]) -> set[int]:
    """Return the indices of lines that belong to a listing of two or more option lines."""
    flagged: set[int] = set()
    run: list[int] = []
    for index, line in enumerate(lines):
        if _OPTION_LABEL.match(line):
            run.append(index)
        elif line.strip():
            if len(run) >= 2:
                flagged.update(run)
            run = []
    if len(run) >= 2:
        flagged.update(run)
    return flagged


def _line_rest(text: str, start: int) -> str:
    end = text.find("\n", start)
    return text[start:] if end == -1 else text[start:end]


def _acceptable(letter: str, text: str, end: int, close: str) -> bool:
    rest = _line_rest(text, end)
    if _SECOND_LETTER.match(rest):
        return False
    return not (letter in "AI" and not close.strip("*_") and _LOWER_WORD.match(rest))


def _marker_letter(match: re.Match[str], text: str) -> str | None:
    """Return the letter after a marker, uppercased; a lowercase one only when it stands out."""
    letter = match.group("letter")
    if letter.isupper():
        return letter
    bracketed = set(match.group("open")) & set("([【") and set(match.group("close")) & set(")]】")
    alone = not _line_rest(text, match.end()).strip(" .:*_")
    return letter.upper() if bracketed or alone else None


def _boxed_letter(match: re.Match[str]) -> str | None:
    """Return the letter of a boxed answer: alone, labelled `(X) …`, or `X. …`."""
    rest = match.group("rest")
    if _SECOND_LETTER.match(rest):
        return None
    if rest.strip(" .") and not match.group("close") and rest[:1] not in ".:":
        return None  # `\\boxed{A + B}` is a formula, not an answer
    return match.group("letter")


def _last_explicit(text: str, choices: Sequence[str]) -> tuple[int, str, str] | None:
    best: tuple[int, str, str] | None = None
    for match in _MARKER.finditer(text):
        letter = _marker_letter(match, text)
        if letter not in choices or not _acceptable(
            letter, text, match.end(), match.group("close")
        ):
            continue
        reason = (
            "japanese_marker" if match.group("marker") in ("正解", "答え", "解答") else "marker"
        )
        best = (match.start("letter"), letter, reason)
    for match in _BOXED.finditer(text):
        letter = _boxed_letter(match)
        if letter in choices and (best is None or match.start() > best[0]):
            best = (match.start("letter"), letter, "boxed")
    return best


def _bare_answer(line: str, choices: Sequence[str]) -> str | None:
    core = line.strip().strip("*_#` \t").strip()
    lone = _LONE_LOWER.match(core)
    if lone:
        letter = lone.group("letter").upper()
        return letter if letter in choices else None
    match = _BARE_LINE.match(core)
    if not match or match.group("letter") not in choices:
        return None
    rest = match.group("rest")
    if not rest.strip():
        return match.group("letter")
    # `X. text` / `(X) text`: a labelled answer line, but not `I am…` or `A bit…`.
    if (match.group("punct") or match.group("close")) and rest[:1].isspace():
        return match.group("letter")
    return None


def parse_strict(response: Any, options: Sequence[str]) -> ParseResult:
    """Parse an explicit answer letter from a response; never guess."""
    if not isinstance(response, str) or not response.strip():
        return ParseResult(None, False, "empty")
    choices = option_letters(len(options))
    lines = normalise(response).split("\n")
    skipped = listing_lines(lines)
    kept = [line for index, line in enumerate(lines) if index not in skipped]
    text = "\n".join(kept)

    explicit = _last_explicit(text, choices)
    if explicit is not None:
        return ParseResult(explicit[1], False, explicit[2])
    for line in reversed(kept):
        if line.strip():
            letter = _bare_answer(line, choices)
            if letter is not None:
                return ParseResult(letter, False, "final_line")
            bold = {m.group("letter") for m in _BOLD_LETTER.finditer(line)} & set(choices)
            if len(bold) == 1:
                return ParseResult(bold.pop(), False, "bold")
            break
    reason = "options_only" if skipped and not any(line.strip() for line in kept) else "unparseable"
    return ParseResult(None, False, reason)
