"""Rendering a dataset: items × presentations → requests → images, then their audit.

`requests_for` pairs each entry with its presentations one entry at a time
(an item, a request already paired, or a bad row each stand for themselves,
wherever they sit); `render_requests` holds the output folder, runs the
Chromium pipeline (or the generative loop) and verifies what was written.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from itemshot.progress import progress_bar
from itemshot.results import RunResult, RunStatus

if TYPE_CHECKING:
    from itemshot.executors.base import Executor
    from itemshot.executors.select import ExecutorChoice
    from itemshot.generative.run import GenerativeOptions
    from itemshot.renderer.items import ItemError
    from itemshot.renderer.jobs import JobRequest
    from itemshot.renderer.presentation import PresentationSpec

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
    entries: Iterable[Any],
    specs: Sequence[PresentationSpec] | None = None,
    *,
    preset: str | None = None,
    seed: int = 0,
) -> list[JobRequest | ItemError]:
    """Return the render requests of entries × specs (or one per item by a named preset).

    Each entry is judged on its own: an `Item` gets one request per spec, a
    `JobRequest` is kept as it is, an `ItemError` (a bad row) stays in its
    place, and anything else becomes an `ItemError` naming its position, so
    one odd entry costs one item wherever it stands. An `Items` (or a loaded
    dataset) is read with its bad rows, in file order.
    """
    from itemshot.renderer.items import Item, ItemError
    from itemshot.renderer.jobs import JobRequest
    from itemshot.renderer.presets import preset_choice

    chosen = list(specs) if specs else presentation_specs()
    requests: list[JobRequest | ItemError] = []
    for position, entry in enumerate(getattr(entries, "entries", entries), start=1):
        if isinstance(entry, ItemError | JobRequest):
            requests.append(entry)
        elif not isinstance(entry, Item):
            requests.append(_not_an_item(position, entry))
        elif preset:
            try:
                choice = preset_choice(preset, entry, seed)
            except ItemError as error:
                requests.append(error)
                continue
            requests.append(JobRequest(entry, choice.spec, choice.condition))
        else:
            requests.extend(JobRequest(entry, spec) for spec in chosen)
    return requests


def _not_an_item(position: int, entry: object) -> ItemError:
    """Return the error of an entry that is neither an item, a request nor a bad row."""
    from itemshot.renderer.items import ItemError

    item_id = str(entry.get("id", f"#{position}")) if isinstance(entry, Mapping) else f"#{position}"
    hint = "; read rows with itemshot.load(rows)" if isinstance(entry, Mapping) else ""
    return ItemError(
        item_id, "entry", f"entry {position} is a {type(entry).__name__}, not an Item{hint}"
    )


def render_requests(
    requests: list[JobRequest | ItemError],
    out: Path,
    *,
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
    """Render the requests into `out` (held for the whole run) and verify what was written."""
    from itemshot.executors.select import ExecutorError, open_executor
    from itemshot.renderer.output_lock import hold_output

    console = console or Console(stderr=True, quiet=not progress)
    if backend != "chromium" and (executor not in (None, "local") or address is not None):
        raise ExecutorError(f"the {backend} backend runs on this machine only")
    if backend != "chromium":
        from itemshot.generative.render import render_with_model

        # The generative run holds the folder itself, once it has its API key:
        # without one it ends before anything is created.
        return render_with_model(
            requests, out, backend, generative, seed=seed, workers=workers, verify=verify,
            console=console,
        )  # fmt: skip
    # One run per folder, held through rendering and verification: an unusable
    # folder, or one another run holds, is refused here, before any work.
    with (
        hold_output(out, "render"),
        open_executor(executor, address=address, workers=workers) as chosen,
    ):
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
    from itemshot.outputs import read_manifest, read_summary
    from itemshot.pipeline import RunSettings, run_jobs
    from itemshot.renderer.jobs import Job, plan
    from itemshot.verifying import verify_set

    planned = plan(requests, seed)
    with progress_bar(console, len(planned), hidden=not progress) as advance:

        def event(record: dict[str, Any]) -> None:
            advance()
            if on_event is not None:
                on_event(record)

        summary = run_jobs(
            planned, out, RunSettings(workers=max(1, workers)), event, executor=executor
        )
    status = RunStatus.SOME_FAILED if summary.failed else RunStatus.OK
    audit = None
    if verify and summary.rendered + summary.skipped > 0:
        # Each image against the exact item its job rendered (its options as shown).
        shown = {job.key: job.item for job in planned if isinstance(job, Job)}
        audit = verify_set(
            out,
            shown=shown,
            workers=workers,
            progress=progress,
            console=console,
            executor=executor,
        )
        if status == RunStatus.OK and audit.failed:
            status = RunStatus.UNVERIFIED
    return RunResult(
        out,
        status,
        tuple(row.to_json() for row in read_manifest(out)),
        read_summary(out),
        render=summary,
        audit=audit,
    )
