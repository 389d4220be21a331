"""Join predictions with their output sets, parse the answers and compute the statistics.

Predictions are grouped into runs, one per model and prompt (`m · direct`),
and each run is analysed on its own. A cell is a condition, named once for
the analysis and every export (`design.cells`: `vision·10·font_style=mono`);
the per-cell table shows each one with the options its rows really show.
Contrasts group cells by (format, number of options). The 2×2 uses the
standard and vision groups at 4 and 10 options with every other factor at
its reference level, and says which levels those are. Presentation factors
come from each row's `condition` (or, when no row has one, from its scalar
`presentation` fields); a factor's reference level is its most common level,
and each other level is compared one at a time with the baseline rows (every
factor at its reference) on the same items. Replies to the `ocr_then_answer` prompt are parsed after
their transcript block; with transcripts (`predict --task transcribe`) or
such replies, the reading analysis (`reading.py`) is added.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from itemshot.factorial.analysis.cost import CellCost, Request, cell_costs, image_size, sent_images
from itemshot.factorial.analysis.effects import Observation, SweepEffects, sweep_effects
from itemshot.factorial.analysis.reading import (
    DEFAULT_THRESHOLD,
    OCR_MODE,
    TRANSCRIBE_SOURCE,
    ReadingResults,
    Readings,
    analyze_reading,
    run_name,
)
from itemshot.factorial.analysis.scoring import read_jsonl
from itemshot.factorial.analysis.stats import (
    Accuracy,
    Decomposition,
    Effect,
    GroupAccuracy,
    ablation_effects,
    accuracy,
    blind_gap,
    decompose_2x2,
    group_accuracies,
)
from itemshot.factorial.analysis.transcripts import (
    Reading,
    score_transcript,
    split_ocr_answer,
    transcript_of,
    unscored,
)
from itemshot.factorial.answers.prompts import prompt_mode
from itemshot.factorial.answers.registry import get_parser
from itemshot.factorial.design.cells import NOT_FACTORS, cell_factors, cell_id
from itemshot.factorial.design.confounds import read_confounds
from itemshot.factorial.design.sweep import SweepRow, read_manifest

_SHORT = {"standard": "S", "vision": "V"}
_NOT_FACTORS = NOT_FACTORS
_FORMAT_ORDER = ("blind", "standard", "vision")


@dataclass(frozen=True)
class ScoredPrediction:
    """One prediction joined with its manifest row and parsed."""

    row: SweepRow
    letter: str | None
    correct: bool
    fallback: bool
    reason: str
    failed_request: bool
    model: str = ""
    mode: str = ""
    transcript: str | None = None  # an ocr_then_answer reply's transcript block
    usage: Mapping[str, Any] = field(default_factory=dict)  # the API's token usage, as recorded


@dataclass(frozen=True)
class Shown:
    """How many options a cell's rows really show: fewest, median and most."""

    min: int
    median: float
    max: int

    def __str__(self) -> str:
        """Return `4/9/10`, or `10` when every row shows the same number."""
        if self.min == self.max:
            return str(self.min)
        return f"{self.min}/{self.median:g}/{self.max}"


def shown_options(rows: Iterable[SweepRow]) -> Shown:
    """Return the fewest, median and most options the rows show."""
    counts = [row.n_options for row in rows]
    return Shown(min(counts), float(statistics.median(counts)), max(counts))


@dataclass(frozen=True)
class CellSummary:
    """Accuracy of one cell (a condition) with its unparsed, fallback and error counts.

    `n_options` is the design's option level (4, 10 or `all`); `shown` the
    options its rows really show (an item with fewer options shows them all).
    """

    label: str
    format: str
    n_options: int | str
    accuracy: Accuracy
    unparsed: int
    fallback: int
    request_errors: int
    factors: Mapping[str, str] = field(default_factory=dict)
    shown: Shown | None = None


@dataclass(frozen=True)
class TwoByTwoBasis:
    """What the 2×2 measured: the level each other factor is held at, and the options shown.

    `levels` is empty when no other factor varies within the 2×2's cells;
    `shown` is keyed `S4`, `S10`, `V4`, `V10`.
    """

    levels: Mapping[str, str]
    shown: Mapping[str, Shown]


