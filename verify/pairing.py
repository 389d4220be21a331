"""Pairing images made elsewhere with the dataset entries they show."""

from __future__ import annotations

import json
import re
from pathlib import Path

from itemshot.outputs import MANIFEST
from itemshot.renderer.adapters import Dataset
from itemshot.renderer.items import Item, ItemError

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp")
MATCH_MODES = ("filename", "order", "manifest")
DEFAULT_PATTERN = "page_{n}"


def natural_key(path: Path) -> list[object]:
    """Return a sort key that orders page_2 before page_10."""
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", path.name)]


def image_files(images_dir: Path) -> list[Path]:
    """Return the image files of a folder in natural order."""
    files = [p for p in images_dir.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES]
    return sorted(files, key=natural_key)


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    escaped = re.escape(pattern)
    escaped = escaped.replace(re.escape("{n}"), r"(?P<n>\d+)").replace(
        re.escape("{id}"), r"(?P<id>.+)"
    )
    return re.compile(f"^{escaped}$")


def pair_images(
    images_dir: Path,
    dataset: Dataset,
    match: str = "filename",
    pattern: str = DEFAULT_PATTERN,
) -> list[tuple[Path, Item | ItemError | None]]:
    """Pair each image with its dataset entry.

    - `filename`: the stem matches `pattern`; `{n}` is the 1-based line (entry)
      number, `{id}` the item id (e.g. `page_{n}` for the MMMU-Pro tool's pages).
    - `order`: the k-th image in natural order is the k-th entry.
    - `manifest`: `manifest.jsonl` in the folder maps `image` to `item_id`.
    """
    files = image_files(images_dir)
    entries = list(dataset.entries)
    by_id = {e.id: e for e in entries if isinstance(e, Item)}
    if match == "order":
        return [(f, entries[i] if i < len(entries) else None) for i, f in enumerate(files)]
    if match == "manifest":
        # A folder of images made elsewhere: its manifest need only name `image` and `item_id`.
        manifest = images_dir / MANIFEST
        rows = [
            json.loads(line)
            for line in manifest.read_text(encoding="utf-8").splitlines()
            if line.strip()
        ]
        pairs = []
        for row in rows:
            image = images_dir / str(row.get("image", ""))
            if image.is_file():
                pairs.append((image, by_id.get(str(row.get("item_id")))))
        return pairs
    if match != "filename":
        raise ValueError(f"match must be one of {', '.join(MATCH_MODES)}")
    regex = _pattern_regex(pattern)
    pairs: list[tuple[Path, Item | ItemError | None]] = []
    for file in files:
        found = regex.match(file.stem)
        entry: Item | ItemError | None = None
        if found and "n" in found.groupdict() and found.group("n"):
            index = int(found.group("n")) - 1
            entry = entries[index] if 0 <= index < len(entries) else None
        elif found and found.groupdict().get("id"):
            entry = by_id.get(found.group("id"))
        pairs.append((file, entry))
    return pairs
