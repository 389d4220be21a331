"""The strict parser as self-contained source code, for files an export ships to a harness.

A harness loads an export's Python file on its own (lmms-eval's `utils.py`,
VLMEvalKit's dataset module), without itemshot installed; the file carries
a copy of the parser so that every harness reads answers exactly as
`itemshot analyze` does.
"""

from __future__ import annotations

import inspect

from itemshot.factorial.answers import parsers, parsers_strict

# The imports of `parsers_strict` that `parser_source` provides; it refuses to
# copy the parser if the parser ever needs anything else.
_PROVIDED = {
    "from __future__ import annotations",
    "import re",
    "import unicodedata",
    "from collections.abc import Sequence",
    "from typing import Any",
    "from itemshot.factorial.answers.parsers import ParseResult, option_letters",
}

# Harnesses import these files without registering them in sys.modules, which
# a dataclass needs; the parser's result record is a NamedTuple here instead.
_HEAD = '''import re
import unicodedata
from collections.abc import Sequence
from typing import Any, NamedTuple

LETTERS = {letters!r}


class ParseResult(NamedTuple):
    """The letter a parser extracted, whether it was a random guess, and why."""

    letter: str | None
    fallback: bool
    reason: str

'''


def parser_source() -> str:
    """Return code defining `parse_strict` (and what it needs), imports included.

    The code goes after a module's `from __future__ import annotations` line.
    """
    body = inspect.getsource(parsers_strict).split('"""', 2)[2]
    kept: list[str] = []
    for line in body.splitlines():
        if line.startswith(("import ", "from ")):
            if line not in _PROVIDED:
                raise RuntimeError(f"parsers_strict imports {line!r}; teach standalone.py about it")
            continue
        kept.append(line)
    parts = [
        _HEAD.format(letters=parsers.LETTERS),
        inspect.getsource(parsers.option_letters),
        "\n".join(kept).strip("\n"),
    ]
    return "\n\n".join(part.strip("\n") for part in parts) + "\n"
