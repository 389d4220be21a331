"""The Python API: the same steps as the command line, as plain calls.

    items = itemshot.load("data.jsonl")
    run = itemshot.render(items, "out", scene=["exam_sheet", "whiteboard"], capture="scan")
    itemshot.export("out", "hf", "export-hf")

Every call takes explicit inputs and a seed, returns a record that prints as
one line, and reads no global state; `progress=False` keeps a call silent.
Each call hands its work to the module that does it (`rendering`,
`generative.render`, `verifying`, `sweeps`, the stages); the command line
calls these and nothing else. Heavy stages (Chromium, OpenCV, tesseract,
google-genai) load on first use.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from itemshot.rendering import PRESENTATION_PARAMETERS, Level, presentation_specs, requests_for
from itemshot.results import Analysis, Items, RunResult, RunStatus, SweepRun, VerifyResult
from itemshot.verifying import SourcesUnavailable, verify_set

if TYPE_CHECKING:
    import numpy as np

    from itemshot.degradations import Captured
    from itemshot.executors.select import ExecutorChoice
    from itemshot.factorial.analysis.power import ContrastPlan, Plan
    from itemshot.factorial.exports.exports import ExportResult
    from itemshot.factorial.predict.predict import PredictSummary
    from itemshot.generative.run import GenerativeOptions
    from itemshot.renderer.backends.nanobanana.cost import Estimate
    from itemshot.renderer.items import Item, ItemError
    from itemshot.renderer.jobs import JobRequest
    from itemshot.renderer.records import Layout
    from itemshot.verify import AuditSummary, Thresholds, Verdict

# The exit statuses as plain ints (`RunStatus` names them).
EXIT_OK = int(RunStatus.OK)
EXIT_USAGE = int(RunStatus.USAGE)
EXIT_SOME_FAILED = int(RunStatus.SOME_FAILED)
EXIT_UNVERIFIED = int(RunStatus.UNVERIFIED)
EXIT_STOPPED = int(RunStatus.STOPPED)  # a system error (disk full, permissions) stopped the run

__all__ = [
    "EXIT_OK",
    "EXIT_SOME_FAILED",
    "EXIT_STOPPED",
    "EXIT_UNVERIFIED",
    "EXIT_USAGE",
    "PRESENTATION_PARAMETERS",
    "Analysis",
    "Items",
    "Level",
    "RunResult",
    "RunStatus",
    "SourcesUnavailable",
    "SweepRun",
    "VerifyResult",
    "analyze",
    "audit",
    "capture",
    "estimate",
    "export",
    "load",
    "predict",
    "presentation_specs",
    "render",
    "requests_for",
    "sample_dataset",
    "sweep",
    "verify",
    "verify_set",
]


def sample_dataset() -> Path:
    """Return the path of the embedded sample dataset (12 items, English and Japanese)."""
    from itemshot.renderer.sample import sample_jsonl

    return sample_jsonl()


def load(
    source: str | Path | Iterable[Mapping[str, Any]],
    format: str | None = None,
    mapping: Mapping[str, str] | None = None,
    *,
    missing_images: str = "fail",
    limit: int | None = None,
    root: str | Path = ".",
    config: str | None = None,
    split: str | None = None,
) -> Items:
    """Read a dataset (a file, a Hub-style folder, a cached Hub id, or rows) into checked items.

    `mapping` maps item fields to columns for the generic layout, as
    `--map` does: `{"question": "prompt", "options": "A,B,C,D", "answer": "label"}`.
    `config` and `split` choose the part of a Hub-style folder or Hub id
    (`"standard (10 options)"`, `"test"`). Rows' figure paths resolve against
    `root`. Raises `DatasetError` when the dataset as a whole is unusable; bad
    rows land in `Items.errors`.
    """
    from itemshot.renderer.adapters import ColumnMapping, load_dataset, load_rows

    columns = ColumnMapping.from_pairs(dict(mapping)) if mapping else None
    if isinstance(source, str | Path):
        dataset = load_dataset(
            source,
            format=format,
            mapping=columns,
            missing_images=missing_images,
            limit=limit,
            config=config,
            split=split,
        )
    else:
        dataset = load_rows(
            source,
            root=root,
            format=format,
            mapping=columns,
            missing_images=missing_images,
            limit=limit,
        )
    return Items(dataset.entries, format=dataset.format, source=str(dataset.path))


def _requests(
    items: Iterable[Item | ItemError | JobRequest], preset: str | None, seed: int, **levels: Level
) -> list[JobRequest | ItemError]:
    """Return the requests of `render`'s entries: each paired with the levels, or by a preset."""
    from itemshot.renderer.presentation import PresentationError

    given = {name: value for name, value in levels.items() if value is not None}
    if preset and given:
        raise PresentationError("preset", "a preset replaces the presentation parameters")
    return requests_for(items, presentation_specs(**given), preset=preset, seed=seed)