@dataclass(frozen=True)
class RunAnalysis:
    """One run's accuracy analysis: one model answering with one prompt."""

    run: str
    model: str
    prompt: str
    n_predictions: int
    cells: tuple[CellSummary, ...]
    decomposition: Decomposition | None
    ablations: tuple[Effect, ...]
    blind_gaps: tuple[Effect, ...]
    subjects: Mapping[str, tuple[GroupAccuracy, ...]]
    scenes: Mapping[str, tuple[GroupAccuracy, ...]]
    references: Mapping[str, str]
    two_by_two: TwoByTwoBasis | None = None  # what the 2×2 (decomposition) held fixed
    model_effects: SweepEffects | None = None  # every factor in one model, p adjusted
    costs: tuple[CellCost, ...] = ()  # image tokens per cell (per level of each factor)


@dataclass(frozen=True)
class AnalysisResults:
    """Everything the report shows: each run's analysis and the reading analysis."""

    parser: str
    models: tuple[str, ...]
    n_predictions: int
    runs: tuple[RunAnalysis, ...]
    reading: ReadingResults | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    # (set name, confound record) of each output set whose sweep wrote one.
    confounds: tuple[tuple[str, Mapping[str, Any]], ...] = ()

    def run(self, name: str) -> RunAnalysis:
        """Return the run called `name` (`model · prompt`)."""
        for run in self.runs:
            if run.run == name:
                return run
        raise KeyError(name)


def cell_label(fmt: str, n_options: int | str) -> str:
    """Return the name of a (format, options) group: the cell name without other factors."""
    return cell_id(fmt, n_options)


def load_rows(sets: Sequence[Path]) -> tuple[dict[str, SweepRow], list[str]]:
    """Return manifest rows of all output sets by job key, and notes on skipped rows."""
    rows: dict[str, SweepRow] = {}
    notes: list[str] = []
    for out in sets:
        manifest = read_manifest(out)
        notes += [f"{out.name}: skipped {reason}" for reason in manifest.skipped]
        for row in manifest.rows:
            rows[row.job_key] = row
    return rows, notes


def score_predictions(
    predictions: Iterable[Mapping[str, Any]],
    rows: Mapping[str, SweepRow],
    parser: str,
    seed: int = 0,
) -> tuple[list[ScoredPrediction], list[str]]:
    """Return predictions joined with their rows and parsed, and notes on those left out."""
    parse = get_parser(parser, seed)
    scored: list[ScoredPrediction] = []
    notes: list[str] = []
    unknown = 0
    for record in predictions:
        key = str(record.get("condition_id") or record.get("job_key") or "")
        row = rows.get(key)
        if row is None:
            unknown += 1
            continue
        response = record.get("response")
        failed = response is None or record.get("error") is not None
        text = response if isinstance(response, str) else ""
        mode = prompt_mode(str(record.get("prompt") or ""))
        transcript = None
        if mode == OCR_MODE:
            transcript, text = split_ocr_answer(text)
        result = parse(text, row.options, key)
        usage = record.get("usage")
        scored.append(
            ScoredPrediction(
                row,
                result.letter,
                (not failed) and result.letter == row.answer,
                result.fallback,
                "request_error" if failed else result.reason,
                failed,
                str(record.get("model") or ""),
                mode,
                transcript,
                usage if isinstance(usage, dict) else {},
            )
        )
    if unknown:
        notes.append(f"{unknown} predictions name conditions missing from the output sets")
    return scored, notes


def _first_per_item(scored: Iterable[ScoredPrediction]) -> dict[str, bool]:
    outcomes: dict[str, bool] = {}
    for prediction in scored:
        outcomes.setdefault(prediction.row.item_id, prediction.correct)
    return outcomes


def _by_cell(scored: Sequence[ScoredPrediction]) -> dict[tuple[str, int], list[ScoredPrediction]]:
    cells: dict[tuple[str, int], list[ScoredPrediction]] = defaultdict(list)
    for prediction in scored:
        cells[(prediction.row.format, prediction.row.option_level)].append(prediction)
    return cells


def _cell_order(row: SweepRow) -> tuple[Any, ...]:
    """Sort key of a row's cell: format (control order), option level, other factors."""
    fmt = row.format
    level = row.condition.get("n_options", row.option_level)
    return (
        _FORMAT_ORDER.index(fmt) if fmt in _FORMAT_ORDER else len(_FORMAT_ORDER),
        fmt,
        (0, level, "") if isinstance(level, int) else (1, 0, str(level)),
        tuple(cell_factors(row.condition).items()),
    )


def by_condition(scored: Iterable[ScoredPrediction]) -> dict[str, list[ScoredPrediction]]:
    """Return the predictions of each cell (`SweepRow.cell`), cells in display order."""
    cells: dict[str, list[ScoredPrediction]] = defaultdict(list)
    for prediction in sorted(scored, key=lambda p: _cell_order(p.row)):
        cells[prediction.row.cell].append(prediction)
    return dict(cells)


