"""The Python API: the same seven steps as the command line, as plain calls.

    items = itemshot.load("data.jsonl")
    run = itemshot.render(items, "out", scene=["exam_sheet", "whiteboard"], capture="scan")
    itemshot.export("out", "hf", "export-hf")

Every call takes explicit inputs and a seed, returns a frozen record, and
reads no global state; `progress=False` keeps a call silent. Heavy stages
(Chromium, OpenCV, tesseract, google-genai) load on first use.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from itemshot.progress import progress_bar

if TYPE_CHECKING:
    import numpy as np

    from itemshot.degradations import Captured
    from itemshot.executors.base import Executor
    from itemshot.executors.select import ExecutorChoice
    from itemshot.factorial.analysis import AnalysisResults
    from itemshot.factorial.balance import BalanceReport
    from itemshot.factorial.exports import ExportResult
    from itemshot.generative.run import GenerativeOptions
    from itemshot.pipeline import RunSummary
    from itemshot.renderer.items import Item, ItemError
    from itemshot.renderer.jobs import JobRequest
    from itemshot.renderer.presentation import PresentationSpec
    from itemshot.renderer.records import Layout
    from itemshot.sweeps import SweepResult
    from itemshot.verify import AuditSummary, Thresholds, Verdict

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_SOME_FAILED = 3
EXIT_UNVERIFIED = 4
EXIT_STOPPED = 5  # a system error (disk full, permissions) stopped the run part-way

# The presentation parameters `render` takes, in the order combinations are made.
PRESENTATION_PARAMETERS = (
    "scene",
    "font_style",
    "font_size",
    "margin",
    "color",
    "aspect",
    "resolution",
    "capture",
    "severity",
    "deliver_size",
)

Level = str | int | Sequence[str | int] | None


class Items(list["Item"]):
    """The items of a dataset in file order, with the rows that failed their checks.

    A list of `Item`; `errors` holds one `ItemError` (item id, field, message)
    per bad row, `entries` both in file order, and `render` records the
    errors in the manifest where the rows stood.
    """

    def __init__(
        self, entries: Iterable[Item | ItemError] = (), *, format: str = "", source: str = ""
    ) -> None:
        from itemshot.renderer.items import Item

        self.entries: tuple[Item | ItemError, ...] = tuple(entries)
        super().__init__(e for e in self.entries if isinstance(e, Item))
        self.errors = tuple(e for e in self.entries if not isinstance(e, Item))
        self.format = format
        self.source = source


@dataclass(frozen=True)
class RunResult:
    """A finished render: where it is, its exit status, its manifest rows and summaries.

    `status` is the command line's exit status for the same run (0 all rendered
    and verified, 3 some items failed, 4 some images failed the audit).
    """

    out: Path
    status: int
    rows: tuple[Mapping[str, Any], ...]
    summary: Mapping[str, Any]
    render: RunSummary | None = None
    audit: AuditSummary | None = None

    @property
    def images(self) -> list[Path]:
        """Return the paths of every image written, in manifest order."""
        return [self.out / row["image"] for row in self.rows if row.get("image")]

    @property
    def failed(self) -> list[Mapping[str, Any]]:
        """Return the manifest rows of the jobs that failed, with their errors."""
        return [row for row in self.rows if row.get("status") != "ok"]


@dataclass(frozen=True)
class SweepRun:
    """A finished sweep: its folder, plan counts, balance report and result."""

    out: Path
    counts: Mapping[str, int]
    cells: int
    inconsistencies: int
    balance: BalanceReport
    result: SweepResult
    name: str = ""
    design_type: str = ""

    @property
    def status(self) -> int:
        """Return the command line's exit status: 0 all rows ok, 3 some failed."""
        return EXIT_OK if self.result.failed_rows == 0 else EXIT_SOME_FAILED


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


