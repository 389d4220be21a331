"""Sweep analysis: answer parsing, statistics, prediction and reporting.

The names below are the public surface; the modules behind them are private.
"""

from __future__ import annotations

from itemshot.lazy import lazy_exports

# Public name -> module; imported on first use so that importing one small module
# of this package (a constant, a record) does not load OpenCV, SciPy or tesseract.
_EXPORTS = {
    "Accuracy": "itemshot.factorial.analysis.stats",
    "Decomposition": "itemshot.factorial.analysis.stats",
    "Effect": "itemshot.factorial.analysis.stats",
    "McNemar": "itemshot.factorial.analysis.stats",
    "ParseResult": "itemshot.factorial.answers.parsers",
    "accuracy": "itemshot.factorial.analysis.stats",
    "decompose_2x2": "itemshot.factorial.analysis.stats",
    "get_parser": "itemshot.factorial.answers.registry",
    "mcnemar_exact": "itemshot.factorial.analysis.stats",
    "parse_mmmu_pro": "itemshot.factorial.answers.parsers",
    "parse_strict": "itemshot.factorial.answers.parsers_strict",
    "wilson_interval": "itemshot.factorial.analysis.stats",
}

__all__ = [
    "Accuracy",
    "Decomposition",
    "Effect",
    "McNemar",
    "ParseResult",
    "accuracy",
    "decompose_2x2",
    "get_parser",
    "mcnemar_exact",
    "parse_mmmu_pro",
    "parse_strict",
    "wilson_interval",
]


__getattr__ = lazy_exports(__name__, _EXPORTS)