def render(
    items: Iterable[Item | ItemError | JobRequest],
    out: str | Path,
    *,
    scene: Level = None,
    font_style: Level = None,
    font_size: Level = None,
    margin: Level = None,
    color: Level = None,
    aspect: Level = None,
    resolution: Level = None,
    capture: Level = None,
    severity: Level = None,
    deliver_size: Level = None,
    preset: str | None = None,
    backend: str = "chromium",
    generative: GenerativeOptions | None = None,
    seed: int = 0,
    workers: int = 2,
    verify: bool = True,
    progress: bool = True,
    executor: ExecutorChoice = None,
    address: str | None = None,
    on_event: Callable[[dict[str, Any]], None] | None = None,
    console: Console | None = None,
) -> RunResult:
    """Render items as vision-only images into `out`, capture and verify them.

    `items` holds items (an `Items` keeps its bad rows in their places),
    requests already paired with a presentation, or both; each entry counts
    for itself, so a bad one costs one item wherever it stands.
    Presentation parameters take a value, a list (every combination) or
    `"random"`; `deliver_size` is the long side of a captured image as the
    model will receive it (default the render's), applied inside the capture
    so its severity is judged at that size; `preset` (`jmmmu_pro`, `mmmu_pro`, `uniform`) chooses the look
    per item instead. `backend` is `chromium`, `nanobanana` or `hybrid`
    (`generative` holds the model options; the key comes from GEMINI_API_KEY).
    `executor` runs the chromium jobs and their verification: `"local"` (the
    default: `workers` browsers here), `"ray"` (`workers` render actors on the
    Ray cluster at `address`, default RAY_ADDRESS, else a single-machine
    instance) or an executor object. The output set is the same either way.
    Jobs already in `out` with the same key are kept, so a killed run resumes.
    Raises `UnusableOutput` before any work when `out` is a file or cannot be
    written (its subclass `FolderBusy`, from `itemshot.renderer.output_lock`,
    when another run is writing into it), `RunStopped` (what was written,
    intact) when a system error such as a full disk stops the run part-way,
    and `RunInterrupted` (a `KeyboardInterrupt`; the finished jobs are in the
    manifest) when interrupted; the last two live in `itemshot.renderer.output`.
    """
    from itemshot.rendering import render_requests

    requests = _requests(
        items, preset, seed, scene=scene, font_style=font_style, font_size=font_size,
        margin=margin, color=color, aspect=aspect, resolution=resolution, capture=capture,
        severity=severity, deliver_size=deliver_size,
    )  # fmt: skip
    return render_requests(
        requests,
        Path(out),
        backend=backend,
        generative=generative,
        seed=seed,
        workers=workers,
        verify=verify,
        progress=progress,
        executor=executor,
        address=address,
        on_event=on_event,
        console=console,
    )


def estimate(
    items: Iterable[Item | ItemError | JobRequest],
    out: str | Path,
    *,
    backend: str = "nanobanana",
    generative: GenerativeOptions | None = None,
    preset: str | None = None,
    seed: int = 0,
    workers: int = 2,
    **levels: Level,
) -> Estimate:
    """Return the model calls and cost `render(..., backend=...)` would make; send nothing."""
    from itemshot.generative.render import estimate_with_model

    requests = _requests(items, preset, seed, **levels)
    return estimate_with_model(requests, Path(out), backend, generative, seed=seed, workers=workers)


def capture(
    image: bytes | np.ndarray,
    preset: str,
    severity: str = "medium",
    seed: int = 0,
    *,
    layout: Layout | None = None,
    deliver_size: int | None = None,
) -> Captured:
    """Simulate capturing a clean image (screenshot, phone photo, scan), replayably.

    The result holds the encoded image, every sampled parameter, and the
    layout's regions mapped into the captured pixels when `layout` is given
    (light and medium then hold its measured text at the readable floor).
    Its long side is `deliver_size` (default: the clean image's).
    """
    from itemshot.degradations import capture as apply_capture
    from itemshot.degradations import capture_layout

    if layout is None:
        return apply_capture(image, (), preset, severity, seed, deliver_size)
    return capture_layout(image, layout, preset, severity, seed, deliver_size)[0]


