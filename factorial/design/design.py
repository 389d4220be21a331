"""Design files: a YAML description of a factorial sweep, validated with errors naming the key.

A design names a dataset (path relative to the design file, a Hub id, or
`itemshot:sample` for the embedded sample dataset), the factors and their
levels (`format`, `n_options` and any presentation parameter), the design type
(`full`, `one_at_a_time`, `balanced`, `latin_square`), fixed presentation
settings, a seed and an output folder (relative to the current directory).
`held` may say, per factor, which nuisance measures its contrasts hold (the
confound check, `design.confounds`, holds them to it).
`with_dataset` swaps the dataset's path for one given on the command line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import yaml

from itemshot.factorial.design.sweep import FORMATS
from itemshot.renderer.adapters import FORMATS as DATASET_FORMATS
from itemshot.renderer.adapters import MISSING_POLICIES
from itemshot.renderer.adapters.hub import is_hub_id
from itemshot.renderer.measures import MEASURES
from itemshot.renderer.presentation import RANDOM, PresentationError, PresentationSpec
from itemshot.renderer.sample import sample_jsonl

FORMAT_LEVELS = FORMATS  # the control hierarchy, defined once in design.sweep
TEXT_FORMATS = ("blind", "standard")
OPTION_LEVELS = (4, 10, "all")
DESIGN_TYPES = ("full", "one_at_a_time", "balanced", "latin_square")
PRESENTATION_FACTORS = tuple(f.name for f in fields(PresentationSpec))
DEFAULT_LEVELS: dict[str, tuple[Any, ...]] = {"format": ("vision",), "n_options": ("all",)}

_TOP_KEYS = {
    "name",
    "description",
    "dataset",
    "design",
    "factors",
    "reference",
    "presentation",
    "seed",
    "out",
    "groups",
    "verify",
    "held",
}
_DATASET_KEYS = {"path", "format", "missing_images", "map", "limit", "config", "split"}
SAMPLE_DATASET = "itemshot:sample"  # a dataset path naming the embedded sample dataset


class DesignError(ValueError):
    """A design file that cannot be used; names the file and the key at fault."""

    def __init__(self, key: str, message: str, source: str = "design") -> None:
        self.key = key
        super().__init__(f"{source}: key {key!r}: {message}")


@dataclass(frozen=True)
class DatasetSpec:
    """Where the items come from and how to read them.

    `path` is a file, a Hub-style folder or a Hub id (`owner/name`, read from
    the local cache); `config` and `split` choose a Hub dataset's part.
    """

    path: Path
    format: str | None = None
    missing_images: str = "fail"
    mapping: Mapping[str, str] = field(default_factory=dict)
    limit: int | None = None
    config: str | None = None
    split: str | None = None


@dataclass(frozen=True)
class Design:
    """A validated design: factors in file order, each with its levels."""

    name: str
    dataset: DatasetSpec
    type: str
    factors: tuple[tuple[str, tuple[Any, ...]], ...]
    reference: Mapping[str, Any] = field(default_factory=dict)
    presentation: Mapping[str, Any] = field(default_factory=dict)
    seed: int = 0
    out: Path | None = None
    groups: tuple[int, ...] | None = None
    description: str = ""
    verify: bool = False  # verify the rendered images after the sweep
    # Per factor, the nuisance measures its contrasts hold (see design.confounds);
    # a factor not named here holds what its nature leaves unchanged.
    held: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def factor_names(self) -> tuple[str, ...]:
        """Return the factor names in design order."""
        return tuple(name for name, _ in self.factors)

    def levels(self, name: str) -> tuple[Any, ...]:
        """Return the levels of one factor."""
        return dict(self.factors)[name]


def load_design(path: str | Path) -> Design:
    """Read and validate a design file; raise DesignError naming the file and key."""
    path = Path(path)
    source = path.name
    if not path.is_file():
        raise DesignError("path", f"design file {str(path)!r} not found", source)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise DesignError("(file)", f"not valid YAML ({error})", source) from None
    return parse_design(raw, path.parent, source)


def with_dataset(design: Design, path: str | Path) -> Design:
    """Return `design` reading its items from `path` instead of its `dataset.path`.

    `path` is a file or folder (relative to the current directory), a Hub id or
    `itemshot:sample`; the design's other dataset settings still apply.
    """
    return replace(design, dataset=replace(design.dataset, path=dataset_path(str(path), Path())))


def dataset_path(path: str, base: Path) -> Path:
    """Return where a design's dataset `path` points: the sample, a Hub id, or a path under `base`."""
    if path == SAMPLE_DATASET:
        return sample_jsonl()
    resolved = Path(path) if Path(path).is_absolute() else base / path
    if not resolved.exists() and is_hub_id(path):
        return Path(path)  # a Hub id, read from the local cache
    return resolved


