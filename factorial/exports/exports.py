"""Exports of an output set for the harnesses people run: one registry, one entry point.

A new harness is one module with an `export(rows, dest, name) -> Written`
function and one line in `EXPORTERS` (module names, imported on use, so the
command line lists the targets without loading pyarrow).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from typing import Any

from itemshot.factorial.exports.export_common import export_rows
from itemshot.factorial.review.log import review_export_rows, write_review_marks
from itemshot.renderer.output_lock import hold_output

EXPORTERS: dict[str, str] = {
    "hf": "itemshot.factorial.exports.export_hf",
    "lmms-eval": "itemshot.factorial.exports.export_lmms",
    "vlmevalkit": "itemshot.factorial.exports.export_vlmevalkit",
}
TARGETS = tuple(EXPORTERS)
# Targets whose export has a dataset card, which carries the certification statement.
CARD_TARGETS = ("hf",)


@dataclass(frozen=True)
class ExportResult:
    """What an export wrote and what it left out.

    `rows` counts the rows the written files hold; `left_out` the manifest rows
    that were not ok; `skipped` the ok rows this harness cannot hold (listed
    with their reasons in the export's `skipped.jsonl`). `review` counts the
    human review's statuses (empty when the set has no review log) and
    `review["left_out"]` the rejected images left out.
    """

    target: str
    dest: Path
    paths: tuple[Path, ...]
    rows: int
    left_out: int
    skipped: tuple[Mapping[str, str], ...] = ()
    filtered: int = 0
    review: Mapping[str, Any] = field(default_factory=dict)
    certification: Mapping[str, Any] | None = None


def export_set(
    source: Path,
    to: str,
    dest: Path,
    name: str | None = None,
    *,
    rejected: str = "leave-out",
    certification: Mapping[str, Any] | None = None,
) -> ExportResult:
    """Export the ok rows of an output set for harness `to`; return what was written.

    Review decisions (OUT/review.jsonl) apply: regenerated images replace the
    ones they regenerated, and rejected images are left out (`rejected=
    "leave-out"`) or kept and listed with their status in DEST/review.json
    (`"mark"`). `certification` (the certified review's state: `certified`
    and the `statement`, made by the app layer) goes into the dataset card of
    the targets that have one. Raises FileNotFoundError when `source` has no manifest,
    ValueError for an unknown target or policy, or a name the harness cannot use.
    """
    if to not in EXPORTERS:
        raise ValueError(f"unknown export target {to!r}; known: {', '.join(TARGETS)}")
    name = check_name(name) if name is not None else default_name(source)
    selection = export_rows(source)
    reviewed = review_export_rows(source, selection.rows, rejected)
    exporter = import_module(EXPORTERS[to]).export
    # Taken once the inputs are checked (a refused name writes nothing, not even a lock).
    with hold_output(dest, "export"):
        if certification is not None and to in CARD_TARGETS:
            written = exporter(reviewed.rows, dest, name, certification=certification)
        else:
            written = exporter(reviewed.rows, dest, name)
        paths = list(written.paths)
        if reviewed.counts:
            paths.append(write_review_marks(dest, reviewed))
    return ExportResult(
        to,
        dest,
        tuple(paths),
        written.rows,
        selection.not_ok,
        written.skipped,
        selection.filtered,
        reviewed.summary() if reviewed.counts else {},
        certification,
    )


_NAME = re.compile(r"\w[\w.+-]{0,127}")


def check_name(name: str) -> str:
    """Return an export's dataset/task name if it is one plain file name; raise ValueError.

    Every exporter builds file and folder names from it (`NAME.tsv`,
    `NAME/`), so a name with a path separator or `..` would write outside
    `--out`: only letters, digits and `_.+-` are taken, starting with a
    letter, digit or `_`.
    """
    if not _NAME.fullmatch(name) or ".." in name:
        raise ValueError(
            f"export name {name!r} is not a plain name: use letters, digits and _ . + - "
            "(no path separators, no '..'), starting with a letter, digit or _"
        )
    return name


def default_name(source: Path) -> str:
    """Return the export name made from the output folder's name (unsafe characters replaced)."""
    cleaned = re.sub(r"[^\w.+-]+", "_", source.resolve().name).strip("._")
    return check_name(re.sub(r"\.{2,}", ".", cleaned)[:128] or "itemshot")
