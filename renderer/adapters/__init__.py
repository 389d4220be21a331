"""Dataset adapters: read MCQ datasets in several layouts into checked Items."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from itemshot.renderer.adapters import hub
from itemshot.renderer.adapters.build import MISSING_POLICIES, RawItem, build_item
from itemshot.renderer.adapters.formats import (
    FORMATS,
    ColumnMapping,
    DatasetError,
    detect_format,
    detect_rows_format,
    read_rows,
    to_raw_item,
)
from itemshot.renderer.items import Item, ItemError

__all__ = [
    "FORMATS",
    "MISSING_POLICIES",
    "ColumnMapping",
    "Dataset",
    "DatasetError",
    "RawItem",
    "build_item",
    "load_dataset",
    "load_rows",
]


@dataclass(frozen=True)
class Dataset:
    """The rows of a dataset in file order: each a checked Item or the ItemError it raised."""

    path: Path
    format: str
    entries: tuple[Item | ItemError, ...]

    @property
    def items(self) -> list[Item]:
        """Return the items that passed their checks."""
        return [e for e in self.entries if isinstance(e, Item)]

    @property
    def errors(self) -> list[ItemError]:
        """Return the per-item errors."""
        return [e for e in self.entries if isinstance(e, ItemError)]


def load_dataset(
    path: str | Path,
    *,
    format: str | None = None,
    mapping: ColumnMapping | None = None,
    missing_images: str = "fail",
    limit: int | None = None,
    config: str | None = None,
    split: str | None = None,
) -> Dataset:
    """Read a dataset file, a Hub-style folder or a cached Hub id into Items.

    Bad rows become ItemErrors, the rest still load. The format is detected
    from the (first) file unless given; image paths resolve against the
    file's folder and may not leave it. `config` and `split` choose the part
    of a Hub-style dataset (see `hub`).
    """
    selection = hub.resolve(path, config, split)
    if selection is not None:
        return load_rows(
            hub.rows_of(selection, read_rows),
            root=selection.root,
            format=format or detect_format(selection.files[0]),
            mapping=mapping,
            missing_images=missing_images,
            limit=limit,
            source=selection.root,
        )
    path = Path(path)
    return load_rows(
        read_rows(path),
        root=path.parent,
        format=format or detect_format(path),
        mapping=mapping,
        missing_images=missing_images,
        limit=limit,
        source=path,
    )


def load_rows(
    rows: Iterable[Mapping[str, Any]],
    *,
    root: str | Path = ".",
    format: str | None = None,
    mapping: ColumnMapping | None = None,
    missing_images: str = "fail",
    limit: int | None = None,
    source: str | Path = "<rows>",
) -> Dataset:
    """Read rows already in memory (dicts, as a file's lines would be) into Items.

    Figure paths resolve against `root` and may not leave it. The format is
    detected from the first row unless given.
    """
    if missing_images not in MISSING_POLICIES:
        raise DatasetError(f"--missing-images must be one of {', '.join(MISSING_POLICIES)}")
    if format is None:
        rows = list(rows)
        format = detect_rows_format(rows)
    if format not in FORMATS:
        raise DatasetError(f"unknown format {format!r}; known: {', '.join(FORMATS)}")
    mapping = mapping or ColumnMapping()
    root = Path(root)
    entries: list[Item | ItemError] = []
    seen_ids: set[str] = set()
    line = 0
    columns: set[str] = set()  # every column any row has, to name a `--map` column none has
    for line, row in enumerate(rows, start=1):
        if limit is not None and len(entries) >= limit:
            break
        if "__error__" in row:
            entries.append(ItemError(str(line), "row", row["__error__"]))
            continue
        columns.update(str(key) for key in row)
        try:
            raw = to_raw_item(format, row, line, mapping)
            if raw.id in seen_ids:
                raise ItemError(raw.id, "id", f"duplicate id (row {line})")
            seen_ids.add(raw.id)
            entries.append(build_item(raw, root, missing_images))
        except ItemError as error:
            entries.append(error)
    if line == 0:
        raise DatasetError(f"{Path(source).name} has no rows: there is nothing to render")
    _check_named_columns(mapping, columns, Path(source).name)
    return Dataset(path=Path(source), format=format, entries=tuple(entries))


def _check_named_columns(mapping: ColumnMapping, columns: set[str], name: str) -> None:
    """Refuse a `--map` column no row has, naming the field and listing the file's columns."""
    missing = mapping.missing_columns(columns)
    if not missing or not columns:
        return
    wrong = ", ".join(f"{field}={column!r}" for field, column in missing)
    listed = ", ".join(sorted(columns)[:40])
    more = f" and {len(columns) - 40} more" if len(columns) > 40 else ""
    raise DatasetError(f"--map {wrong}: {name} has no such column; its columns are {listed}{more}")
