"""A formula drawn otherwise than its source, by the layout record of what was typeset.

OCR reads typeset math poorly: a subscript `\\alpha_{23}` drawn as
`\\alpha_{28}`, or an option that is one formula `s^{2}` drawn as `s^{6}`,
keeps every word of the field. The layout record holds, per region, the TeX
each formula on the page was typeset from (`Region.math`, the `data-latex`
KaTeX rendered); in region mode that is the rendered formula's text, and it
must be the source's, formula for formula, spacing aside. Whole-image mode
has no record: there a formula's digits are asked of the readings
(`verify.checks.tokens`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from itemshot.verify.checks.expected import Field
from itemshot.verify.verdicts import Reason, ReasonCode

_SPACE = re.compile(r"\s+")


def _same(a: str, b: str) -> bool:
    return _SPACE.sub("", a) == _SPACE.sub("", b)


def formula_reasons(field: Field, drawn: Sequence[str]) -> list[Reason]:
    """Return a reason when the formulas recorded as drawn for a field are not its source's."""
    wanted = list(field.math)
    if not wanted and not drawn:
        return []
    changed = [
        (want, got) for want, got in zip(wanted, drawn, strict=False) if not _same(want, got)
    ]
    tokens = [want for want, _got in changed]
    said = [f"{want!r} drawn as {got!r}" for want, got in changed]
    if len(wanted) > len(drawn):
        tokens += wanted[len(drawn) :]
        said += [f"{w!r} not drawn" for w in wanted[len(drawn) :]]
    elif len(drawn) > len(wanted):
        tokens += drawn[len(wanted) :]
        said += [f"{g!r} drawn, not in the source" for g in drawn[len(wanted) :]]
    if not tokens:
        return []
    return [Reason(ReasonCode.FORMULA_CHANGED, field.name, "; ".join(said), tuple(tokens))]
