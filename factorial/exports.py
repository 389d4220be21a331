"""Exports of an output set for the harnesses people run: one registry, one entry point.

A new harness is one module with an `export(rows, dest, name) -> [paths]`
function and one line in `EXPORTERS` (module names, imported on use, so the
command line lists the targets without loading pyarrow).
"""

from __future__ import annotations

import re
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

    name = check_name(name) if name is not None else default_name(source)
    rows, not_ok = export_rows(source)
    dest.mkdir(parents=True, exist_ok=True)
    exporter = import_module(EXPORTERS[to]).export
    written = exporter(rows, dest, name)
    return ExportResult(to, dest, tuple(written), len(rows), not_ok)


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
