"""Findings: a token one reading shows otherwise, settled only by a reading that shows the source's.

A word read as another word and a relation read as another relation are
both contradicted by one reading, however many readings leave them unread:
each reading's findings are kept until some reading shows the token as
the source has it, in its place.
"""

from __future__ import annotations

from collections.abc import Sequence

from itemshot.verify.checks import relations
from itemshot.verify.checks.meaning import WORD_CODES, token_shown
from itemshot.verify.verdicts import ReasonCode

FINDING_CODES = (*WORD_CODES, ReasonCode.RELATION_CHANGED)


def finding_shown(code: str, text: str, token: str, readings: Sequence[str]) -> bool:
    """Return whether some reading shows a finding's token as the source `text` has it."""
    if code == ReasonCode.RELATION_CHANGED:
        return relations.shown(token, readings)
    return token_shown(text, token, readings)
