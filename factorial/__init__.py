"""Sweep analysis: answer parsing, statistics, prediction and reporting.

The names below are the public surface; the modules behind them are private.
"""

from factorial.parsers import ParseResult, get_parser, parse_mmmu_pro
from factorial.parsers_strict import parse_strict
from factorial.stats import (
    Accuracy,
    Decomposition,
    Effect,
    McNemar,
    accuracy,
    decompose_2x2,
    mcnemar_exact,
    wilson_interval,
)

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
