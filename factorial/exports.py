"""Exports of an output set for the harnesses people run: one registry, one entry point.

A new harness is one module with an `export(rows, dest, name) -> [paths]`
function and one line in `EXPORTERS` (module names, imported on use, so the
command line lists the targets without loading pyarrow).
"""

from __future__ import annotations

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
    """What an export wrote: its files, how many rows it holds, how many were left out."""

    target: str
    dest: Path
    paths: tuple[Path, ...]
    rows: int
    left_out: int


def export_set(source: Path, to: str, dest: Path, name: str | None = None) -> ExportResult:
    """Export the ok rows of an output set for harness `to`; return what was written.

    Raises FileNotFoundError when `source` has no manifest, ValueError for an
    unknown target.
    """
    if to not in EXPORTERS:
        raise ValueError(f"unknown export target {to!r}; known: {', '.join(TARGETS)}")
    from itemshot.factorial.export_common import export_rows

    rows, not_ok = export_rows(source)
    dest.mkdir(parents=True, exist_ok=True)
    exporter = import_module(EXPORTERS[to]).export
    written = exporter(rows, dest, name or source.resolve().name)
    return ExportResult(to, dest, tuple(written), len(rows), not_ok)
