"""Atomic writes and the output-set layout (images/, sidecars, manifest)."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from itemshot.renderer.items import Item

TEMP_PREFIX = ".tmp-"


def atomic_write(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a temp file and a rename, so no reader sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """Write UTF-8 text atomically."""
    atomic_write(path, text.encode("utf-8"))


def atomic_write_json(path: Path, value: Any) -> None:
    """Write `value` as pretty, key-sorted JSON, atomically."""
    atomic_write_text(path, json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False) + "\n")


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    """Write rows as JSON lines (key-sorted), atomically."""
    lines = [json.dumps(r, sort_keys=True, ensure_ascii=False) for r in rows]
    atomic_write(path, ("\n".join(lines) + "\n" if lines else "").encode("utf-8"))


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Return the rows of a JSON-lines file."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


FIGURES_DIR = "figures"
_EXTENSIONS = {
    "image/png": ".png",
    "image/jpeg": ".jpg",
    "image/gif": ".gif",
    "image/webp": ".webp",
}


def write_figure_files(out: Path, item: Item) -> dict[int, str]:
    """Write an item's figures content-addressed under OUT/figures/; return number → path.

    Figures the dataset lacks (placeholders) are left out. Identical figures are
    stored once, so an output set carries its sources without duplication.
    """
    paths: dict[int, str] = {}
    for number in item.referenced_figures():
        figure = item.figures.get(number)
        if figure is None:
            continue
        relative = f"{FIGURES_DIR}/{figure.sha256}{_EXTENSIONS.get(figure.mime, '.bin')}"
        if not (out / relative).is_file():
            atomic_write(out / relative, figure.data)
        paths[number] = relative
    return paths


def remove_stale_temps(root: Path) -> int:
    """Delete temp files a killed run left behind; return how many were removed."""
    removed = 0
    if not root.exists():
        return 0
    for temp in root.rglob(TEMP_PREFIX + "*"):
        temp.unlink(missing_ok=True)
        removed += 1
    return removed
