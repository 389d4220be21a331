"""The LaTeX command names the page's typesetter knows, read from the installed KaTeX.

Item text sometimes carries a formula with no delimiters at all (MMMU-Pro
writes options such as `1.2\\phase{-37.8} V`). The parser typesets such a run
only when it holds a command KaTeX really defines, so a backslash in prose
(`C:\\Users`, `\\n` in code) is never taken for one.
"""

from __future__ import annotations

import re
from functools import cache

from itemshot.renderer.assets import KATEX_DIR

# The scripts whose string literals name KaTeX's commands: symbols, functions
# and macros are all registered under a literal such as "\\alpha".
_SOURCES = ("katex.min.js", "contrib/mhchem.js")
_NAME_LITERAL = re.compile(r'"\\\\([A-Za-z]+)"')


@cache
def known_commands() -> frozenset[str]:
    """Return the names (without the backslash) of every command the installed KaTeX defines.

    Empty when KaTeX is not installed: then no undelimited formula is typeset
    (and the page check reports any command left on the page).
    """
    names: set[str] = set()
    for source in _SOURCES:
        path = KATEX_DIR / source
        if path.is_file():
            names.update(_NAME_LITERAL.findall(path.read_text(encoding="utf-8", errors="replace")))
    return frozenset(names)
