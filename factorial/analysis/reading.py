"""Reading versus reasoning: how a model's transcription of an image goes with its answer.

A *run* is one model answering with one prompt (`model · direct`). Its
readings are the model's transcripts of the same condition images: from
`predict --task transcribe`, or, for an `ocr_then_answer` run, the transcript
block of its own replies. Request failures have neither a reading nor an
answer and are left out of everything here (the accuracy tables count them
as wrong).

* Transcription table: per model, reading source and cell, the mean
  accuracy (whole item, stem, options) with bootstrap CIs, the share read at
  the threshold, critical-token misses by kind and prose-only misreads.
* Item level, per run: point-biserial r of reading accuracy and correctness
  and a logistic fit, both with bootstrap CIs over conditions; pooled over the
  models that share a prompt (bootstrap over items, each item's rows kept
  together); across models (one point per model) when three or more share it.
* Accuracy conditional on reading, per run and image cell: items read at the
  threshold versus below, each against the same run's standard cell on the
  same items (paired bootstrap CI, McNemar).
* The gain of `ocr_then_answer` over `direct` and `cot` per model and image
  cell, paired over items, with McNemar.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from itemshot.factorial.analysis.association import (
    Correlation,
    LogisticFit,
    MeanScore,
    across_groups,
    item_association,
    mean_score,
)
from itemshot.factorial.analysis.stats import Accuracy, Effect, accuracy, paired_effect
from itemshot.factorial.analysis.transcripts import CRITICAL_REASONS, Reading
from itemshot.factorial.design.cells import cell_id
from itemshot.factorial.design.sweep import IMAGE_FORMATS, SweepRow

DEFAULT_THRESHOLD = 0.95
TRANSCRIBE_SOURCE = "transcribe"
OCR_MODE = "ocr_then_answer"
CRITICAL_KINDS = tuple(CRITICAL_REASONS.values())
ACROSS_MODELS_MINIMUM = 3  # with two points a correlation is ±1 whatever the data


class Answered(Protocol):
    """A parsed prediction as the analysis joins it (see `analysis.ScoredPrediction`)."""

    row: SweepRow
    correct: bool
    failed_request: bool
    model: str
    mode: str


@dataclass(frozen=True)
class TranscriptionCell:
    """Transcription accuracy of one model in one cell, from one reading source."""

    model: str
    source: str
    cell: str
    accuracy: MeanScore
    question: MeanScore
    options: MeanScore
    read: int
    critical: Mapping[str, int]
    any_critical: int
    prose_only: int
    unscored: int
    verifier: MeanScore | None


@dataclass(frozen=True)
class ModelPoint:
    """One run's mean reading accuracy and answer accuracy over its paired conditions."""

    run: str
    model: str
    mode: str
    reading: MeanScore
    accuracy: Accuracy


@dataclass(frozen=True)
class PairedItem:
    """One condition of a run: its reading accuracy, whether the answer was right."""

    run: str
    condition_id: str
    item_id: str
    cell: str
    reading: float
    correct: bool
    critical_ok: bool


@dataclass(frozen=True)
class ConditionalAccuracy:
    """Image-cell and standard-cell accuracy on the items of one reading group."""

    run: str
    cell: str
    reference: str
    group: str
    vision: Accuracy
    standard: Accuracy
    effect: Effect


@dataclass(frozen=True)
class ReadingResults:
    """Everything the report shows about reading versus reasoning."""

    threshold: float
    transcription: tuple[TranscriptionCell, ...]
    correlations: tuple[Correlation, ...]
    logistic: tuple[LogisticFit, ...]
    across_models: tuple[Correlation, ...]
    points: tuple[ModelPoint, ...]
    conditional: tuple[ConditionalAccuracy, ...]
    ocr_gains: tuple[Effect, ...]
    pairs: tuple[PairedItem, ...]
    readings: tuple[Reading, ...]
    notes: tuple[str, ...] = ()


def cell_of(row: SweepRow) -> str:
    """Return a row's (format, options) group, e.g. `vision·10` (`design.cells.cell_id`)."""
    return cell_id(row.format, row.option_level)


def run_name(model: str, mode: str) -> str:
    """Return the display name of a run: `model · prompt`."""
    return f"{model or '(unnamed)'} · {mode or '(prompt not recorded)'}"


Readings = Mapping[tuple[str, str], Mapping[str, Reading]]  # (model, source) → condition → reading


def _verifier_mean(row: SweepRow, reading: Reading) -> float | None:
    names = ["question", *(field.name for field in reading.options)]
    scores = [row.verify_scores.get(name) for name in names]
    known = [float(s) for s in scores if isinstance(s, int | float)]
    return sum(known) / len(known) if known and len(known) == len(scores) else None


