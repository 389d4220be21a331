"""Verifying an output set, or one image, against the items the images must show.

With the dataset's items given, each image is checked against its source
item as that image shows it: the option set and order its condition chose
(`n_options` with the sweep's seed, as the sweep chose them), never the item's
full set and never the text stored beside the image. An image whose source
item is not among them (absent, or a row that failed to load) is an error
naming it (`SourcesUnavailable`), raised before anything is verified.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from itemshot.progress import progress_bar
from itemshot.results import VerifyResult, verify_rows

if TYPE_CHECKING:
    import numpy as np

    from itemshot.executors.select import ExecutorChoice
    from itemshot.renderer.items import Item, ItemError
    from itemshot.renderer.records import Layout
    from itemshot.verify import Thresholds, Verdict

DESIGN_COPY = "design.yaml"  # the design a sweep copied into its folder


class SourcesUnavailable(ValueError):
    """Some images' source items could not be loaded: verifying them against the source is impossible.

    `missing` maps each such item id to why (its load error, or "not in the
    items given"); `images` counts the images concerned.
    """

    def __init__(self, missing: Mapping[str, str], images: int) -> None:
        """Name the items (the first ten) and why each is unavailable."""
        self.missing = dict(missing)
        self.images = images
        shown = "; ".join(f"{item_id}: {why}" for item_id, why in list(self.missing.items())[:10])
        more = f"; and {len(self.missing) - 10} more" if len(self.missing) > 10 else ""
        super().__init__(
            f"{images} images show items that could not be loaded from the items given "
            f"({len(self.missing)} items: {shown}{more}); nothing was verified"
        )


def verify_one(
    target: str | Path | bytes | np.ndarray,
    items: Sequence[Item] | None,
    *,
    layout: Layout | None = None,
    thresholds: Thresholds | None = None,
) -> Verdict:
    """Verify one image against the one item it shows (regions with a layout, else whole)."""
    if not items or len(items) != 1:
        raise ValueError("verifying one image needs items=[the item it shows]")
    from itemshot.verify import DEFAULT_THRESHOLDS, audit_image, verify_image
    from itemshot.verify.page.images import load_rgb

    pixels = load_rgb(target) if isinstance(target, str | Path | bytes) else target
    limits = thresholds or DEFAULT_THRESHOLDS
    if layout is not None:
        return verify_image(pixels, items[0], layout, thresholds=limits)
    return audit_image(pixels, items[0], thresholds=limits)


def verify_set(
    out: Path,
    items: Sequence[Item | ItemError] | None = None,
    *,
    thresholds: Thresholds | None = None,
    workers: int | None = None,
    progress: bool = True,
    console: Console | None = None,
    executor: ExecutorChoice = None,
    address: str | None = None,
    shown: Mapping[str, Item] | None = None,
) -> VerifyResult:
    """Verify every rendered image of an output set; write verdicts and the audit report.

    `items` are the dataset's items (an `Items` keeps its bad rows, which name
    why an item is unavailable): each image is checked against its source
    item as the image's condition shows it. `shown` maps job keys to the exact
    items a run rendered (`render` passes them). Raises `SourcesUnavailable`
    before any check when `items` lack an image's item. `executor="ray"` runs
    the checks as one-CPU tasks on the Ray cluster at `address` (the images
    travel with them); an executor object is used as it is (and stays open).
    """
    from itemshot.executors.select import open_executor, task_mapper
    from itemshot.outputs import read_manifest
    from itemshot.verify import verify_output_set

    console = console or Console(stderr=True, quiet=not progress)
    rows = read_manifest(out)
    checked = [row for row in rows if _verified(row)]
    item_for = _sources(out, checked, items, shown or {})
    with (
        open_executor(executor, address=address, workers=workers or 1) as chosen,
        progress_bar(console, len(checked), "verifying", hidden=not progress) as advance,
    ):
        summary = verify_output_set(
            out,
            thresholds=thresholds,
            workers=max(1, workers) if workers else None,
            on_progress=advance,
            map_tasks=task_mapper(chosen),
            item_for=item_for,
        )
    return VerifyResult(summary, verify_rows(read_manifest(out)))


def _verified(row: Mapping[str, Any]) -> bool:
    """Return whether verification checks this row's image (as `verify_output_set` chooses)."""
    return row.get("status") == "ok" and bool(row.get("image")) and bool(row.get("layout"))


def _sources(
    out: Path,
    rows: Sequence[Mapping[str, Any]],
    items: Sequence[Item | ItemError] | None,
    shown: Mapping[str, Item],
) -> Any:
    """Return the row → expected item function, or raise `SourcesUnavailable` for missing items."""
    from itemshot.renderer.items import Item
    from itemshot.verify.output_set import item_from_row

    entries = getattr(items, "entries", items)
    by_id: dict[str, Item] = {}
    errors: dict[str, str] = {}
    for entry in entries or ():
        if isinstance(entry, Item):
            by_id[entry.id] = entry
        else:
            errors[entry.item_id] = f"{entry.field}: {entry.message}"
    if items is not None:
        missing: dict[str, str] = {}
        images = 0
        for row in rows:
            item_id = str(row["item_id"])
            if row.get("job_key") in shown or item_id in by_id:
                continue
            missing.setdefault(item_id, errors.get(item_id, "not in the items given"))
            images += 1
        if missing:
            raise SourcesUnavailable(missing, images)
    seed = _design_seed(out)

    def item_for(row: Mapping[str, Any]) -> Item:
        exact = shown.get(str(row.get("job_key")))
        if exact is not None:
            return exact
        item_id = str(row["item_id"])
        source = by_id.get(item_id)
        if source is not None:
            return as_shown(source, row, seed)
        if items is not None:  # a row written since the check above: never its own text
            raise SourcesUnavailable({item_id: errors.get(item_id, "not in the items given")}, 1)
        return item_from_row(row, out)  # no items given: the text stored with the image

    return item_for


def as_shown(item: Item, row: Mapping[str, Any], seed: int) -> Item:
    """Return the source item with the options its image shows, in the order it shows them.

    A sweep's condition names `n_options`: the option set is chosen again from
    the source item by the sweep's rule and seed (the original 4, the full
    set, or seeded distractors in their source order). A row without one
    shows the item as it is.
    """
    condition = row.get("condition") or {}
    level = condition.get("n_options") if isinstance(condition, Mapping) else None
    if level is None:
        return item
    from itemshot.factorial.design.option_sets import option_set, with_options

    return with_options(item, option_set(item, level, seed))


def _design_seed(out: Path) -> int:
    """Return the seed of the design a sweep copied into `out` (its default 0 without one)."""
    import yaml

    try:
        raw = yaml.safe_load((out / DESIGN_COPY).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return 0
    seed = raw.get("seed", 0) if isinstance(raw, dict) else 0
    return seed if isinstance(seed, int) and not isinstance(seed, bool) else 0
