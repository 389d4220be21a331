"""Pool the figures of several `verify_heldout.py` runs: sets declared to be reported together.

A face, scene or capture cell of one 330-item set holds 19 to 49 images,
where one false alarm is 2 to 5%: a per-cell bar of 2% or 3% can then only be
met by none. Sets declared together (`verify_split.py`) are reported by
adding their counts cell by cell, the worst cell beside the average, as
`verify_heldout.py` prints them for one set; then every false alarm and every
passed defect of each run.

    .venv/bin/python benchmarks/verify_pooled.py /tmp/restated.json /tmp/retold.json
    .venv/bin/python benchmarks/verify_pooled.py --tables-only a.json b.json   # no listings
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from verify_heldout import cell_counts, cell_figures, recall_entry

CELL_TABLES = (
    ("clean_by_face", "clean renders by face"),
    ("clean_by_scene", "clean renders by scene"),
    ("clean_by_language", "clean renders by language"),
    ("captures_by_cell", "captures by preset × severity"),
    ("captures_by_face", "captures by face"),
)
COUNTS = ("images", "passed", "legible", "false_alarms")


def pooled_cells(tables: list[dict[str, Any]]) -> tuple[dict[str, dict], dict[str, Any]]:
    """Return every cell's counts and the average's, added over the runs' tables."""
    cells: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(COUNTS, 0))
    for table in tables:
        for key, cell in table.get("cells", {}).items():
            for count in COUNTS:
                cells[key][count] += cell[count]
    figures = {key: cell_counts(*(cells[key][c] for c in COUNTS)) for key in sorted(cells)}
    total = cell_counts(*(sum(cell[c] for cell in cells.values()) for c in COUNTS))
    return figures, total


def pooled_recall(tables: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Return each defect kind's caught / images, and per face and capture cell, added up."""
    kinds: dict[str, dict[str, Any]] = {}
    for table in tables:
        for kind, entry in table.items():
            pooled = kinds.setdefault(
                kind, {"caught": 0, "images": 0, "by_face": {}, "by_capture": {}}
            )
            pooled["caught"] += entry["caught"]
            pooled["images"] += entry["images"]
            for axis in ("by_face", "by_capture"):
                for key, (caught, images) in entry.get(axis, {}).items():
                    was = pooled[axis].get(key, [0, 0])
                    pooled[axis][key] = [was[0] + caught, was[1] + images]
    return kinds


def main() -> None:
    """Print the pooled tables of the given runs, per verification mode."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path, nargs="+", help="verify_heldout.py --json files")
    parser.add_argument("--tables-only", action="store_true", help="no false-alarm listing")
    args = parser.parse_args()
    runs = [json.loads(path.read_text()) for path in args.runs]
    print("pooled: " + ", ".join(f"{run['set']} ({run['items']} items)" for run in runs))
    modes = [m for m in runs[0]["figures"] if all(m in run["figures"] for run in runs)]
    for mode in modes:
        name = "region" if mode == "region" else "whole-image"
        figures = [run["figures"][mode] for run in runs]
        for key, title in CELL_TABLES:
            cells, total = pooled_cells([f.get(key, {}) for f in figures])
            cell_figures(f"{name} mode, {title}, pooled", cells, total)
        print(f"\ndefect recall, {name} mode, pooled")
        for kind, entry in pooled_recall([f["recall"] for f in figures]).items():
            recall_entry(
                kind, entry["caught"], entry["images"], entry["by_face"], entry["by_capture"]
            )
        if args.tables_only:
            continue
        alarms = [row for f in figures for row in f["false_alarms"]]
        print(f"\n{name} mode: false alarms ({len(alarms)})")
        for row in alarms:
            look = f"{row['scene']} {row['face']} {row['capture']}"
            print(f"  {row['image']} [{look}] {'; '.join(row['reasons'][:4])}")
        missed = [row for f in figures for row in f["defects_passed"]]
        print(f"{name} mode: defects passed ({len(missed)})")
        for row in missed:
            print(f"  {row['image']} [{row['kind']} {row['capture']}] {row['edit']}")


if __name__ == "__main__":
    main()