def transcription_table(
    readings: Readings,
    rows: Mapping[str, SweepRow],
    threshold: float,
    n_boot: int,
    seed: int,
) -> list[TranscriptionCell]:
    """Return the transcription accuracy of every (model, source, cell)."""
    out: list[TranscriptionCell] = []
    for (model, source), by_condition in sorted(readings.items()):
        cells: dict[str, list[Reading]] = defaultdict(list)
        for condition, reading in by_condition.items():
            cells[cell_of(rows[condition])].append(reading)
        for cell in sorted(cells):
            group = cells[cell]
            scored = [r for r in group if r.scored]
            below = [r for r in scored if (r.accuracy or 0.0) < threshold]
            verifier = [
                v for r in scored if (v := _verifier_mean(rows[r.condition_id], r)) is not None
            ]
            options = [r.option_accuracy for r in scored if r.option_accuracy is not None]
            out.append(
                TranscriptionCell(
                    model=model,
                    source=source,
                    cell=cell,
                    accuracy=mean_score([r.accuracy or 0.0 for r in scored], n_boot, seed),
                    question=mean_score([r.question or 0.0 for r in scored], n_boot, seed),
                    options=mean_score(options, n_boot, seed),
                    read=len(scored) - len(below),
                    critical={k: sum(1 for r in scored if r.missed(k)) for k in CRITICAL_KINDS},
                    any_critical=sum(1 for r in scored if not r.critical_ok),
                    prose_only=sum(1 for r in below if r.critical_ok),
                    unscored=len(group) - len(scored),
                    verifier=mean_score(verifier, n_boot, seed)
                    if len(verifier) == len(scored) and verifier
                    else None,
                )
            )
    return out


def _reading_for(prediction: Answered, readings: Readings) -> Reading | None:
    """Return the reading behind a prediction: an ocr_then_answer run's own block, else the
    model's transcription of the same image."""
    source = OCR_MODE if prediction.mode == OCR_MODE else TRANSCRIBE_SOURCE
    reading = readings.get((prediction.model, source), {}).get(prediction.row.job_key)
    return reading if reading is not None and reading.scored else None


def paired_items(runs: Mapping[str, Sequence[Answered]], readings: Readings) -> list[PairedItem]:
    """Return every image-format condition of every run that has a reading and an answer."""
    pairs: list[PairedItem] = []
    for run, predictions in runs.items():
        for prediction in predictions:
            row = prediction.row
            if row.format not in IMAGE_FORMATS or prediction.failed_request:
                continue
            reading = _reading_for(prediction, readings)
            if reading is None or reading.accuracy is None:
                continue
            pairs.append(
                PairedItem(
                    run, row.job_key, row.item_id, cell_of(row), reading.accuracy,
                    prediction.correct, reading.critical_ok,
                )
            )  # fmt: skip
    return pairs


def _item_level(
    runs: Mapping[str, Sequence[Answered]], pairs: Sequence[PairedItem], n_boot: int, seed: int
) -> tuple[list[Correlation], list[LogisticFit], list[Correlation], list[ModelPoint]]:
    by_run: dict[str, list[PairedItem]] = defaultdict(list)
    for pair in pairs:
        by_run[pair.run].append(pair)
    correlations: list[Correlation] = []
    fits: list[LogisticFit] = []
    points: list[ModelPoint] = []
    by_mode: dict[str, dict[str, list[PairedItem]]] = defaultdict(dict)
    for run, group in sorted(by_run.items()):
        scores = [p.reading for p in group]
        outcomes = [p.correct for p in group]
        correlation, fit = item_association(run, scores, outcomes, n_boot, seed)
        correlations.append(correlation)
        fits.append(fit)
        first = runs[run][0]
        points.append(
            ModelPoint(run, first.model, first.mode, mean_score(scores, n_boot, seed),
                       accuracy(outcomes))
        )  # fmt: skip
        by_mode[first.mode][first.model] = group
    across: list[Correlation] = []
    for mode, models in sorted(by_mode.items()):
        if len(models) < 2:  # one model: nothing to pool or compare
            continue
        pooled = [p for group in models.values() for p in group]
        name = f"all models · {mode} (pooled)"
        scores = [p.reading for p in pooled]
        outcomes = [p.correct for p in pooled]
        clusters = [p.item_id for p in pooled]
        correlation, fit = item_association(name, scores, outcomes, n_boot, seed, clusters)
        correlations.append(correlation)
        fits.append(fit)
        table = {
            model: {p.condition_id: (p.reading, p.correct) for p in group}
            for model, group in models.items()
        }
        if len(models) >= ACROSS_MODELS_MINIMUM:
            across.append(across_groups(f"across models · {mode}", table, n_boot, seed))
    return correlations, fits, across, points


def _first_per_item(predictions: Iterable[Answered]) -> dict[str, Answered]:
    first: dict[str, Answered] = {}
    for prediction in predictions:
        first.setdefault(prediction.row.item_id, prediction)
    return first