def verify(
    target: str | Path | bytes | np.ndarray,
    items: Sequence[Item | ItemError] | None = None,
    *,
    layout: Layout | None = None,
    thresholds: Thresholds | None = None,
    workers: int | None = None,
    progress: bool = True,
    executor: ExecutorChoice = None,
    address: str | None = None,
) -> VerifyResult | Verdict:
    """Verify an output set (a folder) or one image against its item.

    For a folder, every rendered image is checked against its item and the
    verdicts are written into its manifest, `audit.json` and `audit.html`.
    With `items` (the dataset), each image is checked against its source item
    with the options the image shows, and `SourcesUnavailable` names the
    items that are missing from them; without, against the text stored with
    each image. For one image, pass `items=[item]`; with a `layout` record the
    regions are read one by one, without one the whole image is read and
    aligned. A folder's images can be checked on a Ray cluster:
    `executor="ray"` (and `address`), as for `render`.
    """
    from itemshot.verifying import verify_one

    if isinstance(target, str | Path) and Path(target).is_dir():
        return verify_set(
            Path(target),
            items,
            thresholds=thresholds,
            workers=workers,
            progress=progress,
            executor=executor,
            address=address,
        )
    return verify_one(target, items, layout=layout, thresholds=thresholds)  # type: ignore[arg-type]


def audit(
    images: str | Path,
    items: str | Path,
    *,
    match: str = "filename",
    pattern: str | None = None,
    out: str | Path | None = None,
    thresholds: Thresholds | None = None,
    workers: int | None = None,
    on_progress: Callable[[], None] | None = None,
) -> tuple[AuditSummary, list[Verdict]]:
    """Audit a folder of images made elsewhere against a dataset (no layout record).

    Images pair with items by file name pattern (`{n}` the 1-based dataset
    line, `{id}` the item id), natural order, or the folder's manifest.
    """
    from itemshot.renderer.adapters import load_dataset
    from itemshot.verify import audit_images
    from itemshot.verify.pairing import DEFAULT_PATTERN

    return audit_images(
        Path(images),
        load_dataset(items),
        match=match,
        pattern=pattern or DEFAULT_PATTERN,
        out=Path(out) if out is not None else None,
        thresholds=thresholds,
        workers=workers,
        on_progress=on_progress,
    )


def sweep(
    design: str | Path,
    out: str | Path | None = None,
    *,
    dataset: str | Path | None = None,
    limit: int | None = None,
    config: str | None = None,
    split: str | None = None,
    workers: int = 2,
    verify: bool | None = None,
    progress: bool = True,
    executor: ExecutorChoice = None,
    address: str | None = None,
    console: Console | None = None,
) -> SweepRun:
    """Run a factorial design file end to end: plan, check balance, render, write the manifest.

    `executor` and `address` choose where the jobs run, as for `render`.
    Re-running renders only what is new. `dataset` (a path relative to the
    current directory, a Hub id or `itemshot:sample`) replaces the design's
    `dataset.path`; `config` and `split` override the design's choice of a
    Hub-style dataset's part. `verify` (None: the design's `verify`) checks
    every image against its source item with the options its condition shows. Raises `DesignError` or
    `DatasetError` when the design or its dataset is unusable.
    """
    from itemshot.sweeps import sweep_design

    return sweep_design(
        design,
        out,
        dataset=dataset,
        limit=limit,
        config=config,
        split=split,
        workers=workers,
        verify=verify,
        progress=progress,
        executor=executor,
        address=address,
        console=console,
    )


