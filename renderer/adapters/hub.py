"""Datasets as the Hub ships them: a folder of parquet shards, or a Hub id in the local cache.

A Hub dataset is a folder with one subfolder per config (MMMU: one per
subject; MMMU-Pro: `standard (10 options)`, `vision`, …) or a `data/` folder,
holding shards named `<split>-00000-of-00002.parquet`; a `README.md` with a
`configs:` header, when present, says which files make which config and
split. `--config` and `--split` pick one (`all` takes every config); with a
single config or split the choice is implied.

A Hub id (`MMMU/MMMU_Pro`) is resolved in the local Hugging Face cache, the
one `datasets.load_dataset` and `huggingface_hub` fill, without network
access: download it once with `datasets`, then it works offline.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from itemshot.renderer.adapters.formats import DatasetError

ALL_CONFIGS = "all"
_SHARD = re.compile(r"^(?P<split>[A-Za-z0-9_]+?)(?:[-_]\d{5}-of-\d{5})?(?:-[0-9a-f]+)?$")
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_DATA_SUFFIXES = (".parquet",)


@dataclass(frozen=True)
class HubSelection:
    """The parquet shards of one config and split of a Hub-style dataset."""

    root: Path
    config: str
    split: str
    files: tuple[Path, ...]


def is_hub_id(text: str) -> bool:
    """Return whether `text` looks like a Hub dataset id (`owner/name`), not a file path."""
    return bool(_HUB_ID.match(text)) and not Path(text).suffix


def _card_configs(root: Path) -> dict[str, dict[str, list[str]]]:
    """Return config → split → file patterns from a README.md `configs:` header, if any."""
    card = root / "README.md"
    if not card.is_file():
        return {}
    text = card.read_text(encoding="utf-8", errors="replace")
    if not text.startswith("---"):
        return {}
    import yaml  # only a dataset card needs it: kept off the CLI's start-up

    try:
        header = yaml.safe_load(text.split("---", 2)[1]) or {}
    except yaml.YAMLError:
        return {}
    configs: dict[str, dict[str, list[str]]] = {}
    for entry in header.get("configs") or []:
        if not isinstance(entry, Mapping) or "config_name" not in entry:
            continue
        splits: dict[str, list[str]] = {}
        data_files = entry.get("data_files") or []
        if isinstance(data_files, str):
            data_files = [{"split": "train", "path": data_files}]
        for item in data_files:
            if isinstance(item, Mapping) and "split" in item:
                paths = item.get("path") or []
                splits[str(item["split"])] = [paths] if isinstance(paths, str) else list(paths)
        configs[str(entry["config_name"])] = splits
    return configs


def _split_of(path: Path) -> str:
    match = _SHARD.match(path.stem)
    return match.group("split") if match else path.stem


def _layout_configs(root: Path) -> dict[str, dict[str, list[str]]]:
    """Return config → split → files inferred from folders and shard names."""
    configs: dict[str, dict[str, list[str]]] = {}
    for path in sorted(root.rglob("*")):
        if path.suffix not in _DATA_SUFFIXES or any(p.startswith(".") for p in path.parts):
            continue
        relative = path.relative_to(root)
        parents = relative.parts[:-1]
        if parents and parents[0] == "data":
            parents = parents[1:]
        config = "/".join(parents) or "default"
        configs.setdefault(config, {}).setdefault(_split_of(path), []).append(relative.as_posix())
    return configs


def _files(root: Path, patterns: Sequence[str]) -> list[Path]:
    every = [p.relative_to(root).as_posix() for p in sorted(root.rglob("*")) if p.is_file()]
    found: list[Path] = []
    for pattern in patterns:
        found += [root / name for name in every if fnmatch.fnmatch(name, pattern)]
    return found


def _choose(kind: str, wanted: str | None, available: Sequence[str], source: str) -> str:
    listed = ", ".join(repr(a) for a in available)
    if wanted is None:
        if len(available) == 1:
            return available[0]
        raise DatasetError(f"{source} has several {kind}s; choose one with --{kind}: {listed}")
    if wanted not in available:
        raise DatasetError(f"{source} has no {kind} {wanted!r}; available: {listed}")
    return wanted


def select(root: Path, config: str | None = None, split: str | None = None) -> HubSelection:
    """Return the shards of one config (or `all`) and split of the Hub-style folder `root`."""
    configs = _card_configs(root) or _layout_configs(root)
    if not configs:
        raise DatasetError(f"{str(root)!r} holds no parquet files")
    names = list(configs)
    chosen = names if config == ALL_CONFIGS else [_choose("config", config, names, str(root))]
    splits = sorted({s for name in chosen for s in configs[name]})
    split_name = _choose("split", split, splits, str(root))
    files: list[Path] = []
    for name in chosen:
        files += _files(root, configs[name].get(split_name, []))
    if not files:
        raise DatasetError(f"{str(root)!r}: config {config!r}, split {split_name!r} has no files")
    return HubSelection(root, config or chosen[0], split_name, tuple(files))


def cached_snapshot(repo_id: str) -> Path:
    """Return the local folder of a Hub dataset from the Hugging Face cache (no network)."""
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import LocalEntryNotFoundError
    except ImportError:
        raise DatasetError(
            f"{repo_id!r} looks like a Hub id; reading one needs `datasets` (pip install datasets)"
        ) from None
    try:
        folder = snapshot_download(repo_id, repo_type="dataset", local_files_only=True)
    except LocalEntryNotFoundError:
        raise DatasetError(
            f"Hub dataset {repo_id!r} is not in the local cache; download it once with "
            f"datasets.load_dataset({repo_id!r}, …) or give the folder it is in"
        ) from None
    return Path(folder)


def resolve(source: str | Path, config: str | None, split: str | None) -> HubSelection | None:
    """Return the shards a folder or Hub id names, or None for a single dataset file."""
    path = Path(source)
    if path.is_dir():
        return select(path, config, split)
    if path.is_file():
        if config is not None or split is not None:
            raise DatasetError("--config and --split apply to a dataset folder or Hub id")
        return None
    if is_hub_id(str(source)):
        return select(cached_snapshot(str(source)), config, split)
    raise DatasetError(f"dataset {str(source)!r} not found")


def rows_of(selection: HubSelection, read: Any) -> Any:
    """Yield the rows of every shard of a selection, in file order, through `read(path)`."""
    for path in selection.files:
        yield from read(path)
