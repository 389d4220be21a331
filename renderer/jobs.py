"""Jobs: (item, presentation, condition, seed) with a content-derived key and output path."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from itemshot.renderer.items import Item, ItemError, safe_name
from itemshot.renderer.presentation import Presentation, PresentationError, PresentationSpec
from itemshot.renderer.seeds import canonical_json, derive_seed, stable_hash

# Bump when a change to templates or backend changes the pixels of existing jobs.
RENDERER_VERSION = "6"  # 2: seamless (periodic) scene texture tiles
# 3: `$…$` with spaces inside, undelimited formulas and `\$` typeset or shown as
# dollars; characters a face draws as another character set in another face
# 4: each face set at the size that gives it the reference face's x-height, at the
# reference's line pitch and spacing; the page scale the one at which the item fits
# in every font style; scene furniture in the reference face; decorations, capture
# sampling and `random` presentation fields seeded from the item (`Job.held_seed`)
# 5: each text region records the size its face was set at (`Region.set_px`)
# 6: a figure tag glued to the source's words ("<image 1>The") is set as a word of its own


FIGURE_MODES = ("show", "placeholder", "omit")


@dataclass(frozen=True)
class Content:
    """What goes into the image: figures shown, blanked or left out; options in or out.

    The control formats use these: `vision_placeholder` blanks figures (same
    size), `vision_text_only` omits them (passed separately), and
    `vision_question_only` leaves the options out of the image.
    """

    figures: str = "show"
    options: bool = True

    def __post_init__(self) -> None:
        if self.figures not in FIGURE_MODES:
            raise ValueError(f"figures must be one of {', '.join(FIGURE_MODES)}")

    def as_dict(self) -> dict[str, Any]:
        """Return the content choice as a plain dict."""
        return {"figures": self.figures, "options": self.options}


@dataclass(frozen=True)
class JobRequest:
    """What to render: an item, a presentation request, and the condition it belongs to.

    `condition` holds the factor levels a design assigned (format, n_options, …);
    it is part of the seed and key, and lands in the manifest as is.
    """

    item: Item
    spec: PresentationSpec
    condition: Mapping[str, Any] = field(default_factory=dict)
    content: Content = field(default_factory=Content)


@dataclass(frozen=True)
class Job:
    """One image to make: everything that determines its bytes, and where they go."""

    item: Item
    presentation: Presentation
    condition: Mapping[str, Any]
    seed: int
    key: str
    content: Content = field(default_factory=Content)
    # Seeds what an item keeps across every cell of a design (scene decorations,
    # capture sampling): derived from the run seed and the item alone, so that
    # two cells of one item differ only in what their conditions vary. None:
    # the job's own seed (a job made by hand, a review's new attempt).
    held_seed: int | None = None

    @property
    def item_seed(self) -> int:
        """Return the seed of what the item keeps across cells (`held_seed`, else `seed`)."""
        return self.seed if self.held_seed is None else self.held_seed

    @property
    def stem(self) -> str:
        """Return the file stem shared by the image and its sidecar."""
        return f"{safe_name(self.item.id)}-{self.key[:12]}"

    @property
    def image_path(self) -> str:
        """Return the image path relative to the output folder."""
        return f"images/{self.stem}.png"

    @property
    def clean_path(self) -> str:
        """Return the path of the clean render kept beside a captured image."""
        return f"images/{self.stem}.clean.png"

    @property
    def sidecar_path(self) -> str:
        """Return the sidecar (layout record) path relative to the output folder."""
        return f"images/{self.stem}.json"


@dataclass(frozen=True)
class PlanFailure:
    """A request that could not become a job (bad item data or impossible presentation)."""

    item_id: str
    condition: Mapping[str, Any]
    error: ItemError


def make_job(request: JobRequest, run_seed: int) -> Job:
    """Return the job for a request; the seed comes from (run seed, item id, condition, spec).

    What the item keeps across cells (`random` presentation fields, scene
    decorations, capture sampling) comes from `held_seed`: (run seed, item id).
    """
    spec_key = canonical_json({k: v for k, v in vars(request.spec).items() if v is not None})
    seed = derive_seed(run_seed, request.item.id, dict(request.condition), spec_key)
    held = derive_held_seed(run_seed, request.item.id)
    try:
        # `random` fields are drawn per item, not per cell: what a design leaves
        # to chance is then the same in every cell of an item, not a confound.
        presentation = request.spec.resolve(random.Random(held))
    except PresentationError as error:
        raise ItemError(request.item.id, error.field, str(error)) from None
    key = job_key(request.item, presentation, request.condition, request.content, seed, held)
    condition = dict(request.condition)
    return Job(request.item, presentation, condition, seed, key, request.content, held)


def derive_held_seed(run_seed: int, item_id: str) -> int:
    """Return the seed of what an item keeps across the cells of a run (see `Job.held_seed`)."""
    return derive_seed(run_seed, item_id, "held")


def job_key(
    item: Item,
    presentation: Presentation,
    condition: Mapping[str, Any],
    content: Content,
    seed: int,
    held: int | None = None,
) -> str:
    """Return the key naming a Chromium render: what goes into the image, nothing else."""
    return stable_hash(
        RENDERER_VERSION,
        item.content_hash(),
        presentation.as_dict(),
        dict(condition),
        content.as_dict(),
        seed,
        held,
    )


def plan(requests: Sequence[JobRequest | ItemError], run_seed: int) -> list[Job | PlanFailure]:
    """Return jobs (and failures) in request order, without duplicate keys."""
    planned: list[Job | PlanFailure] = []
    seen: set[str] = set()
    for position, request in enumerate(requests, start=1):
        if isinstance(request, ItemError):
            planned.append(PlanFailure(request.item_id, {}, request))
            continue
        if not isinstance(request, JobRequest):
            # Judged one by one: a stray item or row costs itself, wherever it stands.
            what = type(request).__name__
            error = ItemError(f"#{position}", "request", f"entry {position} is a {what}")
            planned.append(PlanFailure(error.item_id, {}, error))
            continue
        try:
            job = make_job(request, run_seed)
        except ItemError as error:
            planned.append(PlanFailure(request.item.id, dict(request.condition), error))
            continue
        if job.key not in seen:
            seen.add(job.key)
            planned.append(job)
    return planned


def page_job(job: Job, capture: str | None = None) -> Job:
    """Return the Chromium job of the same item and Presentation (optionally another capture).

    A generative job's key also names its backend and model; this is the job
    whose exact page Chromium renders for it (its hybrid base or its fallback).
    """
    presentation = job.presentation
    if capture is not None:
        presentation = replace(presentation, capture=capture)
    key = job_key(job.item, presentation, job.condition, job.content, job.seed, job.held_seed)
    return replace(job, presentation=presentation, key=key)