def presentation_specs(**levels: Level) -> list[PresentationSpec]:
    """Return one presentation spec per combination of the given levels.

    Each parameter takes one value, a list of values (every combination is
    made) or `"random"` (sampled per item from the seed). Raises
    `PresentationError` for a value that is not allowed.
    """
    from itemshot.renderer.presentation import PresentationSpec

    unknown = set(levels) - set(PRESENTATION_PARAMETERS)
    if unknown:
        raise TypeError(f"unknown presentation parameter {sorted(unknown)[0]!r}")
    axes: list[list[tuple[str, Any]]] = []
    for name in PRESENTATION_PARAMETERS:
        value = levels.get(name)
        if value is None:
            continue
        values = list(value) if isinstance(value, list | tuple) else [value]
        axes.append([(name, v) for v in values])
    specs = [PresentationSpec(**dict(combo)) for combo in itertools.product(*axes)]
    for spec in specs:
        spec.check()
    return specs


def requests_for(
    items: Sequence[Item | ItemError],
    specs: Sequence[PresentationSpec],
    *,
    preset: str | None = None,
    seed: int = 0,
) -> list[JobRequest | ItemError]:
    """Return the render requests of items × specs (or one per item by a named preset)."""
    from itemshot.renderer.items import ItemError
    from itemshot.renderer.jobs import JobRequest
    from itemshot.renderer.presets import preset_choice

    requests: list[JobRequest | ItemError] = []
    for entry in getattr(items, "entries", items):
        if isinstance(entry, ItemError):
            requests.append(entry)
        elif preset:
            try:
                choice = preset_choice(preset, entry, seed)
            except ItemError as error:
                requests.append(error)
                continue
            requests.append(JobRequest(entry, choice.spec, choice.condition))
        else:
            requests.extend(JobRequest(entry, spec) for spec in specs)
    return requests


