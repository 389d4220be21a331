"""Sweep analysis: answer parsing, statistics, prediction and reporting.

The names below are the public surface; the modules behind them are private.
"""

from __future__ import annotations

from itemshot.lazy import lazy_exports

# Public name -> module; imported on first use so that importing one small module
# of this package (a constant, a record) does not load OpenCV, SciPy or tesseract.
_EXPORTS = {
    "Accuracy": "itemshot.factorial.stats",
    "Decomposition": "itemshot.factorial.stats",
    "Effect": "itemshot.factorial.stats",
    "McNemar": "itemshot.factorial.stats",
    "ParseResult": "itemshot.factorial.parsers",
    "accuracy": "itemshot.factorial.stats",
    "decompose_2x2": "itemshot.factorial.stats",
    "get_parser": "itemshot.factorial.parsers",
    "mcnemar_exact": "itemshot.factorial.stats",
    "parse_mmmu_pro": "itemshot.factorial.parsers",
    "parse_strict": "itemshot.factorial.parsers_strict",
    "wilson_interval": "itemshot.factorial.stats",
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
