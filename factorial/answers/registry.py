"""The answer parsers by name, as functions of (response, options, row key)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from itemshot.factorial.answers.parsers import ParseResult, parse_mmmu_pro, row_rng
from itemshot.factorial.answers.parsers_strict import parse_strict

PARSER_NAMES = ("mmmu_pro", "strict")


def get_parser(name: str, seed: int = 0) -> Callable[[Any, Sequence[str], str], ParseResult]:
    """Return a parser by name as a function of (response, options, row key)."""
    if name == "mmmu_pro":

        def parse_official(response: Any, options: Sequence[str], key: str) -> ParseResult:
            return parse_mmmu_pro(response, options, row_rng(seed, key))

        return parse_official
    if name == "strict":

        def parse_conservative(response: Any, options: Sequence[str], key: str) -> ParseResult:
            return parse_strict(response, options)

        return parse_conservative
    raise ValueError(f"unknown parser {name!r}; choose one of {', '.join(PARSER_NAMES)}")