def parse_design(raw: Any, base: Path, source: str = "design") -> Design:
    """Return the Design for a parsed YAML mapping; relative dataset paths resolve against `base`."""
    if not isinstance(raw, Mapping):
        raise DesignError("(file)", "must be a mapping of keys", source)
    unknown = sorted(set(raw) - _TOP_KEYS)
    if unknown:
        raise DesignError(unknown[0], f"unknown key; known: {', '.join(sorted(_TOP_KEYS))}", source)
    name = raw.get("name") or Path(source).stem
    if not isinstance(name, str):
        raise DesignError("name", "must be text", source)
    design_type = raw.get("design", "full")
    if design_type not in DESIGN_TYPES:
        raise DesignError(
            "design", f"{design_type!r} is not one of {', '.join(DESIGN_TYPES)}", source
        )
    dataset = _dataset(raw.get("dataset"), base, source)
    factors = _factors(raw.get("factors"), source)
    presentation = _presentation(raw.get("presentation") or {}, factors, source)
    reference = _reference(raw.get("reference") or {}, factors, source)
    seed = raw.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise DesignError("seed", f"{seed!r} is not a whole number", source)
    out = raw.get("out")
    if out is not None and not isinstance(out, str):
        raise DesignError("out", "must be a folder path", source)
    groups = _groups(raw.get("groups"), design_type, factors, source)
    held = _held(raw.get("held"), factors, source)
    verify = raw.get("verify", False)
    if not isinstance(verify, bool):
        raise DesignError("verify", f"{verify!r} is not true or false", source)
    return Design(
        name=name,
        dataset=dataset,
        type=design_type,
        factors=factors,
        reference=reference,
        presentation=presentation,
        seed=seed,
        out=Path(out) if out else None,
        groups=groups,
        description=str(raw.get("description") or ""),
        verify=verify,
        held=held,
    )


def _dataset(value: Any, base: Path, source: str) -> DatasetSpec:
    if not isinstance(value, Mapping):
        raise DesignError("dataset", "must be a mapping with at least `path`", source)
    unknown = sorted(set(value) - _DATASET_KEYS)
    if unknown:
        raise DesignError(f"dataset.{unknown[0]}", "unknown key", source)
    path = value.get("path")
    if not isinstance(path, str) or not path:
        raise DesignError(
            "dataset.path", f"must be a file, folder, Hub id or {SAMPLE_DATASET!r}", source
        )
    fmt = value.get("format")
    if fmt is not None and fmt not in DATASET_FORMATS:
        raise DesignError(
            "dataset.format", f"{fmt!r} is not one of {', '.join(DATASET_FORMATS)}", source
        )
    missing = value.get("missing_images", "fail")
    if missing not in MISSING_POLICIES:
        raise DesignError(
            "dataset.missing_images",
            f"{missing!r} is not one of {', '.join(MISSING_POLICIES)}",
            source,
        )
    mapping = value.get("map") or {}
    if not isinstance(mapping, Mapping) or not all(isinstance(v, str) for v in mapping.values()):
        raise DesignError("dataset.map", "must map item fields to column names", source)
    limit = value.get("limit")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
        raise DesignError("dataset.limit", f"{limit!r} is not a positive whole number", source)
    choice: dict[str, str | None] = {}
    for key in ("config", "split"):
        chosen = value.get(key)
        if chosen is not None and (not isinstance(chosen, str) or not chosen):
            raise DesignError(f"dataset.{key}", "must be a name", source)
        choice[key] = chosen
    return DatasetSpec(dataset_path(path, base), fmt, missing, dict(mapping), limit, **choice)


