"""The reading-versus-reasoning tables of the report, as (title, header, rows)."""

from __future__ import annotations

import math

from itemshot.factorial.analysis.association import LogisticFit, MeanScore
from itemshot.factorial.analysis.reading import CRITICAL_KINDS, ReadingResults
from itemshot.factorial.analysis.stats import Accuracy
from itemshot.factorial.report.report_format import EFFECT_HEADER, effect_rows
from itemshot.factorial.report.report_format import p_value as _p
from itemshot.factorial.report.report_format import pct as _pct
from itemshot.factorial.report.report_format import pp as _pp

TableSpec = tuple[str, list[str], list[list[str]]]


def _r(value: float) -> str:
    return "–" if value != value else f"{value:+.3f}"


def _mean(score: MeanScore | None) -> str:
    if score is None or score.n == 0:
        return "–"
    return f"{_pct(score.mean)} [{_pct(score.low)}, {_pct(score.high)}]"


def _acc(value: Accuracy) -> str:
    if value.n == 0:
        return "–"
    return f"{_pct(value.rate)} [{_pct(value.low)}, {_pct(value.high)}]"


def _slope(fit: LogisticFit) -> list[str]:
    """Return the slope per +0.1 of reading accuracy (log-odds) and fitted P at 1.0 and 0.9."""
    if fit.slope != fit.slope:
        return ["–", "–", "–", "–"]
    tenth = f"{fit.slope / 10:+.2f}" + ("" if fit.converged else " (separated)")
    ci = "–" if fit.low != fit.low else f"[{fit.low / 10:+.2f}, {fit.high / 10:+.2f}]"
    at = [fit.probability(x) for x in (1.0, 0.9)]
    probabilities = [_pct(p) if math.isfinite(p) else "–" for p in at]
    return [tenth, ci, *probabilities]


def reading_tables(reading: ReadingResults) -> list[TableSpec]:
    """Return the transcription, correlation, conditional-accuracy and OCR-prompt tables."""
    threshold = f"{reading.threshold:g}"
    out: list[TableSpec] = []
    out.append(
        (
            "transcription accuracy % per model and cell [95% bootstrap CI]",
            ["model", "source", "cell", "n", "whole item", "question", "options",
             f"read ≥ {threshold}", "any critical miss", *CRITICAL_KINDS,
             "prose-only misread", "no transcript", "itemshot OCR (fields)"],
            [
                [c.model, c.source, c.cell, str(c.accuracy.n), _mean(c.accuracy),
                 _mean(c.question), _mean(c.options), str(c.read), str(c.any_critical),
                 *(str(c.critical[k]) for k in CRITICAL_KINDS), str(c.prose_only),
                 str(c.unscored), _mean(c.verifier)]
                for c in reading.transcription
            ],
        )
    )  # fmt: skip
    fits = {fit.name: fit for fit in reading.logistic}
    out.append(
        (
            "reading and correctness across items: point-biserial r and logistic fit",
            ["run", "n", "r", "95% CI", "p", "log-odds per +0.1 read", "95% CI",
             "P(correct) at 1.0 %", "at 0.9 %", "separated"],
            [
                [c.name, str(c.n), _r(c.r), f"[{_r(c.low)}, {_r(c.high)}]", _p(c.pvalue),
                 *_slope(fits[c.name]), str(fits[c.name].separated)]
                for c in reading.correlations
            ],
        )
    )  # fmt: skip
    out.append(
        (
            "one point per run: mean transcription accuracy and answer accuracy %",
            ["run", "n", "transcription [95% CI]", "accuracy [95% Wilson CI]"],
            [[p.run, str(p.accuracy.n), _mean(p.reading), _acc(p.accuracy)]
             for p in reading.points],
        )
    )  # fmt: skip
    if reading.across_models:
        out.append(
            (
                "across models: r of mean transcription and accuracy (one point per model)",
                ["prompt", "common items", "r", "95% CI", "p"],
                [[c.name, str(c.n), _r(c.r), f"[{_r(c.low)}, {_r(c.high)}]", _p(c.pvalue)]
                 for c in reading.across_models],
            )
        )  # fmt: skip
    out.append(
        (
            f"accuracy conditional on reading (threshold {threshold}), paired with the "
            "standard cell",
            ["run", "cell", "items", "items n", "cell accuracy %", "standard accuracy %",
             "Δ pp", "95% CI", "McNemar p"],
            [
                [c.run, c.cell, c.group, str(c.effect.n_items), _acc(c.vision), _acc(c.standard),
                 _pp(c.effect.estimate), f"[{_pp(c.effect.low)}, {_pp(c.effect.high)}]",
                 _p(c.effect.pvalue)]
                for c in reading.conditional
            ],
        )
    )  # fmt: skip
    if reading.ocr_gains:
        out.append(
            ("gain of the ocr_then_answer prompt", EFFECT_HEADER, effect_rows(reading.ocr_gains))
        )
    return out