def _summaries(scored: Sequence[ScoredPrediction]) -> list[CellSummary]:
    summaries = []
    for label, group in by_condition(scored).items():
        row = group[0].row
        summaries.append(
            CellSummary(
                label,
                row.format,
                row.condition.get("n_options", row.option_level),
                accuracy(p.correct for p in group),
                sum(1 for p in group if p.letter is None and not p.failed_request),
                sum(1 for p in group if p.fallback),
                sum(1 for p in group if p.failed_request),
                cell_factors(row.condition),
                shown_options(p.row for p in group),
            )
        )
    return summaries


def _factors(row: SweepRow, use_condition: bool) -> dict[str, str]:
    source = row.condition if use_condition else row.presentation
    return {
        str(name): str(value)
        for name, value in source.items()
        if name not in _NOT_FACTORS and isinstance(value, str | int | float | bool)
    }


def _at_reference(factors: Mapping[str, str], reference: Mapping[str, str], free: str) -> bool:
    return all(
        factors.get(name, level) == level for name, level in reference.items() if name != free
    )


def _uses_condition(cells: Mapping[tuple[str, int], list[ScoredPrediction]]) -> bool:
    return any(p.row.condition for group in cells.values() for p in group)


def reference_levels(cells: Mapping[tuple[str, int], list[ScoredPrediction]]) -> dict[str, str]:
    """Return each varying factor's reference: its most common level over all rows."""
    use_condition = _uses_condition(cells)
    levels: dict[str, Counter[str]] = defaultdict(Counter)
    for group in cells.values():
        for prediction in group:
            for name, value in _factors(prediction.row, use_condition).items():
                levels[name][value] += 1
    return {name: counts.most_common(1)[0][0] for name, counts in levels.items() if len(counts) > 1}


def _ablations(
    cells: Mapping[tuple[str, int], list[ScoredPrediction]],
    reference: Mapping[str, str],
    n_boot: int,
    seed: int,
) -> list[Effect]:
    use_condition = _uses_condition(cells)
    effects: list[Effect] = []
    for (fmt, n), group in sorted(cells.items()):
        factor_rows = [(p, _factors(p.row, use_condition)) for p in group]
        for name in sorted(reference):
            levels = sorted({f[name] for _, f in factor_rows if name in f})
            if len(levels) < 2 or reference[name] not in levels:
                continue
            outcomes = {
                level: _first_per_item(
                    p
                    for p, factors in factor_rows
                    if factors.get(name) == level and _at_reference(factors, reference, name)
                )
                for level in levels
            }
            found = ablation_effects(
                outcomes, reference[name], f"{cell_label(fmt, n)} {name}", n_boot, seed
            )
            effects += [effect for effect in found if effect.n_items]
    return effects


def _baseline(
    group: Iterable[ScoredPrediction], reference: Mapping[str, str], use_condition: bool
) -> list[ScoredPrediction]:
    return [p for p in group if _at_reference(_factors(p.row, use_condition), reference, "")]


def _decomposition(
    cells: Mapping[tuple[str, int], list[ScoredPrediction]],
    reference: Mapping[str, str],
    n_boot: int,
    seed: int,
) -> tuple[Decomposition | None, list[str]]:
    wanted = {f"{_SHORT[fmt]}{n}": (fmt, n) for fmt in ("standard", "vision") for n in (4, 10)}
    missing = [name for name, key in wanted.items() if key not in cells]
    if missing:
        return None, [f"2×2 not computed: no predictions for {', '.join(missing)}"]
    use_condition = _uses_condition(cells)
    baseline = {
        name: _baseline(cells[key], reference, use_condition) for name, key in wanted.items()
    }
    outcomes = {name: _first_per_item(rows) for name, rows in baseline.items()}
    notes = []
    for name, rows in baseline.items():
        extra = len(rows) - len(outcomes[name])
        if extra:
            notes.append(f"2×2 cell {name}: {extra} repeated rows of an item ignored")
    result = decompose_2x2(outcomes, n_boot, seed)
    if result.n_items == 0:
        return None, ["2×2 not computed: no item appears in all four cells"]
    return result, notes