def export(
    out: str | Path,
    to: str,
    dest: str | Path,
    *,
    name: str | None = None,
    rejected: str = "leave-out",
    certified: bool = False,
) -> ExportResult:
    """Export an output set for a harness: `hf`, `lmms-eval` or `vlmevalkit`.

    Review decisions apply: images rejected in `itemshot review` are left out
    (`rejected="leave-out"`) or kept and marked in DEST/review.json (`"mark"`).
    A set with a certified review's audit sample gets its state in the HF
    dataset card: the certification statement once it is complete, "not
    certified" and what is left otherwise. `certified=True` refuses
    (ValueError, nothing written) unless the set is certified.
    """
    from itemshot.factorial.exports.exports import export_set
    from itemshot.review.certify import assess_set

    found = assess_set(Path(out))
    if certified and (found is None or not found.certified):
        left = found.next_step() if found else "no audit sample is drawn (itemshot certify --draw)"
        raise ValueError(
            f"refusing to call the set certified: its certified review is not complete ({left})"
        )
    certification = None
    if found is not None:
        certification = {
            "certified": found.certified,
            "sample": found.sample_id,
            "statement": found.statement()
            if found.certified
            else f"the certified review of sample {found.sample_id} is incomplete: "
            f"{found.next_step()}.",
            "bound": found.bound,
            "confidence": found.confidence,
            "max_defect_rate": found.max_defect_rate,
        }
    return export_set(
        Path(out), to, Path(dest), name, rejected=rejected, certification=certification
    )


def predict(
    out: str | Path,
    *,
    model: str,
    endpoint: str | None = None,
    api: str = "openai",
    api_key: str | None = None,
    task: str = "answer",
    prompt: str | None = None,
    temperature: float = 0.0,
    max_tokens: int = 4096,
    concurrency: int = 8,
    timeout: float = 120.0,
    max_attempts: int = 6,
    retry_delay: float = 1.0,
    cache: str | Path | None = None,
    seed: int = 0,
    output: str | Path | None = None,
    on_start: Callable[[int], None] | None = None,
    on_done: Callable[[], None] | None = None,
) -> PredictSummary:
    """Send every condition of an output set to a model; write its predictions (or transcripts).

    `api` is `openai` (an OpenAI-compatible `endpoint`) or `gemini`; answers
    go to OUT/predictions.jsonl (`task="transcribe"`: OUT/transcripts.jsonl)
    unless `output` names another file. Answers received are cached, so a
    re-run sends only the rows that failed. Raises `ValueError` for unusable
    settings before anything is sent.
    """
    import asyncio

    from itemshot.factorial.predict.clients import GenerationParams, make_client
    from itemshot.factorial.predict.predict import PredictConfig, run_predict
    from itemshot.factorial.predict.retry import RetryPolicy

    config = PredictConfig(
        model=model,
        api=api,
        prompt=prompt,
        params=GenerationParams(temperature, max_tokens),
        concurrency=concurrency,
        retry=RetryPolicy(max_attempts=max_attempts, base_delay=retry_delay),
        seed=seed,
        task=task,
    )
    client = make_client(api, endpoint, model, api_key, timeout)
    return asyncio.run(
        run_predict(
            Path(out),
            client,
            config,
            Path(cache) if cache is not None else None,
            on_start=on_start,
            on_done=on_done,
            output=Path(output) if output is not None else None,
        )
    )


def analyze(
    predictions: str | Path | Sequence[str | Path],
    sets: str | Path | Sequence[str | Path],
    *,
    parser: str = "strict",
    report: str | Path | None = None,
    bootstrap: int = 2000,
    seed: int = 0,
    transcripts: str | Path | Sequence[str | Path] = (),
    read_threshold: float = 0.95,
) -> Analysis:
    """Score predictions against their output sets: accuracies, 2×2 decomposition, effects.

    Predictions of several models or prompts are analysed as one run each.
    With `transcripts` (from `predict --task transcribe`) or `ocr_then_answer`
    predictions, the reading analysis is added: transcription accuracy,
    its correlation with correctness, accuracy conditional on reading at
    `read_threshold`, and the OCR prompt's gain. With `report`, also write
    report.md, report.html, results.json and plots there (their paths in
    `Analysis.paths`). The result reads as the analysis record, with `rows`
    (one per run × cell) and `to_pandas()`.
    """
    from itemshot.factorial.analysis.analysis import analyze as analyze_sets
    from itemshot.factorial.report.report import write_report

    results = analyze_sets(
        _paths(predictions),
        _paths(sets),
        parser,
        n_boot=bootstrap,
        seed=seed,
        transcripts=_paths(transcripts) if transcripts else [],
        read_threshold=read_threshold,
    )
    paths = tuple(write_report(results, Path(report))) if report is not None else ()
    return Analysis(results, paths)