def render(
    items: Sequence[Item | ItemError] | Sequence[JobRequest | ItemError],
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
    from itemshot.renderer.items import ItemError
    from itemshot.renderer.jobs import JobRequest
    from itemshot.renderer.output_lock import hold_output
    from itemshot.renderer.presentation import PresentationError

    out = Path(out)
    console = console or Console(stderr=True, quiet=not progress)
    levels = {
        "scene": scene,
        "font_style": font_style,
        "font_size": font_size,
        "margin": margin,
        "color": color,
        "aspect": aspect,
        "resolution": resolution,
        "capture": capture,
        "severity": severity,
        "deliver_size": deliver_size,
    }
    if preset and any(v is not None for v in levels.values()):
        raise PresentationError("preset", "a preset replaces the presentation parameters")
    # Requests may start with a bad row (an ItemError): the first other entry says which kind.
    first = next((entry for entry in items if not isinstance(entry, ItemError)), None)
    if isinstance(first, JobRequest):
        requests = list(items)  # already paired with their presentations
    else:
        requests = requests_for(items, presentation_specs(**levels), preset=preset, seed=seed)
    if backend != "chromium" and (executor not in (None, "local") or address is not None):
        from itemshot.executors.select import ExecutorError

        raise ExecutorError(f"the {backend} backend runs on this machine only")
    from itemshot.executors.select import open_executor

    # One run per folder, held through rendering and verification: an unusable
    # folder, or one another run holds, is refused here, before any work.
    with hold_output(out, "render"):
        if backend != "chromium":
            return _render_generative(
                requests, out, backend, generative, seed, workers, verify, console
            )
        with open_executor(executor, address=address, workers=workers) as chosen:
            return _render_chromium(
                requests, out, seed, workers, verify, progress, chosen, on_event, console
            )


def _render_chromium(
    requests: list[Any],
    out: Path,
    seed: int,
    workers: int,
    verify: bool,
    progress: bool,
    executor: Executor | None,
    on_event: Callable[[dict[str, Any]], None] | None,
    console: Console,
) -> RunResult:
    from itemshot.pipeline import RunSettings, run_jobs
    from itemshot.renderer.jobs import JobRequest, plan
    from itemshot.renderer.manifest import MANIFEST, SUMMARY
    from itemshot.renderer.output import read_jsonl

    planned = plan(requests, seed)
    with progress_bar(console, len(planned), hidden=not progress) as advance:

        def event(record: dict[str, Any]) -> None:
            advance()
            if on_event is not None:
                on_event(record)

        summary = run_jobs(
            planned, out, RunSettings(workers=max(1, workers)), event, executor=executor
        )
    status = EXIT_SOME_FAILED if summary.failed else EXIT_OK
    audit = None
    if verify and summary.rendered + summary.skipped > 0:
        items = {r.item.id: r.item for r in requests if isinstance(r, JobRequest)}
        audit = verify_set(
            out,
            list(items.values()),
            workers=workers,
            progress=progress,
            console=console,
            executor=executor,
        )
        if status == EXIT_OK and audit.failed:
            status = EXIT_UNVERIFIED
    return RunResult(
        out,
        status,
        tuple(read_jsonl(out / MANIFEST)),
        _read_json(out / SUMMARY),
        render=summary,
        audit=audit,
    )


def _render_generative(
    requests: list[Any],
    out: Path,
    backend: str,
    options: GenerativeOptions | None,
    seed: int,
    workers: int,
    verify: bool,
    console: Console,
) -> RunResult:
    import dataclasses

    from itemshot.generative.run import GenerativeOptions, render_generative
    from itemshot.renderer.manifest import SUMMARY

    options = dataclasses.replace(
        options or GenerativeOptions(),
        backend=backend,
        seed=seed,
        workers=max(1, workers),
        verify_fallback=verify,
    )
    result = render_generative(requests, out, options, console=console)
    return RunResult(out, result.status, tuple(result.manifest), _read_json(out / SUMMARY))


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
    layout's regions mapped into the captured pixels when `layout` is given.
    Its long side is `deliver_size` (default: the clean image's).
    """
    from itemshot.degradations import capture as apply_capture

    regions = layout.regions if layout else ()
    return apply_capture(image, regions, preset, severity, seed, deliver_size)


def verify(
    target: str | Path | bytes | np.ndarray,
    items: Sequence[Item] | None = None,
    *,
    layout: Layout | None = None,
    thresholds: Thresholds | None = None,
    workers: int | None = None,
    progress: bool = True,
    executor: ExecutorChoice = None,
    address: str | None = None,
) -> AuditSummary | Verdict:
    """Verify an output set (a folder) or one image against its item.

    For a folder, every rendered image is checked against its item (figures
    compared with `items` when given) and the verdicts are written into its
    manifest, `audit.json` and `audit.html`. For one image, pass `items=[item]`;
    with a `layout` record the regions are read one by one, without one the
    whole image is read and aligned. A folder's images can be checked on a Ray
    cluster: `executor="ray"` (and `address`), as for `render`.
    """
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
    if not items or len(items) != 1:
        raise ValueError("verifying one image needs items=[the item it shows]")
    from itemshot.verify import DEFAULT_THRESHOLDS, audit_image, verify_image
    from itemshot.verify.images import load_rgb

    pixels = load_rgb(target) if isinstance(target, str | Path | bytes) else target
    limits = thresholds or DEFAULT_THRESHOLDS
    if layout is not None:
        return verify_image(pixels, items[0], layout, thresholds=limits)
    return audit_image(pixels, items[0], thresholds=limits)


def verify_set(
    out: Path,
    items: Sequence[Item] | None = None,
    *,
    thresholds: Thresholds | None = None,
    workers: int | None = None,
    progress: bool = True,
    console: Console | None = None,
    executor: ExecutorChoice = None,
    address: str | None = None,
) -> AuditSummary:
    """Verify every rendered image of an output set; write verdicts and the audit report.

    `executor="ray"` runs the checks as one-CPU tasks on the Ray cluster at
    `address` (the images travel with them); the verdicts are the same. An
    executor object is used as it is (and stays open).
    """
    from itemshot.executors.select import open_executor, task_mapper
    from itemshot.renderer.manifest import MANIFEST
    from itemshot.renderer.output import read_jsonl
    from itemshot.verify import verify_output_set

    console = console or Console(stderr=True, quiet=not progress)
    manifest = out / MANIFEST
    total = sum(1 for row in read_jsonl(manifest) if row.get("status") == "ok")
    with (
        open_executor(executor, address=address, workers=workers or 1) as chosen,
        progress_bar(console, total, "verifying", hidden=not progress) as advance,
    ):
        return verify_output_set(
            out,
            items=list(items) if items is not None else None,
            thresholds=thresholds,
            workers=max(1, workers) if workers else None,
            on_progress=advance,
            map_tasks=task_mapper(chosen),
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
    Hub-style dataset's part. Raises `DesignError` or `DatasetError` when the
    design or its dataset is unusable.
    """
    from itemshot.executors.select import open_executor
    from itemshot.factorial.balance import balance_report
    from itemshot.factorial.controller import describe_plan, load_items, plan_sweep
    from itemshot.factorial.design import load_design, with_dataset
    from itemshot.pipeline import RunSettings
    from itemshot.renderer.output import atomic_write, atomic_write_json
    from itemshot.renderer.output_lock import hold_output
    from itemshot.sweeps import run_sweep

    design_path = Path(design)
    loaded = load_design(design_path)
    if dataset is not None:
        loaded = with_dataset(loaded, dataset)
    items = load_items(loaded, limit, config=config, split=split)
    folder = Path(out) if out is not None else loaded.out or Path("sweeps") / loaded.name
    plan = plan_sweep(loaded, items)
    report = balance_report(loaded.type, loaded.factors, plan.cells, loaded.seed)
    counts = describe_plan(plan)
    console = console or Console(stderr=True, quiet=not progress)
    with (
        hold_output(folder, "sweep"),  # one run per folder, taken before anything is written
        open_executor(executor, address=address, workers=workers) as chosen,
        progress_bar(console, counts["render_jobs"], "sweep", hidden=not progress) as advance,
    ):
        atomic_write(folder / "design.yaml", design_path.read_bytes())
        atomic_write_json(folder / "balance.json", report.as_dict())
        result = run_sweep(
            plan,
            folder,
            RunSettings(workers=max(1, workers)),
            lambda _event: advance(),
            executor=chosen,
        )
    return SweepRun(
        folder,
        counts,
        len(plan.cells),
        len(plan.inconsistencies),
        report,
        result,
        loaded.name,
        loaded.type,
    )


def export(
    out: str | Path,
    to: str,
    dest: str | Path,
    *,
    name: str | None = None,
    rejected: str = "leave-out",
) -> ExportResult:
    """Export an output set for a harness: `hf`, `lmms-eval` or `vlmevalkit`.

    Review decisions apply: images rejected in `itemshot review` are left out
    (`rejected="leave-out"`) or kept and marked in DEST/review.json (`"mark"`).
    """
    from itemshot.factorial.exports import export_set

    return export_set(Path(out), to, Path(dest), name, rejected=rejected)


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
) -> AnalysisResults:
    """Score predictions against their output sets: accuracies, 2×2 decomposition, effects.

    Predictions of several models or prompts are analysed as one run each.
    With `transcripts` (from `predict --task transcribe`) or `ocr_then_answer`
    predictions, the reading analysis is added: transcription accuracy,
    its correlation with correctness, accuracy conditional on reading at
    `read_threshold`, and the OCR prompt's gain. With `report`, also write
    report.md, report.html, results.json and plots there.
    """
    from itemshot.factorial.analysis import analyze as analyze_sets
    from itemshot.factorial.report import write_report

    results = analyze_sets(
        _paths(predictions),
        _paths(sets),
        parser,
        n_boot=bootstrap,
        seed=seed,
        transcripts=_paths(transcripts) if transcripts else [],
        read_threshold=read_threshold,
    )
    if report is not None:
        write_report(results, Path(report))
    return results


def _paths(value: str | Path | Sequence[str | Path]) -> list[Path]:
    return [Path(value)] if isinstance(value, str | Path) else [Path(v) for v in value]


def _read_json(path: Path) -> dict[str, Any]:
    import json

    try:
        return dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return {}