def conditional_accuracy(
    runs: Mapping[str, Sequence[Answered]],
    readings: Readings,
    at_reference: Callable[[SweepRow], bool],
    threshold: float,
    n_boot: int,
    seed: int,
) -> list[ConditionalAccuracy]:
    """Return image-cell versus standard-cell accuracy on items read well, badly, and all."""
    out: list[ConditionalAccuracy] = []
    for run, predictions in runs.items():
        usable = [p for p in predictions if not p.failed_request and at_reference(p.row)]
        cells: dict[tuple[str, int], list[Answered]] = defaultdict(list)
        for prediction in usable:
            cells[(prediction.row.format, prediction.row.option_level)].append(prediction)
        for (fmt, n), group in sorted(cells.items()):
            standard = cells.get(("standard", n))
            if fmt not in IMAGE_FORMATS or not standard:
                continue
            reference = {item: p.correct for item, p in _first_per_item(standard).items()}
            read: dict[str, bool] = {}
            misread: dict[str, bool] = {}
            for prediction in group:
                item = prediction.row.item_id
                reading = _reading_for(prediction, readings)
                if reading is None or reading.accuracy is None or item in read or item in misread:
                    continue
                target = read if reading.accuracy >= threshold else misread
                target[item] = prediction.correct
            cell = f"{fmt}·{n}"
            groups = (
                ("all with a reading", {**read, **misread}),
                (f"read ≥ {threshold:g}", read),
                (f"read < {threshold:g}", misread),
            )
            for label, outcomes in groups:
                common = sorted(set(outcomes) & set(reference))
                effect = paired_effect(
                    f"{run}: {cell} − standard·{n}, {label}", outcomes, reference, n_boot, seed
                )
                out.append(
                    ConditionalAccuracy(
                        run, cell, f"standard·{n}", label,
                        accuracy(outcomes[i] for i in common),
                        accuracy(reference[i] for i in common),
                        effect,
                    )
                )  # fmt: skip
    return out


def _cell_outcomes(predictions: Iterable[Answered], fmt: str, n: int) -> dict[str, bool]:
    chosen = (p for p in predictions if p.row.format == fmt and p.row.option_level == n)
    return {item: p.correct for item, p in _first_per_item(chosen).items()}


def ocr_gains(
    runs: Mapping[str, Sequence[Answered]],
    at_reference: Callable[[SweepRow], bool],
    n_boot: int,
    seed: int,
) -> list[Effect]:
    """Return ocr_then_answer minus direct and minus cot, per model and image cell, paired."""
    by_model: dict[str, dict[str, list[Answered]]] = defaultdict(dict)
    for predictions in runs.values():
        first = predictions[0]
        by_model[first.model][first.mode] = [p for p in predictions if at_reference(p.row)]
    effects: list[Effect] = []
    for model, modes in sorted(by_model.items()):
        ocr = modes.get(OCR_MODE)
        if ocr is None:
            continue
        ocr_cells = {(p.row.format, p.row.option_level) for p in ocr}
        for baseline in ("direct", "cot"):
            other = modes.get(baseline)
            if other is None:
                continue
            cells = ocr_cells & {(p.row.format, p.row.option_level) for p in other}
            for fmt, n in sorted(cells):
                if fmt not in IMAGE_FORMATS:
                    continue
                effects.append(
                    paired_effect(
                        f"{model}: {fmt}·{n} {OCR_MODE} − {baseline}",
                        _cell_outcomes(ocr, fmt, n),
                        _cell_outcomes(other, fmt, n),
                        n_boot,
                        seed,
                    )
                )
    return effects


def analyze_reading(
    runs: Mapping[str, Sequence[Answered]],
    readings: Readings,
    rows: Mapping[str, SweepRow],
    at_reference: Callable[[SweepRow], bool],
    threshold: float = DEFAULT_THRESHOLD,
    n_boot: int = 2000,
    seed: int = 0,
) -> ReadingResults:
    """Return the reading-versus-reasoning analysis of each run's predictions and the readings."""
    scored = [p for predictions in runs.values() for p in predictions]
    pairs = paired_items(runs, readings)
    correlations, fits, across, points = _item_level(runs, pairs, n_boot, seed)
    notes = []
    failed = sum(1 for p in scored if p.failed_request and p.row.format in IMAGE_FORMATS)
    if failed:
        notes.append(f"reading analysis: {failed} image-format request errors left out")
    unread = sum(
        1
        for p in scored
        if p.row.format in IMAGE_FORMATS
        and not p.failed_request
        and _reading_for(p, readings) is None
    )
    if unread:
        notes.append(f"reading analysis: {unread} answered image conditions have no reading")
    modes: dict[str, set[str]] = defaultdict(set)
    for point in points:
        modes[point.mode].add(point.model)
    for mode, models in sorted(modes.items()):
        if 1 < len(models) < ACROSS_MODELS_MINIMUM:
            notes.append(
                f"across-model correlation ({mode}) needs {ACROSS_MODELS_MINIMUM} or more models, "
                f"have {len(models)}: see the pooled item-level row and the per-run points"
            )
    return ReadingResults(
        threshold=threshold,
        transcription=tuple(transcription_table(readings, rows, threshold, n_boot, seed)),
        correlations=tuple(correlations),
        logistic=tuple(fits),
        across_models=tuple(across),
        points=tuple(points),
        conditional=tuple(
            conditional_accuracy(runs, readings, at_reference, threshold, n_boot, seed)
        ),
        ocr_gains=tuple(ocr_gains(runs, at_reference, n_boot, seed)),
        pairs=tuple(pairs),
        readings=tuple(r for _, group in sorted(readings.items()) for r in group.values()),
        notes=tuple(notes),
    )