def plan(
    effect: float | None = None,
    discordant: float = 0.30,
    power: float = 0.80,
    alpha: float = 0.05,
    *,
    items: int | None = None,
    simulations: int = 2000,
    seed: int = 0,
) -> Plan:
    """Return the items a paired contrast needs to detect `effect`, or what `items` detect.

    `effect` is a difference in accuracy (0.10 for 10 points) and
    `discordant` the share of items right in one condition and wrong in the
    other (a pilot's, see `pilot_rates`). McNemar's test by Connor's formula;
    `.items` is the number of items, `.simulated_power` the simulation check.
    Give `items` instead of `effect` for the smallest detectable effect.
    """
    from itemshot.factorial.analysis.power import plan as plan_contrast

    return plan_contrast(effect, discordant, power, alpha, items, simulations, seed)


def pilot_rates(
    *,
    pilot: Sequence[str | Path] | None = None,
    predictions: str | Path | Sequence[str | Path] | None = None,
    sets: str | Path | Sequence[str | Path] = (),
    parser: str = "strict",
) -> dict[str, tuple[float, str]]:
    """Return discordant rates measured on a pilot, for `plan_design`.

    `pilot`: two scored response files (rows with `id` and `if_right` or
    `correct`, as published MMMU-Pro outputs): one rate for every contrast
    (key `*`). `predictions` and `sets`: a pilot sweep; one rate per contrast
    (`factor: level − reference`) and per factor, over its runs and cells.
    """
    from itemshot.factorial.analysis.power import discordance, outcomes_from_records
    from itemshot.factorial.analysis.scoring import read_jsonl

    if pilot is not None:
        first, second = (Path(p) for p in pilot)
        pairs = discordance(
            outcomes_from_records(read_jsonl(first)), outcomes_from_records(read_jsonl(second))
        )
        if not pairs.n_items:
            raise ValueError(f"{first.name} and {second.name} share no item id")
        source = f"{first.stem} vs {second.stem}, {pairs.n_items} items"
        return {"*": (pairs.rate, source)}
    if predictions is None:
        raise ValueError("give pilot (two scored files) or predictions and sets")
    from itemshot.factorial.analysis.analysis import analyze as analyze_sets

    results = analyze_sets(_paths(predictions), _paths(sets), parser, n_boot=100)
    found: dict[str, list[tuple[float, int]]] = {}
    for run in results.runs:
        for effect in run.model_effects.effects if run.model_effects else ():
            if effect.discordant == effect.discordant:
                for key in (f"{effect.factor}: {effect.level} − {effect.reference}", effect.factor):
                    found.setdefault(key, []).append((effect.discordant, effect.n_items))
    if not found:
        raise ValueError("the pilot's predictions hold no contrast of a factor with its reference")
    rates = {}
    for key, values in found.items():
        total = sum(n for _, n in values)
        rate = sum(r * n for r, n in values) / total
        rates[key] = (rate, f"pilot, {total} item pairs")
    return rates


def plan_design(
    design: str | Path,
    rates: Mapping[str, tuple[float, str]],
    *,
    effect: float = 0.10,
    power: float = 0.80,
    alpha: float = 0.05,
    items: int | None = None,
) -> list[ContrastPlan]:
    """Return the plan of every contrast of a design (each level against its reference).

    `rates` from `pilot_rates` or `{"*": (0.30, "stated")}`. The items at hand
    are `items`, else the design's dataset, for each contrast's smallest
    detectable effect.
    """
    from itemshot.factorial.analysis.power import design_contrasts, plan_contrasts
    from itemshot.factorial.design.design import load_design

    loaded = load_design(design)
    reference = dict(loaded.reference) or {name: levels[0] for name, levels in loaded.factors}
    varying = [(name, levels) for name, levels in loaded.factors if len(levels) > 1]
    if items is None:
        spec = loaded.dataset
        items = len(load(spec.path, spec.format, spec.mapping, missing_images=spec.missing_images,
                         limit=spec.limit, config=spec.config, split=spec.split))  # fmt: skip
    contrasts = design_contrasts(varying, reference)
    return plan_contrasts(contrasts, rates, effect, power, alpha, items)


def _paths(value: str | Path | Sequence[str | Path]) -> list[Path]:
    return [Path(value)] if isinstance(value, str | Path) else [Path(v) for v in value]