def _factors(value: Any, source: str) -> tuple[tuple[str, tuple[Any, ...]], ...]:
    if value is None:
        value = {}
    if not isinstance(value, Mapping):
        raise DesignError("factors", "must map factor names to lists of levels", source)
    result: dict[str, tuple[Any, ...]] = {}
    for name, levels in value.items():
        key = f"factors.{name}"
        if name not in ("format", "n_options", *PRESENTATION_FACTORS):
            known = ", ".join(("format", "n_options", *PRESENTATION_FACTORS))
            raise DesignError(key, f"unknown factor; known: {known}", source)
        if not isinstance(levels, list):
            levels = [levels]
        if not levels:
            raise DesignError(key, "needs at least one level", source)
        if len(set(map(repr, levels))) != len(levels):
            raise DesignError(key, "repeats a level", source)
        for level in levels:
            _check_level(name, level, key, source)
        result[str(name)] = tuple(levels)
    for name, levels in DEFAULT_LEVELS.items():
        result.setdefault(name, levels)
    ordered = {"format": result.pop("format"), "n_options": result.pop("n_options"), **result}
    return tuple(ordered.items())


def _check_level(name: str, level: Any, key: str, source: str) -> None:
    if name == "format":
        if level not in FORMAT_LEVELS:
            raise DesignError(key, f"{level!r} is not one of {', '.join(FORMAT_LEVELS)}", source)
        return
    if name == "n_options":
        if level not in OPTION_LEVELS or isinstance(level, bool):
            raise DesignError(key, f"{level!r} is not one of 4, 10, all", source)
        return
    if level == RANDOM:
        raise DesignError(key, "`random` is not a level; put it under `presentation`", source)
    try:
        PresentationSpec(**{name: level}).check()
    except (PresentationError, TypeError) as error:
        raise DesignError(key, str(error), source) from None


def _presentation(value: Any, factors: Any, source: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise DesignError("presentation", "must map presentation fields to values", source)
    factor_names = {name for name, _ in factors}
    for name, level in value.items():
        key = f"presentation.{name}"
        if name not in PRESENTATION_FACTORS:
            raise DesignError(
                key, f"unknown field; known: {', '.join(PRESENTATION_FACTORS)}", source
            )
        if name in factor_names:
            raise DesignError(key, "is also a factor; give it in one place only", source)
        try:
            PresentationSpec(**{name: level}).check()
        except (PresentationError, TypeError) as error:
            raise DesignError(key, str(error), source) from None
    return dict(value)


def _reference(value: Any, factors: Any, source: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise DesignError("reference", "must map factor names to one of their levels", source)
    levels = dict(factors)
    chosen: dict[str, Any] = {}
    for name, level in value.items():
        if name not in levels:
            raise DesignError(f"reference.{name}", "is not a factor of this design", source)
        if level not in levels[name]:
            raise DesignError(f"reference.{name}", f"{level!r} is not one of its levels", source)
        chosen[name] = level
    return {name: chosen.get(name, values[0]) for name, values in levels.items()}


def _groups(value: Any, design_type: str, factors: Any, source: str) -> tuple[int, ...] | None:
    if value is None:
        return None
    if design_type != "latin_square":
        raise DesignError("groups", "applies to latin_square designs only", source)
    count = 1
    for _, levels in factors:
        count *= len(levels)
    if not isinstance(value, list) or not value:
        raise DesignError("groups", "must be a non-empty list of group numbers", source)
    for group in value:
        if not isinstance(group, int) or isinstance(group, bool) or not 0 <= group < count:
            raise DesignError("groups", f"{group!r} is not a group number 0..{count - 1}", source)
    return tuple(sorted(set(value)))


def _held(value: Any, factors: Any, source: str) -> dict[str, tuple[str, ...]]:
    """Return the design's `held` map: factor name to the nuisance measures it holds."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise DesignError("held", "must map factor names to lists of measures", source)
    names = {name for name, _ in factors}
    held: dict[str, tuple[str, ...]] = {}
    for name, measures in value.items():
        key = f"held.{name}"
        if name not in names:
            raise DesignError(key, "is not a factor of this design", source)
        if not isinstance(measures, list) or not all(isinstance(m, str) for m in measures):
            raise DesignError(key, f"must be a list of measures: {', '.join(MEASURES)}", source)
        unknown = [m for m in measures if m not in MEASURES]
        if unknown:
            raise DesignError(key, f"{unknown[0]!r} is not one of {', '.join(MEASURES)}", source)
        held[str(name)] = tuple(measures)
    return held