def two_by_two_basis(
    cells: Mapping[tuple[str, int], list[ScoredPrediction]], reference: Mapping[str, str]
) -> TwoByTwoBasis:
    """Return the levels the 2×2 holds its other factors at, and the options its rows show."""
    wanted = {f"{_SHORT[fmt]}{n}": (fmt, n) for fmt in ("standard", "vision") for n in (4, 10)}
    use_condition = _uses_condition(cells)
    held: dict[str, str] = {}
    shown: dict[str, Shown] = {}
    for name, key in wanted.items():
        group = cells.get(key, [])
        for factor, level in reference.items():
            levels = {_factors(p.row, use_condition).get(factor) for p in group} - {None}
            if len(levels) > 1:
                held[factor] = level
        baseline = _baseline(group, reference, use_condition)
        if baseline:
            shown[name] = shown_options(p.row for p in baseline)
    return TwoByTwoBasis(dict(sorted(held.items())), shown)


def _blind_gaps(
    cells: Mapping[tuple[str, int], list[ScoredPrediction]],
    reference: Mapping[str, str],
    n_boot: int,
    seed: int,
) -> list[Effect]:
    """Return each group's gap over the blind cell, its other factors at their reference."""
    use_condition = _uses_condition(cells)
    gaps = []
    for (fmt, n), group in sorted(cells.items()):
        blind = cells.get(("blind", n))
        if fmt == "blind" or not blind:
            continue
        baseline = _baseline(group, reference, use_condition)
        blind_baseline = _baseline(blind, reference, use_condition)
        if not baseline or not blind_baseline:
            continue
        effect = blind_gap(
            _first_per_item(baseline),
            _first_per_item(blind_baseline),
            n_boot,
            seed,
            name=f"{baseline[0].row.cell} − {blind_baseline[0].row.cell}",
        )
        if effect.n_items:
            gaps.append(effect)
    return gaps


def _scene(row: SweepRow) -> str:
    for name in ("scene", "layout"):
        value = row.factor(name)
        if isinstance(value, str) and value:
            return value
    return "(none)"


def load_readings(
    transcript_paths: Sequence[Path],
    rows: Mapping[str, SweepRow],
    scored: Sequence[ScoredPrediction],
) -> tuple[dict[tuple[str, str], dict[str, Reading]], list[str]]:
    """Return every model's scored readings: transcription records and ocr_then_answer blocks."""
    readings: dict[tuple[str, str], dict[str, Reading]] = defaultdict(dict)
    unknown = repeated = 0
    for path in transcript_paths:
        for record in read_jsonl(path):
            row = rows.get(str(record.get("condition_id") or ""))
            if row is None:
                unknown += 1
                continue
            model = str(record.get("model") or "")
            response = record.get("response")
            if response is None or record.get("error") is not None:
                reading = unscored(row, model, TRANSCRIBE_SOURCE, "request_error")
            else:
                reading = score_transcript(row, transcript_of(str(response)), model)
            repeated += row.job_key in readings[(model, TRANSCRIBE_SOURCE)]
            readings[(model, TRANSCRIBE_SOURCE)][row.job_key] = reading
    for prediction in scored:
        if prediction.mode != OCR_MODE or prediction.row.image is None:
            continue
        row, model = prediction.row, prediction.model
        if prediction.failed_request:
            reading = unscored(row, model, OCR_MODE, "request_error")
        elif prediction.transcript is None:
            reading = unscored(row, model, OCR_MODE, "no_transcript")
        else:
            reading = score_transcript(row, prediction.transcript, model, OCR_MODE)
        readings[(model, OCR_MODE)][row.job_key] = reading
    notes = (
        [f"{unknown} transcripts name conditions missing from the output sets"] if unknown else []
    )
    return dict(readings), notes


def _model_effects(
    cells: Mapping[tuple[str, int], list[ScoredPrediction]],
    reference: Mapping[str, str],
    n_boot: int,
    seed: int,
) -> SweepEffects | None:
    """Return every cell's one model of correctness on all varying factors (items clustered)."""
    if not reference:
        return None
    use_condition = _uses_condition(cells)
    observations = [
        Observation(
            cell_label(fmt, n),
            p.row.item_id,
            {k: v for k, v in _factors(p.row, use_condition).items() if k in reference},
            p.correct,
        )
        for (fmt, n), group in sorted(cells.items())
        for p in group
    ]
    found = sweep_effects(observations, reference, n_boot=n_boot, seed=seed)
    return found if found.effects else None


