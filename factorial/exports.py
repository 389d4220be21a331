"""Exports of an output set for the harnesses people run: one registry, one entry point.

A new harness is one module with an `export(rows, dest, name) -> Written`
function and one line in `EXPORTERS` (module names, imported on use, so the
command line lists the targets without loading pyarrow).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path

EXPORTERS: dict[str, str] = {
    "hf": "itemshot.factorial.export_hf",
    "lmms-eval": "itemshot.factorial.export_lmms",
    "vlmevalkit": "itemshot.factorial.export_vlmevalkit",
}
TARGETS = tuple(EXPORTERS)


@dataclass(frozen=True)
class ExportResult:
    """What an export wrote and what it left out.

    `rows` counts the rows the written files hold; `left_out` the manifest rows
    that were not ok; `skipped` the ok rows this harness cannot hold (listed
    with their reasons in the export's `skipped.jsonl`).
    """

    target: str
    dest: Path
    paths: tuple[Path, ...]
    rows: int
    left_out: int
    skipped: tuple[Mapping[str, str], ...] = ()
    filtered: int = 0


def export_set(source: Path, to: str, dest: Path, name: str | None = None) -> ExportResult:
    """Export the ok rows of an output set for harness `to`; return what was written.

    Raises FileNotFoundError when `source` has no manifest, ValueError for an
    unknown target or a name the harness cannot use.
    """
    if to not in EXPORTERS:
        raise ValueError(f"unknown export target {to!r}; known: {', '.join(TARGETS)}")
    from itemshot.factorial.export_common import export_rows

    selection = export_rows(source)
    dest.mkdir(parents=True, exist_ok=True)
    exporter = import_module(EXPORTERS[to]).export
    written = exporter(selection.rows, dest, name or source.resolve().name)
    return ExportResult(
        to,
        dest,
        written.paths,
        written.rows,
        selection.not_ok,
        written.skipped,
        selection.filtered,
    )
