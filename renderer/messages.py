"""Error messages fit for a manifest row: bounded in length, stable from run to run.

Item data is untrusted and can be huge (a 10,000-character formula), and
library errors can carry object reprs (`<_io.BytesIO object at 0x7f…>`) that
differ on every run. Every per-item error passes through `readable` where it
is recorded, so a message stays one readable line that names where the
problem is and why, and two runs of the same data give the same message.
"""

from __future__ import annotations

import re

# Long enough for "LaTeX error in option B: <the parser's reason>", short
# enough to read in a summary table or a terminal line.
MESSAGE_LIMIT = 200
# A run of non-blank characters longer than this is data (a formula, a path,
# base64), not words: it is cut in its middle so the words around it stay.
WORD_LIMIT = 48
ELLIPSIS = "…"

_OBJECT_REPR = re.compile(r"<(?:[\w.]+\.)?(\w+) object at 0x[0-9a-fA-F]+>")
_LONG_WORD = re.compile(rf"\S{{{WORD_LIMIT + 1},}}")


def readable(message: str, limit: int = MESSAGE_LIMIT) -> str:
    """Return `message` without object reprs, long runs cut, and at most `limit` characters.

    A cut keeps the start (where the problem is) and the end (the reason a
    library gave) and marks the gap with an ellipsis.
    """
    text = _OBJECT_REPR.sub(lambda match: f"a {match.group(1)}", message)
    text = " ".join(text.split())  # one line: no newlines or runs of spaces from data
    text = _LONG_WORD.sub(lambda match: _cut(match.group(0), WORD_LIMIT), text)
    return _cut(text, limit)


def _cut(text: str, limit: int) -> str:
    """Return `text` cut in its middle to `limit` characters (an ellipsis marks the cut)."""
    if len(text) <= limit:
        return text
    head = (limit - len(ELLIPSIS)) * 3 // 5  # more of the start: it names the field
    tail = limit - len(ELLIPSIS) - head
    return text[:head] + ELLIPSIS + text[len(text) - tail :]