def _costs(
    cells: Mapping[tuple[str, int], list[ScoredPrediction]], reference: Mapping[str, str]
) -> tuple[CellCost, ...]:
    """Return image tokens per cell and factor level (billed, and estimated from image sizes)."""
    use_condition = _uses_condition(cells)
    sizes: dict[Path, tuple[int, int] | None] = {}

    def size(path: Path) -> tuple[int, int] | None:
        if path not in sizes:
            try:
                sizes[path] = image_size(path)
            except OSError:  # a missing or unreadable image: no estimate for it
                sizes[path] = None
        return sizes[path]

    requests = []
    for _, group in sorted(cells.items()):
        for p in group:
            factors = _factors(p.row, use_condition)
            away = [k for k in sorted(reference) if k in factors and factors[k] != reference[k]]
            label = p.row.cell  # the cell's one name (`design.cells`)
            images = sent_images(p.row.format, p.row.image, p.row.figures)
            found = tuple(s for s in (size(path) for path in images) if s is not None)
            requests.append(
                Request(label, found, p.usage, p.model, p.correct, "+".join(away),
                        "+".join(factors[k] for k in away))
            )  # fmt: skip
    return tuple(cell_costs(requests))


def analyze_run(
    name: str, scored: Sequence[ScoredPrediction], n_boot: int, seed: int
) -> tuple[RunAnalysis, list[str]]:
    """Return the accuracy analysis of one run's predictions, and notes on what was left out."""
    cells = _by_cell(scored)
    references = reference_levels(cells)
    decomposition, notes = _decomposition(cells, references, n_boot, seed)
    conditions = by_condition(scored)
    subjects = {
        cell: tuple(group_accuracies((p.row.subject or "(none)", p.correct) for p in group))
        for cell, group in conditions.items()
    }
    scenes = {
        cell: tuple(group_accuracies((_scene(p.row), p.correct) for p in group))
        for cell, group in conditions.items()
    }
    model = _model_effects(cells, references, n_boot, seed)
    first = scored[0]
    run = RunAnalysis(
        run=name,
        model=first.model,
        prompt=first.mode,
        n_predictions=len(scored),
        cells=tuple(_summaries(scored)),
        decomposition=decomposition,
        ablations=tuple(_ablations(cells, references, n_boot, seed)),
        blind_gaps=tuple(_blind_gaps(cells, references, n_boot, seed)),
        subjects=subjects,
        scenes=scenes,
        references=references,
        two_by_two=two_by_two_basis(cells, references) if decomposition else None,
        model_effects=model,
        costs=_costs(cells, references),
    )
    if model is not None:
        notes += list(model.notes)
    return run, notes


def analyze(
    prediction_paths: Sequence[Path],
    sets: Sequence[Path],
    parser: str = "strict",
    n_boot: int = 2000,
    seed: int = 0,
    transcripts: Sequence[Path] = (),
    read_threshold: float = DEFAULT_THRESHOLD,
) -> AnalysisResults:
    """Return the full analysis of predictions (and transcripts) against their output sets."""
    rows, notes = load_rows(sets)
    predictions: list[dict[str, Any]] = []
    for path in prediction_paths:
        predictions += read_jsonl(path)
    scored, join_notes = score_predictions(predictions, rows, parser, seed)
    if not scored and not transcripts:
        raise ValueError("no prediction matches a row of the output sets")
    notes += join_notes
    groups: dict[str, list[ScoredPrediction]] = defaultdict(list)
    for prediction in scored:
        groups[run_name(prediction.model, prediction.mode)].append(prediction)
    runs = []
    for name in sorted(groups):
        run, run_notes = analyze_run(name, groups[name], n_boot, seed)
        runs.append(run)
        prefix = f"{name}: " if len(groups) > 1 else ""
        notes += [prefix + note for note in run_notes]
    readings: Readings
    readings, reading_notes = load_readings(transcripts, rows, scored)
    if not scored and not readings:
        raise ValueError("no prediction or transcript matches a row of the output sets")
    reading = None
    if readings:
        every_cell = _by_cell(scored)
        use_condition = _uses_condition(every_cell)
        shared = reference_levels(every_cell)  # runs of one sweep share their reference levels

        def at_reference(row: SweepRow) -> bool:
            return _at_reference(_factors(row, use_condition), shared, "")

        reading = analyze_reading(
            dict(sorted(groups.items())), readings, rows, at_reference, read_threshold, n_boot, seed
        )
        notes += reading_notes + list(reading.notes)
    return AnalysisResults(
        parser=parser,
        models=tuple(sorted({p.model for p in scored})),
        n_predictions=len(scored),
        runs=tuple(runs),
        reading=reading,
        notes=tuple(notes),
        confounds=read_confounds(sets),
    )
